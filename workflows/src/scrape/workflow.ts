import { proxyActivities } from '@temporalio/workflow';
import type { ScrapeActivities, StoreActivities } from '@wds/activities/types';
import { NON_RETRYABLE_KINDS, TaskQueues, type ScrapeWorkflowInput, type ScrapeWorkflowResult } from '../contracts';
import { describeFailure } from '../failure';

/**
 * A single-URL scrape: one fetch+transform activity on the fetch queue, which writes the
 * document to Postgres and returns only its status. On failure the error is recorded for
 * GET /v2/scrape/{id}, and the failure is rethrown for the waiting API request.
 */
export async function scrapeWorkflow(input: ScrapeWorkflowInput): Promise<ScrapeWorkflowResult> {
  const { scrapePage } = proxyActivities<ScrapeActivities>({
    taskQueue: TaskQueues.fetch,
    // The user's timeout is the budget for all attempts together.
    scheduleToCloseTimeout: input.timeoutMs + 5_000,
    startToCloseTimeout: input.timeoutMs + 2_000,
    retry: {
      initialInterval: '200ms',
      backoffCoefficient: 2,
      maximumAttempts: 3,
      nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS],
    },
  });
  const { recordScrapeFailure } = proxyActivities<StoreActivities>({
    taskQueue: TaskQueues.control,
    startToCloseTimeout: '10s',
    retry: { maximumAttempts: 5 },
  });

  try {
    return await scrapePage({ jobId: input.jobId });
  } catch (err) {
    await recordScrapeFailure({ jobId: input.jobId, error: describeFailure(err) });
    throw err;
  }
}
