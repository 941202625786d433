import { mayStoreInCache, effectiveMaxAge, type ScrapeOptions } from '@wds/contracts';
import { findCachedPage, storeCachedPage, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import { acceptLanguage, buildDocument, fetchPage, scrapeCacheKey, type BuiltDocument } from '@wds/scraper';

/**
 * One page, start to finish, as scrape and crawl activities share it: (cache) → fetch →
 * build formats → store in the cache. No Temporal here; callers pass the abort signal.
 */
export interface PageDeps {
  db: Db;
  allowPrivateNetwork: boolean;
  maxBodyBytes: number;
}

export interface PageRequest {
  url: string;
  options: ScrapeOptions;
  scrapeId: string;
  signal?: AbortSignal;
  /** Consult the page cache first (crawls do; single scrapes were already looked up by the API). */
  useCache?: boolean;
  collectLinks?: boolean;
  /** Sleep before fetching (waitFor); injected so activities can use a cancellable sleep. */
  sleep?: (ms: number) => Promise<void>;
}

export interface PageResult extends BuiltDocument {
  statusCode: number;
}

/** Request headers: the caller's, plus Accept-Language from `location` unless they set one. */
export function requestHeaders(o: Pick<ScrapeOptions, 'headers' | 'location'>): Record<string, string> | undefined {
  const headers = { ...(o.headers ?? {}) };
  const hasLang = Object.keys(headers).some((h) => h.toLowerCase() === 'accept-language');
  if (o.location && !hasLang) headers['Accept-Language'] = acceptLanguage(o.location);
  return Object.keys(headers).length ? headers : undefined;
}

export async function scrapeOnePage(deps: PageDeps, req: PageRequest): Promise<PageResult> {
  const o = req.options;
  const keyed = { ...o, url: req.url };
  if (req.useCache && !o.headers && !o.actions?.length && effectiveMaxAge(o) > 0) {
    const hit = await findCachedPage(deps.db, scrapeCacheKey(keyed), { maxAgeMs: effectiveMaxAge(o) });
    if (hit) {
      const built = buildDocument(
        { requestedUrl: req.url, finalUrl: hit.finalUrl, statusCode: hit.statusCode, contentTypeHeader: hit.contentType, body: hit.body, charset: hit.charset },
        o,
        { scrapeId: req.scrapeId, engine: hit.engine, cache: { state: 'hit', cachedAt: hit.fetchedAt }, collectLinks: req.collectLinks },
      );
      return { ...built, statusCode: hit.statusCode };
    }
  }

  const started = Date.now();
  if (o.waitFor > 0) await (req.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(o.waitFor);
  const page = await fetchPage({
    url: req.url,
    headers: requestHeaders(o),
    timeoutMs: Math.max(1, o.timeout - (Date.now() - started)),
    skipTlsVerification: o.skipTlsVerification,
    allowPrivateNetwork: deps.allowPrivateNetwork,
    maxBodyBytes: deps.maxBodyBytes,
    signal: req.signal,
  }).catch((e) => {
    // The user's timeout is spent: another attempt could only answer later than asked.
    if (e instanceof WdsError && e.kind === 'REQUEST_TIMEOUT') throw new WdsError('REQUEST_TIMEOUT', { message: e.message, code: e.code, retryable: false });
    throw e;
  });
  const contentTypeHeader = page.headers['content-type'] ?? '';
  const built = buildDocument(
    { requestedUrl: req.url, finalUrl: page.finalUrl, statusCode: page.statusCode, contentTypeHeader, body: page.body },
    o,
    { scrapeId: req.scrapeId, engine: 'http', cache: { state: 'miss' }, collectLinks: req.collectLinks },
  );
  // Server errors are transient by nature: never serve them from the cache.
  if (mayStoreInCache(o) && page.statusCode < 500) {
    await storeCachedPage(deps.db, scrapeCacheKey(keyed), {
      url: req.url,
      finalUrl: page.finalUrl,
      statusCode: page.statusCode,
      contentType: contentTypeHeader,
      charset: built.charset,
      body: page.body,
      engine: 'http',
    });
  }
  return { ...built, statusCode: page.statusCode };
}
