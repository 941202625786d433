import { createHash } from 'node:crypto';

/**
 * Normalised URL used for cache lookups (and later crawl dedup): lower-case scheme and host,
 * default port dropped, fragment dropped, empty path as "/". The query string is kept as sent,
 * since servers may treat parameter order as meaningful.
 */
export function normalizeUrl(raw: string): string {
  const u = new URL(raw);
  u.hash = '';
  if ((u.protocol === 'http:' && u.port === '80') || (u.protocol === 'https:' && u.port === '443')) u.port = '';
  return u.toString();
}

/** Options that change what the target sends back (or what a browser renders) are part of the key. */
export interface CacheVariant {
  mobile?: boolean;
  country?: string;
  languages?: string[];
  waitFor?: number;
  blockAds?: boolean;
  proxy?: string;
}

export function cacheKey(url: string, v: CacheVariant): string {
  const variant = JSON.stringify([
    v.mobile ?? false,
    v.country ?? 'US',
    v.languages ?? [],
    v.waitFor ?? 0,
    v.blockAds ?? true,
    v.proxy === 'enhanced' || v.proxy === 'stealth' ? 'enhanced' : 'basic',
  ]);
  return createHash('sha256').update(normalizeUrl(url)).update('\n').update(variant).digest('hex');
}

/** The cache key of a scrape request; the one place API (lookups) and worker (stores) agree on. */
export function scrapeCacheKey(o: {
  url: string;
  mobile?: boolean;
  location?: { country?: string; languages?: string[] };
  waitFor?: number;
  blockAds?: boolean;
  proxy?: string;
}): string {
  return cacheKey(o.url, {
    mobile: o.mobile,
    country: o.location?.country,
    languages: o.location?.languages,
    waitFor: o.waitFor,
    blockAds: o.blockAds,
    proxy: o.proxy,
  });
}
