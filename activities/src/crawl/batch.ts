import type { ProcessBatchInput, ProcessBatchResult } from '@wds/workflows/crawl';
import { runFrontierBatch } from '../frontier/batch-runner';
import type { PageDeps } from '../scrape/pipeline';
import type { createRobotsCache } from './discovery';
import { loadJobOptions } from './job-options';
import { crawlPageHandler } from './page';

/** One batch of a crawl or batch scrape: the frontier batch runner with the crawl page handler. */
export async function processBatch(deps: PageDeps, robotsFor: ReturnType<typeof createRobotsCache>, input: ProcessBatchInput): Promise<ProcessBatchResult> {
  const job = await loadJobOptions(deps.db, input.jobId);
  // Long enough that a slow page never loses its lease to a sibling mid-fetch.
  const leaseMs = Math.max(120_000, job.scrape.timeout * 3);
  return runFrontierBatch(deps.db, input, leaseMs, crawlPageHandler(deps, robotsFor, job));
}
