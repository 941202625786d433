import { Context } from '@temporalio/activity';
import type { ScrapeDocument, ScrapeOptions } from '@wds/contracts';
import { completeScrapeJob, loadScrapeJob } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { ScrapeCacheLookup, ScrapePageInput, ScrapePageResult } from '@wds/workflows/contracts';
import { asActivity } from '../failures';
import type { ScrapeActivities } from '../types';
import { scrapeOnePage, type PageDeps } from './pipeline';

export type ScrapeActivityDeps = PageDeps;

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
        // cacheLookup: the API found a cached page that needs converting here (a PDF).
        const o = job.options as ScrapeOptions & { url: string; cacheLookup?: ScrapeCacheLookup };
        const ctx = Context.current();
        const page = await scrapeOnePage(deps, {
          url: o.url,
          options: o,
          scrapeId: jobId,
          signal: ctx.cancellationSignal,
          sleep: (ms) => ctx.sleep(ms),
          useCache: o.cacheLookup,
        });
        // Spec: lockdown is billed 5 credits on a hit (and lockdown only ever answers from the cache).
        if (o.lockdown && page.document.metadata.cacheState === 'hit') {
          page.creditsUsed = 5;
          page.document.metadata.creditsUsed = 5;
        }
        await completeScrapeJob(deps.db, jobId, page.document, page.creditsUsed);
        return { jobId, statusCode: page.statusCode };
      });
    },
  };
}
