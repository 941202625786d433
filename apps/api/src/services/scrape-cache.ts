import { browserOnlyFeatures, changeTrackingOf, effectiveMaxAge, mediaWork, needsLlm, type ScrapeDocument, type ScrapeUrlRequest } from '@wds/contracts';
import { addCachedOutputs, findCachedPage, type Db } from '@wds/db';
import { WdsError, ScrapeCodes } from '@wds/errors';
import { buildFromCache, cacheReadNeedsBody, needsPdfConversion, outputsVariant, storedFormatsNeeded } from '@wds/documents';
import { assertUrlAllowed, scrapeCacheKey } from '@wds/fetch';
import { cacheLookups } from '@wds/metrics';
import type { ScrapeCacheLookup } from '@wds/workflows/scrape';

/** Whether the request may only be answered from the cache (spec: minAge, lockdown). */
export const isCacheOnly = (o: ScrapeUrlRequest) => o.lockdown || o.minAge !== undefined;

export type CacheAnswer =
  | { document: ScrapeDocument; creditsUsed: number; worker?: undefined }
  /** A hit whose formats are built on a worker (PDF conversion is too heavy for the API; models are called by workers). */
  | { worker: ScrapeCacheLookup };

/**
 * The cache rules of the spec: a copy younger than maxAge is served with no outbound request;
 * with minAge only copies at least that old count and a miss is 404 SCRAPE_NO_CACHED_DATA;
 * lockdown never goes out (default maxAge 2 years) and a miss is 404 SCRAPE_LOCKDOWN_CACHE_MISS.
 * Returns null when the request should go to a fresh scrape.
 */
export async function answerFromCache(db: Db, o: ScrapeUrlRequest, scrapeId: string, llmAvailable = false): Promise<CacheAnswer | null> {
  // Screenshots, actions and profiles come from a live render and the cache holds only the page,
  // so such requests go to a fresh scrape — unless they asked for the cache only (lockdown/minAge).
  if (!isCacheOnly(o) && browserOnlyFeatures({ ...o, mobile: false }).length) return null;
  // Change tracking compares what the page says now (Firecrawl: it bypasses the cache; maxAge is ignored).
  if (changeTrackingOf(o)) return null;
  const maxAgeMs = o.minAge !== undefined && o.maxAge === undefined ? undefined : effectiveMaxAge(o);
  const consult = isCacheOnly(o) || (maxAgeMs ?? 1) > 0;
  const key = scrapeCacheKey(o);
  const variant = outputsVariant(o);
  const hit = consult ? await findCachedPage(db, key, { maxAgeMs, minAgeMs: o.minAge }, { variant, formats: storedFormatsNeeded(o), needBody: cacheReadNeedsBody(o) }) : null;
  if (consult) cacheLookups.inc({ result: hit ? 'hit' : 'miss', source: 'api' });
  if (!hit) {
    if (o.lockdown) {
      throw new WdsError('NOT_FOUND', { code: ScrapeCodes.LOCKDOWN_CACHE_MISS, message: 'No cached copy of this page exists; lockdown mode makes no outbound request.' });
    }
    if (o.minAge !== undefined) {
      throw new WdsError('NOT_FOUND', { code: ScrapeCodes.NO_CACHED_DATA, message: 'No cached data matches minAge for this URL.' });
    }
    return null;
  }
  // Threat protection: a copy that a redirect brought from a blocked site is never served.
  assertUrlAllowed(hit.finalUrl, o.threatProtection);
  // PDF conversion, model calls and media extraction belong on workers (the API never calls the model). Stored
  // outputs exist for HTML pages only; without them the body was read and tells what the page is.
  if (needsLlm(o, llmAvailable) || mediaWork(o).length || (hit.body && needsPdfConversion({ contentTypeHeader: hit.contentType, body: hit.body }, o))) {
    // The worker reads the same cache window itself; only ids and this small record travel.
    return { worker: { maxAgeMs, minAgeMs: o.minAge, onMiss: o.lockdown ? 'lockdown' : o.minAge !== undefined ? 'minAge' : 'fetch' } };
  }
  // Served from the entry's stored outputs when they hold the formats; else converted on a
  // transform thread when the API has them (WDS_TRANSFORM_THREADS), and the new formats stored.
  const { built, added } = await buildFromCache(o.url, hit, o, { scrapeId, engine: hit.engine, cache: { state: 'hit', cachedAt: hit.fetchedAt }, timeoutMs: o.timeout });
  if (added) await addCachedOutputs(db, key, hit.fetchedAt, variant, added);
  // Only lockdown/minAge requests get here with `branding` (else it goes to a live render): the cache holds no styles.
  if (o.formats.some((f) => f.type === 'branding')) {
    built.document.branding = null;
    built.document.warning = [built.document.warning, 'branding needs a live render of the page; this request was answered from the cache only.'].filter(Boolean).join(' ');
  }
  // Spec: lockdown is billed 5 credits on a hit.
  const creditsUsed = o.lockdown ? 5 : built.creditsUsed;
  built.document.metadata.creditsUsed = creditsUsed;
  return { document: built.document, creditsUsed };
}
