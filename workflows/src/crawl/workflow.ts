import { ActivityCancellationType, continueAsNew, proxyActivities } from '@temporalio/workflow';
import { NON_RETRYABLE_KINDS, TaskQueues } from '../common';
import type { CrawlActivities, CrawlControlActivities, CrawlLlmActivities, CrawlProgress, CrawlWorkflowInput, CrawlWorkflowResult } from './contracts';
import { runFrontierJob } from './loop';

/**
 * A crawl or batch scrape. The frontier lives in Postgres; the frontier loop (./loop.ts) keeps a
 * bounded window of batch activities busy until it is empty — and, when the pages need
 * model-made formats, a second window of LLM batches on wds-llm until none waits — then ends the job. This workflow
 * carries nothing but counters across continue-as-new, and drains its activities before doing so.
 */
export async function crawlWorkflow(input: CrawlWorkflowInput): Promise<CrawlWorkflowResult> {
  const { jobId, plan } = input;
  const progress: CrawlProgress = input.progress ?? { seeded: false, batches: 0, runs: 0 };
  const fetchActs = proxyActivities<CrawlActivities>({
    taskQueue: TaskQueues.fetch,
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '10s',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 8, nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] },
  });
  // Model steps of pages with model-made formats. No attempt limit is needed for the provider:
  // an LLM batch handles its failures page by page (back-off in Postgres); these retries are for
  // the batch itself (a worker killed, Postgres briefly gone).
  const llmActs = proxyActivities<CrawlLlmActivities>({
    taskQueue: TaskQueues.llm,
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '10s',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 8, nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] },
  });
  const control = proxyActivities<CrawlControlActivities>({
    taskQueue: TaskQueues.control,
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '500ms', maximumInterval: '10s', maximumAttempts: 20 },
  });

  const outcome = await runFrontierJob(
    { jobId, plan, progress },
    { seed: fetchActs.seedJob, runBatch: fetchActs.processBatch, runLlmBatch: llmActs.runLlmBatch, frontierState: control.frontierState, finishJob: control.finishJob },
  );
  if (outcome.done) return { status: outcome.status, batches: progress.batches };
  return await continueAsNew<typeof crawlWorkflow>({ ...input, progress: { ...progress, runs: progress.runs + 1 } });
}
