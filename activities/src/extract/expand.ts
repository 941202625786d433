import { mapRequestSchema, type StoredExtractOptions } from '@wds/contracts';
import { baseDomain, crawlUrlKey } from '@wds/crawl';
import { enqueueUrls, type FrontierEntry } from '@wds/db';
import type { DiscoveryDeps } from '../crawl/discovery';
import { mapSite } from '../map/activities';

/** Links map is asked for per wildcard, relative to the pages the job may still fetch. */
const MAP_FACTOR = 4;
const MAP_MAX = 20_000;

/**
 * The extract's seed step: each wildcard URL (`https://site/*`, `https://site/docs/*`) is
 * expanded through the map engine (sitemaps, the start page's links, pages already seen) and
 * the URLs its pattern matches join the frontier after the named ones, at depth 1 (so the merge
 * can rank named pages first). The page limit is enforced when URLs are claimed; enqueueing is
 * idempotent, so a retried step adds nothing twice.
 */
export async function expandWildcards(deps: DiscoveryDeps, jobId: string, o: StoredExtractOptions, signal?: AbortSignal): Promise<number> {
  let added = 0;
  for (const pattern of o.wildcards) {
    const glob = compileWildcard(pattern, o.includeSubdomains);
    const req = mapRequestSchema.parse({
      url: glob.base,
      sitemap: o.ignoreSitemap ? 'skip' : 'include',
      includeSubdomains: o.includeSubdomains,
      limit: Math.min(o.maxPages * MAP_FACTOR, MAP_MAX),
    });
    const links = await mapSite(deps, req, signal);
    const entries: FrontierEntry[] = [];
    for (const { url } of links) {
      if (entries.length >= o.maxPages) break;
      if (glob.matches(url)) entries.push({ url, key: crawlUrlKey(url), depth: 1, external: false });
    }
    added += await enqueueUrls(deps.db, jobId, entries);
  }
  return added;
}

export interface Wildcard {
  /** Where map starts: the URL up to the path segment holding the first `*`. */
  base: string;
  matches(url: string): boolean;
}

/**
 * `*` matches any run of characters in the path (and query); the host must be the pattern's,
 * or one of its site's subdomains with `includeSubdomains` (as map decides what the site is).
 */
export function compileWildcard(pattern: string, includeSubdomains: boolean): Wildcard {
  const u = new URL(pattern);
  const pathAndQuery = decoded(u);
  const star = pathAndQuery.indexOf('*');
  const dir = pathAndQuery.slice(0, star).replace(/[^/]*$/, '');
  const re = new RegExp(`^${pathAndQuery.split('*').map(escapeRe).join('.*')}$`, 'i');
  const host = u.hostname.toLowerCase().replace(/^www\./, '');
  const site = baseDomain(host);
  const hostOk = (h: string) => {
    const x = h.toLowerCase().replace(/^www\./, '');
    return x === host || (includeSubdomains && (x === site || x.endsWith(`.${site}`)));
  };
  return {
    base: `${u.origin}${dir || '/'}`,
    matches(url: string) {
      let v: URL;
      try {
        v = new URL(url);
      } catch {
        return false;
      }
      if (!hostOk(v.hostname)) return false;
      const path = decoded(v);
      // `https://site/docs/*` also means the section's own page, `/docs/` and `/docs`.
      return re.test(path) || (star === pathAndQuery.length - 1 && re.test(`${path.replace(/\/$/, '')}/`));
    },
  };
}

function decoded(u: URL): string {
  try {
    return decodeURIComponent(u.pathname) + decodeURIComponent(u.search);
  } catch {
    return u.pathname + u.search;
  }
}

function escapeRe(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}
