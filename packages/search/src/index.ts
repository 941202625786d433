import type { Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import { CombinedProvider } from './combined';
import { OwnIndexProvider } from './own-index';
import { SearxngProvider, type SearxngConfig } from './searxng';
import type { SearchProvider, SearchQuery, SearchResults } from './types';

export * from './types';
export { parseTbs } from './tbs';
export { SearxngProvider, SEARXNG_JSON_DISABLED, type SearxngConfig } from './searxng';
export { OwnIndexProvider } from './own-index';
export { CombinedProvider } from './combined';

/**
 * Which provider answers (WDS_SEARCH_PROVIDER): `auto` = SearXNG when SEARXNG_ENDPOINT is set,
 * else the own index; `index`; `searxng`; `both` (the own index first, then SearXNG).
 */
export const SEARCH_PROVIDER_CHOICES = ['auto', 'index', 'searxng', 'both'] as const;
export type SearchProviderChoice = (typeof SEARCH_PROVIDER_CHOICES)[number];

export interface SearchSettings {
  provider: SearchProviderChoice;
  /** Set when SEARXNG_ENDPOINT is. */
  searxng: SearxngConfig | null;
  /** Every team searches every team's pages in the own index (WDS_SEARCH_SHARED_INDEX). */
  sharedIndex: boolean;
}

/** The provider the settings name; throws (a configuration error) when SearXNG is chosen without an endpoint. */
export function createSearchProvider(db: Db, s: SearchSettings): SearchProvider {
  const index = () => new OwnIndexProvider(db, { shared: s.sharedIndex });
  const searxng = () => {
    if (!s.searxng) throw new Error(`WDS_SEARCH_PROVIDER=${s.provider} needs SEARXNG_ENDPOINT`);
    return new SearxngProvider(s.searxng);
  };
  switch (s.provider) {
    case 'index':
      return index();
    case 'searxng':
      return searxng();
    case 'both':
      return new CombinedProvider([index(), searxng()]);
    default:
      return s.searxng ? searxng() : index();
  }
}

/**
 * Runs a search under a deadline: the provider's signal aborts at `timeoutMs`, and a provider
 * that does not return by then is answered with 408 anyway. This is the function other features
 * call (extract's enableWebSearch, the agent): a query in, results per source out.
 */
export async function runSearch(provider: SearchProvider, q: SearchQuery, timeoutMs: number): Promise<SearchResults> {
  const ctl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ctl.abort();
      reject(new WdsError('REQUEST_TIMEOUT', { message: `Request timed out: the search did not finish within ${timeoutMs} ms`, code: 'SEARCH_TIMEOUT' }));
    }, timeoutMs);
  });
  try {
    return await Promise.race([provider.search(q, ctl.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Firecrawl's search price: 2 credits per 10 results (rounded up), before any scraping of them. */
export function searchCredits(results: number): number {
  return Math.ceil(results / 10) * 2;
}

/**
 * Whether a result URL is one the other endpoints accept (`ignoreInvalidURLs`): an absolute
 * http(s) URL with a host, no credentials, within the URL length they take.
 */
export function usableUrl(url: string): boolean {
  if (url.length > 8_192) return false;
  try {
    const u = new URL(url);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0 && !u.username && !u.password;
  } catch {
    return false;
  }
}
