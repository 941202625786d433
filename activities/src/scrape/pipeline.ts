import { changeTrackingOf, effectiveMaxAge, effectiveWaitFor, mayStoreInCache, withLlmInputs, type ScrapeOptions } from '@wds/contracts';
import { addCachedOutputs, cacheEntryOf, findCachedPage, storeCacheEntry, type CacheEntry, type CachedPageRead, type Db } from '@wds/db';
import { WdsError, ScrapeCodes } from '@wds/errors';
import { cacheLookups, startScrapeTimer } from '@wds/metrics';
import { buildDocumentAsync, buildFromCache, cacheReadNeedsBody, needsPdfConversion, outputsVariant, storedFormatsNeeded, type AsyncBuildContext, type BuiltDocument, type PageContent } from '@wds/documents';
import { acceptLanguage, assertUrlAllowed, fetchPage, originGate, scrapeCacheKey, threatUrlCheck, type FetchedPage, type PolitenessHints } from '@wds/fetch';
import type { ScrapeCacheLookup } from '@wds/workflows/scrape';
import { withDocumentSlot } from '../parse/slots';
import type { FetchValidators } from '../changes/track-document';
import { hashBody, validatorsOf } from '@wds/changes';

/**
 * One page, start to finish, as scrape and crawl activities share it: (cache) → fetch →
 * build formats (PDFs converted here, on the worker) → store in the cache. No Temporal here;
 * callers pass the abort signal.
 */
export interface PageDeps {
  db: Db;
  allowPrivateNetwork: boolean;
  maxBodyBytes: number;
  /** An LLM is configured in this deployment: the optional model work (redactPII model pass, branding personality) runs. */
  llmAvailable?: boolean;
}

export interface PageRequest {
  url: string;
  options: ScrapeOptions;
  scrapeId: string;
  signal?: AbortSignal;
  /**
   * Consult the page cache first. `true`: crawls, with the request's maxAge. A lookup: a single
   * scrape whose cache hit the API left to the worker (PDF conversion), with the API's window.
   * Single scrapes otherwise were already looked up by the API.
   */
  useCache?: boolean | ScrapeCacheLookup;
  collectLinks?: boolean;
  /** Sleep before fetching (waitFor); injected so activities can use a cancellable sleep. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * With `escalateIf`: a cache miss goes to the browser at once, without the HTTP fetch (crawl
   * pages of an origin the job knows to be script-rendered).
   */
  browserOnMiss?: boolean;
  /**
   * A rule of the caller's on top of threat protection, called with the URL and every redirect
   * hop before each is requested, and with a cached copy's final URL: throws (a WdsError) to
   * refuse the page (an agent's strictConstrainToURLs).
   */
  checkUrl?: (url: URL) => void;
  /** With `useCache: true`: the caller already knows the page has no fresh entry (a crawl asks per claim: crawl/cache-hints.ts); no lookup. */
  cacheKnownMiss?: boolean;
  /**
   * A fetched page's cache row comes back as `cacheEntry` instead of being written here: the
   * caller writes it with what else it stores (a crawl's page group), or itself.
   */
  deferCacheWrite?: boolean;
  /** What the request adds to its origin's politeness budget (a crawl's robots.txt Crawl-delay). */
  politeness?: PolitenessHints;
  /**
   * A 429/503 that put the origin in backoff: `retry` fetches again once the backoff ends, if that
   * is within the timeout (single scrapes); `defer` answers `{ backedOff }` without building
   * anything, for the caller to try the page later (crawl and batch pages). Unset: the answer is the page.
   */
  onBackoff?: 'retry' | 'defer';
}

export interface PageResult extends BuiltDocument {
  statusCode: number;
  /** Change tracking only: the fetched body's hash and validators (absent for cache hits and renders). */
  fetched?: FetchValidators;
  /** With `deferCacheWrite`: the page cache row to write (absent when the page is not to be cached). */
  cacheEntry?: CacheEntry;
}

/** The fetched page should be rendered by the browser instead (see `escalateIf`); nothing was built or cached. */
export interface EscalatedPage {
  needsBrowser: true;
  statusCode: number;
}

/** `onBackoff: 'defer'`: the site answered 429/503 and is in backoff until `retryAtMs`; nothing was built or cached. */
export interface BackedOffPage {
  backedOff: true;
  statusCode: number;
  retryAtMs: number;
}

/** Answers that ask the site to slow down: the origin backs off (@wds/fetch politeness). */
export const isBackoffStatus = (status: number) => status === 429 || status === 503;
/**
 * Fetches of one single scrape whose site answered 429/503 with Retry-After: the first and two
 * after the windows it named. Without Retry-After the answer is the page (a site that is simply
 * down should not cost the caller its whole timeout); the origin backs off for later requests either way.
 */
const MAX_BACKOFF_FETCHES = 3;

/** Until when a fetched page's origin backs off (0: it does not), as this worker knows it. */
export function backoffOf(page: Pick<FetchedPage, 'statusCode' | 'finalUrl'>): number {
  return isBackoffStatus(page.statusCode) ? (originGate()?.retryAt(new URL(page.finalUrl).origin) ?? 0) : 0;
}

/**
 * Decides on a freshly fetched page, before formats are built, whether the browser engine
 * should produce it instead (e.g. `looksClientRendered`), within `timeoutMs` (what is left of
 * the request's budget). Never consulted for cache hits.
 */
export type EscalateIf = (page: PageContent, timeoutMs: number) => Promise<boolean>;

/** Request headers: the caller's, plus Accept-Language from `location` unless they set one. */
export function requestHeaders(o: Pick<ScrapeOptions, 'headers' | 'location'>): Record<string, string> | undefined {
  const headers = { ...(o.headers ?? {}) };
  const hasLang = Object.keys(headers).some((h) => h.toLowerCase() === 'accept-language');
  if (o.location && !hasLang) headers['Accept-Language'] = acceptLanguage(o.location);
  return Object.keys(headers).length ? headers : undefined;
}

/** Formats of a page; PDF conversion waits for a document slot, all within the request's remaining budget. */
export async function buildPage(page: PageContent, requested: ScrapeOptions, ctx: Omit<AsyncBuildContext, 'timeoutMs'>, deadline: number): Promise<BuiltDocument> {
  const o = withLlmInputs(requested, ctx.llm);
  const left = () => Math.max(1, deadline - Date.now());
  if (!needsPdfConversion(page, o)) return buildDocumentAsync(page, o, { ...ctx, timeoutMs: left() });
  return withDocumentSlot(left(), ctx.signal, (timeoutMs) => buildDocumentAsync(page, o, { ...ctx, timeoutMs }));
}

/** Two `checkUrl` hooks as one (either may be absent): both must let the URL through. */
export function combinedUrlChecks(a: ((u: URL) => void) | undefined, b: ((u: URL) => void) | undefined): ((u: URL) => void) | undefined {
  if (!a || !b) return a ?? b;
  return (u) => {
    a(u);
    b(u);
  };
}

/** The page cache key of a URL fetched with these options. */
export const pageCacheKey = (o: ScrapeOptions, url: string) => scrapeCacheKey({ ...o, url });

/**
 * Whether pages scraped with `useCache: true` and these options read the cache (a crawl's do
 * unless the options change what the page says or ask for it now). Change tracking never reads
 * the cache: it compares what the page says now.
 */
export const readsCache = (o: ScrapeOptions) => !o.headers && !o.actions?.length && effectiveMaxAge(o) > 0 && !changeTrackingOf(o);

async function cachedPage(deps: PageDeps, req: PageRequest, key: string): Promise<CachedPageRead | null> {
  const o = withLlmInputs(req.options, deps.llmAvailable);
  // The stored outputs of the request's conversion options come along; the body only when they do not serve it.
  const want = { variant: outputsVariant(o), formats: storedFormatsNeeded(o, req.collectLinks), needBody: cacheReadNeedsBody(o) };
  if (req.useCache === true) {
    if (!readsCache(o) || req.cacheKnownMiss) return null;
    return findCachedPage(deps.db, key, { maxAgeMs: effectiveMaxAge(o) }, want);
  }
  if (!req.useCache) return null;
  const hit = await findCachedPage(deps.db, key, { maxAgeMs: req.useCache.maxAgeMs, minAgeMs: req.useCache.minAgeMs }, want);
  // The copy the API saw may have been replaced or expired since; cache-only requests then miss as the spec says.
  if (!hit && req.useCache.onMiss === 'lockdown') {
    throw new WdsError('NOT_FOUND', { code: ScrapeCodes.LOCKDOWN_CACHE_MISS, message: 'No cached copy of this page exists; lockdown mode makes no outbound request.' });
  }
  if (!hit && req.useCache.onMiss === 'minAge') {
    throw new WdsError('NOT_FOUND', { code: ScrapeCodes.NO_CACHED_DATA, message: 'No cached data matches minAge for this URL.' });
  }
  return hit;
}

/** A cache hit: served from its stored outputs, else converted (PDFs in a document slot) and the new outputs stored. */
async function buildHit(deps: PageDeps, req: PageRequest, key: string, hit: CachedPageRead, deadline: number): Promise<BuiltDocument> {
  const o = withLlmInputs(req.options, deps.llmAvailable);
  const ctx = { scrapeId: req.scrapeId, engine: hit.engine, cache: { state: 'hit' as const, cachedAt: hit.fetchedAt }, collectLinks: req.collectLinks, signal: req.signal, llm: deps.llmAvailable };
  if (hit.body && needsPdfConversion({ contentTypeHeader: hit.contentType, body: hit.body }, o)) {
    return buildPage({ requestedUrl: req.url, finalUrl: hit.finalUrl, statusCode: hit.statusCode, contentTypeHeader: hit.contentType, body: hit.body, charset: hit.charset }, req.options, ctx, deadline);
  }
  const { built, added } = await buildFromCache(req.url, hit, o, { ...ctx, timeoutMs: Math.max(1, deadline - Date.now()) });
  if (added) await addCachedOutputs(deps.db, key, hit.fetchedAt, outputsVariant(o), added);
  return built;
}

export async function scrapeOnePage(deps: PageDeps, req: PageRequest): Promise<PageResult> {
  return (await scrapeOrEscalate(deps, req)) as PageResult;
}

/**
 * scrapeOnePage, but a fetched page for which `escalateIf` says yes comes back as `{ needsBrowser }`
 * (and, with `onBackoff: 'defer'`, a 429/503 that put its site in backoff as `{ backedOff }`).
 */
export async function scrapeOrEscalate(deps: PageDeps, req: PageRequest & { onBackoff?: 'retry' }, escalateIf?: EscalateIf): Promise<PageResult | EscalatedPage>;
export async function scrapeOrEscalate(deps: PageDeps, req: PageRequest, escalateIf?: EscalateIf): Promise<PageResult | EscalatedPage | BackedOffPage>;
export async function scrapeOrEscalate(deps: PageDeps, req: PageRequest, escalateIf?: EscalateIf): Promise<PageResult | EscalatedPage | BackedOffPage> {
  // Metrics: engine is `cache` for hits, `http` otherwise; escalations to the browser are not timed here.
  const done = startScrapeTimer();
  const state = { engine: 'http' as 'http' | 'cache' };
  try {
    const r = await scrapeOrEscalateUntimed(deps, req, state, escalateIf);
    if (!('needsBrowser' in r) && !('backedOff' in r)) done(state.engine, 'success');
    return r;
  } catch (e) {
    if (!req.signal?.aborted) done(state.engine, 'error');
    throw e;
  }
}

async function scrapeOrEscalateUntimed(deps: PageDeps, req: PageRequest, state: { engine: 'http' | 'cache' }, escalateIf?: EscalateIf): Promise<PageResult | EscalatedPage | BackedOffPage> {
  const o = req.options;
  const started = Date.now();
  const deadline = started + o.timeout;
  const key = pageCacheKey(o, req.url);
  const hit = await cachedPage(deps, req, key);
  if (req.useCache) cacheLookups.inc({ result: hit ? 'hit' : 'miss', source: 'worker' });
  if (hit) {
    // Threat protection re-checks where the cached copy came from (a redirect onto a blocked site is never served).
    assertUrlAllowed(hit.finalUrl, o.threatProtection);
    req.checkUrl?.(new URL(hit.finalUrl));
    state.engine = 'cache';
    return { ...(await buildHit(deps, req, key, hit, deadline)), statusCode: hit.statusCode };
  }

  // Status 0: nothing was fetched.
  if (req.browserOnMiss && escalateIf) return { needsBrowser: true, statusCode: 0 };
  const waitFor = effectiveWaitFor(o);
  if (waitFor > 0) await (req.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(waitFor);
  const fetchOnce = () =>
    fetchPage({
      url: req.url,
      headers: requestHeaders(o),
      timeoutMs: Math.max(1, deadline - Date.now()),
      skipTlsVerification: o.skipTlsVerification,
      allowPrivateNetwork: deps.allowPrivateNetwork,
      maxBodyBytes: deps.maxBodyBytes,
      signal: req.signal,
      // Threat protection (and the caller's rule): the URL and every redirect hop, before each is requested.
      checkUrl: combinedUrlChecks(threatUrlCheck(o.threatProtection), req.checkUrl),
      politeness: req.politeness,
    }).catch((e) => {
      // The user's timeout is spent: another attempt could only answer later than asked.
      if (e instanceof WdsError && e.kind === 'REQUEST_TIMEOUT') throw new WdsError('REQUEST_TIMEOUT', { message: e.message, code: e.code, retryable: false });
      throw e;
    });
  let page = await fetchOnce();
  let waitedMs = page.politenessWaitMs ?? 0;
  // A single scrape whose site asked it to slow down asks again once the backoff ends, within its timeout.
  for (let n = 1; req.onBackoff === 'retry' && n < MAX_BACKOFF_FETCHES; n++) {
    const retryAt = page.headers['retry-after'] ? backoffOf(page) : 0;
    if (!retryAt || retryAt >= deadline - 250) break;
    const again = await fetchOnce().catch((e) => {
      if (e instanceof WdsError && e.kind === 'REQUEST_TIMEOUT') return null; // no time left after all: the answer is the one in hand
      throw e;
    });
    if (!again) break;
    page = again;
    waitedMs += page.politenessWaitMs ?? 0;
  }
  if (req.onBackoff === 'defer') {
    const retryAtMs = backoffOf(page);
    if (retryAtMs) return { backedOff: true, statusCode: page.statusCode, retryAtMs };
  }
  const contentTypeHeader = page.headers['content-type'] ?? '';
  const content: PageContent = { requestedUrl: req.url, finalUrl: page.finalUrl, statusCode: page.statusCode, contentTypeHeader, body: page.body };
  if (escalateIf && (await escalateIf(content, Math.max(1, deadline - Date.now())))) return { needsBrowser: true, statusCode: page.statusCode };
  const built = await buildPage(content, o, { scrapeId: req.scrapeId, engine: 'http', cache: { state: 'miss' }, collectLinks: req.collectLinks, signal: req.signal, llm: deps.llmAvailable }, deadline);
  if (waitedMs) built.document.metadata.politenessWaitMs = waitedMs;
  // Server errors and "too many requests" are transient by nature: never serve them from the cache.
  const cacheEntry =
    mayStoreInCache(o) && page.statusCode < 500 && page.statusCode !== 429
      ? await cacheEntryOf(key, {
          url: req.url,
          finalUrl: page.finalUrl,
          statusCode: page.statusCode,
          contentType: contentTypeHeader,
          charset: built.charset,
          body: page.body,
          engine: 'http',
          // What this conversion produced: a later hit with the same options is served from it.
          outputs: built.outputs && { variant: outputsVariant(withLlmInputs(o, deps.llmAvailable)), formats: built.outputs },
        })
      : undefined;
  if (cacheEntry && !req.deferCacheWrite) await storeCacheEntry(deps.db, cacheEntry);
  // Hashing the body costs only requests that track changes.
  const fetched = changeTrackingOf(o) ? { bodyHash: hashBody(page.body), ...validatorsOf(page.headers) } : undefined;
  return { ...built, statusCode: page.statusCode, ...(fetched ? { fetched } : {}), ...(cacheEntry && req.deferCacheWrite ? { cacheEntry } : {}) };
}
