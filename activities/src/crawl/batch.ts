import type { ProcessBatchInput, ProcessBatchResult } from '@wds/workflows/crawl';
import { runFrontierBatch } from '../frontier/batch-runner';
import { loadJobOptions, type LoadedJob } from './job-options';
import { claimUrls } from '@wds/db';
import { crawlPageHandler, type CrawlMemory, type CrawlPageDeps } from './page';

/** A page's lease: long enough that a slow page never loses it to a sibling mid-fetch or mid-render. */
export const pageLeaseMs = (job: LoadedJob) => Math.max(120_000, job.scrape.timeout * 3);

/** One batch of a crawl or batch scrape: the frontier batch runner with the crawl page handler. */
export async function processBatch(deps: CrawlPageDeps, memory: CrawlMemory, input: ProcessBatchInput): Promise<ProcessBatchResult> {
  const job = await loadJobOptions(deps.db, input.jobId);
  // Crawls discover their frontier as they go: a batch waits for its siblings' links (batch scrapes know every URL up front).
  return runFrontierBatch(deps.db, input, pageLeaseMs(job), crawlPageHandler(deps, memory, job), claimUrls, { waitForOthers: job.kind === 'crawl' && job.crawl?.sitemap !== 'only' });
}
