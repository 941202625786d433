import { Context } from '@temporalio/activity';
import { mayStoreInCache, type ScrapeOptions, type ScrapeDocument } from '@wds/contracts';
import { completeScrapeJob, loadScrapeJob, storeCachedPage, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import { acceptLanguage, buildDocument, fetchPage, scrapeCacheKey } from '@wds/scraper';
import type { ScrapePageInput, ScrapePageResult } from '@wds/workflows/contracts';
import { asActivity } from '../failures';
import type { ScrapeActivities } from '../types';

export interface ScrapeActivityDeps {
  db: Db;
  allowPrivateNetwork: boolean;
  maxBodyBytes: number;
}

type StoredScrape = ScrapeOptions & { url: string };

/** Request headers: the caller's, plus Accept-Language from `location` unless they set one. */
export function requestHeaders(o: StoredScrape): Record<string, string> | undefined {
  const headers = { ...(o.headers ?? {}) };
  const hasLang = Object.keys(headers).some((h) => h.toLowerCase() === 'accept-language');
  if (o.location && !hasLang) headers['Accept-Language'] = acceptLanguage(o.location);
  return Object.keys(headers).length ? headers : undefined;
}

export function createScrapeActivities(deps: ScrapeActivityDeps): ScrapeActivities {
  return {
    async scrapePage({ jobId }: ScrapePageInput): Promise<ScrapePageResult> {
      return asActivity(async () => {
        const job = await loadScrapeJob(deps.db, jobId);
        if (!job) throw new WdsError('NOT_FOUND', { message: `Scrape job ${jobId} not found` });
        if (job.status === 'completed') {
          // A retry after the write succeeded but the completion was lost: nothing to redo.
          return { jobId, statusCode: (job.document as ScrapeDocument).metadata.statusCode };
        }
        const o = job.options as StoredScrape;
        const ctx = Context.current();
        const started = Date.now();
        if (o.waitFor > 0) await ctx.sleep(o.waitFor);

        const page = await fetchPage({
          url: o.url,
          headers: requestHeaders(o),
          timeoutMs: Math.max(1, o.timeout - (Date.now() - started)),
          skipTlsVerification: o.skipTlsVerification,
          allowPrivateNetwork: deps.allowPrivateNetwork,
          maxBodyBytes: deps.maxBodyBytes,
          signal: ctx.cancellationSignal,
        }).catch((e) => {
          // The user's timeout is spent: another attempt could only answer later than asked.
          if (e instanceof WdsError && e.kind === 'REQUEST_TIMEOUT') throw new WdsError('REQUEST_TIMEOUT', { message: e.message, code: e.code, retryable: false });
          throw e;
        });
        const contentTypeHeader = page.headers['content-type'] ?? '';
        const built = buildDocument(
          { requestedUrl: o.url, finalUrl: page.finalUrl, statusCode: page.statusCode, contentTypeHeader, body: page.body },
          o,
          { scrapeId: jobId, engine: 'http', cache: { state: 'miss' } },
        );
        // Server errors are transient by nature: never serve them from the cache.
        if (mayStoreInCache(o) && page.statusCode < 500) {
          await storeCachedPage(deps.db, scrapeCacheKey(o), {
            url: o.url,
            finalUrl: page.finalUrl,
            statusCode: page.statusCode,
            contentType: contentTypeHeader,
            charset: built.charset,
            body: page.body,
            engine: 'http',
          });
        }
        await completeScrapeJob(deps.db, jobId, built.document, built.creditsUsed);
        return { jobId, statusCode: page.statusCode };
      });
    },
  };
}
