import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import { TaskQueues } from '../common';
import type { CrawlActivities, CrawlBrowserActivities, CrawlControlActivities, CrawlLlmActivities, CrawlProgress, CrawlWorkflowInput, CrawlWorkflowResult } from './contracts';
import { frontierBatchOptions, frontierControlOptions, runFrontierJob } from './loop';

/**
 * A crawl or batch scrape. The frontier lives in Postgres; the frontier loop (./loop.ts) keeps a
 * bounded window of batch activities busy until it is empty — with a window of browser pages on
 * wds-browser for the pages the batches hand to the browser engine, and, when the pages need
 * model-made formats, a window of LLM batches on wds-llm until none waits — then ends the job. This workflow
 * carries nothing but counters across continue-as-new, and drains its activities before doing so.
 */
export async function crawlWorkflow(input: CrawlWorkflowInput): Promise<CrawlWorkflowResult> {
  const { jobId, plan } = input;
  const progress: CrawlProgress = input.progress ?? { seeded: false, batches: 0, runs: 0 };
  const fetchActs = proxyActivities<CrawlActivities>(frontierBatchOptions(TaskQueues.fetch));
  // Model steps of pages with model-made formats. No attempt limit is needed for the provider:
  // an LLM batch handles its failures page by page (back-off in Postgres); these retries are for
  // the batch itself (a worker killed, Postgres briefly gone).
  const llmActs = proxyActivities<CrawlLlmActivities>(frontierBatchOptions(TaskQueues.llm));
  // Pages for the browser engine, one per activity: a worker's wds-browser slots are its pool's
  // pages, and a killed worker's page is retried (its lease retaken) after the heartbeat timeout.
  const browserActs = proxyActivities<CrawlBrowserActivities>(frontierBatchOptions(TaskQueues.browser));
  const control = proxyActivities<CrawlControlActivities>(frontierControlOptions);

  const outcome = await runFrontierJob(
    { jobId, plan, progress },
    {
      seed: fetchActs.seedJob,
      runBatch: fetchActs.processBatch,
      runLlmBatch: llmActs.runLlmBatch,
      runBrowserPage: browserActs.renderCrawlPage,
      frontierState: control.frontierState,
      finishJob: control.finishJob,
    },
  );
  if (outcome.done) return { status: outcome.status, batches: progress.batches };
  return await continueAsNew<typeof crawlWorkflow>({ ...input, progress: { ...progress, runs: progress.runs + 1 } });
}
