import { proxyActivities } from '@temporalio/workflow';
import type { ParseActivities, ParseWorkflowInput, ParseWorkflowResult } from './contracts';
import { NON_RETRYABLE_KINDS, TaskQueues } from '../common';
import { describeFailure } from '../failure';

/**
 * POST /v2/parse: one activity on the fetch queue converts the upload stored in Postgres and
 * writes the document back; only the id and the credit count cross Temporal. On failure the
 * error is recorded on the job (which also drops the upload) and rethrown for the waiting API.
 */
export async function parseWorkflow(input: ParseWorkflowInput): Promise<ParseWorkflowResult> {
  const { parseUpload } = proxyActivities<ParseActivities>({
    taskQueue: TaskQueues.fetch,
    // The user's timeout is the budget for all attempts together.
    scheduleToCloseTimeout: input.timeoutMs + 5_000,
    startToCloseTimeout: input.timeoutMs + 2_000,
    retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumAttempts: 3, nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] },
  });
  const { recordParseFailure } = proxyActivities<ParseActivities>({
    taskQueue: TaskQueues.fetch,
    startToCloseTimeout: '10s',
    retry: { maximumAttempts: 5 },
  });

  try {
    return await parseUpload({ jobId: input.jobId });
  } catch (err) {
    await recordParseFailure({ jobId: input.jobId, error: describeFailure(err) });
    throw err;
  }
}
