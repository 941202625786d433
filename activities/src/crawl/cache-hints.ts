import { effectiveMaxAge, type ScrapeOptions } from '@wds/contracts';
import { freshCacheKeys, type ClaimedUrl, type Db } from '@wds/db';
import { pageCacheKey, readsCache } from '../scrape/pipeline';

/**
 * Which of a fetch batch's claimed URLs have a fresh page cache entry, asked once per claim
 * (freshCacheKeys) instead of once per page: a page whose URL had none skips its own lookup
 * (`cacheKnownMiss`), so a crawl of pages nobody cached costs Postgres one statement per claim.
 * A page whose answer is not there (no claim asked, or the question failed) looks itself up as
 * before; so does a page whose URL has an entry. An entry written between the question and the
 * page is missed, as it would be by a lookup a moment earlier: the page is fetched.
 */
export interface CacheHints {
  claimed(urls: ClaimedUrl[]): void;
  /** Whether the page's URL is known to have no fresh entry (answers once per claim of the URL). */
  knownMiss(u: ClaimedUrl): Promise<boolean>;
}

export function cacheHints(db: Db, o: ScrapeOptions): CacheHints | null {
  if (!readsCache(o)) return null;
  const asked = new Map<string, Promise<boolean>>();
  return {
    claimed(urls) {
      const keys = new Map(urls.map((u) => [u.key, pageCacheKey(o, u.url)]));
      const fresh = freshCacheKeys(db, [...keys.values()], effectiveMaxAge(o)).catch(() => null);
      for (const [urlKey, cacheKey] of keys) asked.set(urlKey, fresh.then((f) => !!f && !f.has(cacheKey)));
    },
    async knownMiss(u) {
      const answer = asked.get(u.key);
      asked.delete(u.key);
      return answer ? answer : false;
    },
  };
}
