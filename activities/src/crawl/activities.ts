import { Context } from '@temporalio/activity';
import { finishJob, frontierCounts, jobStatus, llmBacklog } from '@wds/db';
import type { JobRef } from '@wds/workflows/common';
import type { FinishJobInput, FrontierState, ProcessBatchInput, CrawlActivities, CrawlControlActivities } from '@wds/workflows/crawl';
import { jobsFinished } from '@wds/metrics';
import { asActivity } from '../failures';
import type { PageDeps } from '../scrape/pipeline';
import type { CrawlPageDeps } from './page';
import { recordJobEvent } from '../webhooks/emit';
import { processBatch } from './batch';
import { createRobotsCache } from './discovery';
import { loadJobOptions } from './job-options';
import { createOriginEngines } from './origin-engines';
import { seedJob } from './seed';
import { rememberSitePages } from '../changes/crawl-memory';

/** Fetch-queue activities of crawl and batch jobs (they make outbound requests). */
export function createCrawlActivities(deps: CrawlPageDeps): CrawlActivities {
  const memory = { robotsFor: createRobotsCache(deps), origins: createOriginEngines(deps.db) };
  return {
    seedJob: ({ jobId }: JobRef) => asActivity(() => seedJob(deps, memory.robotsFor, jobId, Context.current().cancellationSignal)),
    processBatch: (input: ProcessBatchInput) => asActivity(() => processBatch(deps, memory, input)),
  };
}

/** Control-queue activities: bookkeeping only, no outbound requests. */
export function createCrawlControlActivities(deps: Pick<PageDeps, 'db'>): CrawlControlActivities {
  return {
    async frontierState({ jobId }: JobRef): Promise<FrontierState> {
      let [counts, status, llm] = await Promise.all([frontierCounts(deps.db, jobId), jobStatus(deps.db, jobId), llmBacklog(deps.db, jobId)]);
      // Change tracking: the linked frontier is exhausted, so what the site had before and no page links to now comes next.
      if (status === 'scraping' && counts.queued === 0 && counts.leased === 0 && !counts.browser && (await rememberSitePages(deps.db, jobId)) > 0) {
        [counts, llm] = await Promise.all([frontierCounts(deps.db, jobId), llmBacklog(deps.db, jobId)]);
      }
      // `llm` only when there is some, so jobs without LLM work report what they always did.
      return { ...counts, status: status ?? 'failed', ...(llm.pending ? { llm } : {}) };
    },
    async finishJob({ jobId, outcome, error }: FinishJobInput) {
      const { status, changed } = await finishJob(deps.db, jobId, { outcome, error });
      const job = await loadJobOptions(deps.db, jobId);
      // A job the API cancelled ended in its row already: the workflow's closing call counts it
      // (a retry of that call may count it twice; rare). Otherwise only the call that ended it counts it.
      if (changed || (outcome === 'cancelled' && status === 'cancelled')) jobsFinished.inc({ kind: job.kind, status });
      // The event is keyed by its type, so a retried activity records it once (and a retry
      // after a lost event still records it). A cancelled job announces nothing.
      if (status === 'completed' || status === 'failed') {
        await recordJobEvent(deps.db, job, status, status === 'failed' ? { error: (error ?? 'The job failed').slice(0, 2_000) } : {});
      }
      return { status };
    },
  };
}
