import { ActivityFailure, ApplicationFailure, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import { NON_RETRYABLE_KINDS, TaskQueues } from '../common';
import type { CrawlParamsActivities, CrawlParamsWorkflowInput, CrawlParamsWorkflowResult } from './contracts';

/**
 * One model step on wds-llm, within the request's budget: retried (a provider's 429 or 5xx)
 * until the budget ends, which is a 408 saying so; a model answer the crawl schema refuses is a
 * non-retryable 422.
 */
export async function crawlParamsWorkflow(input: CrawlParamsWorkflowInput): Promise<CrawlParamsWorkflowResult> {
  const { deriveCrawlParams } = proxyActivities<CrawlParamsActivities>({
    taskQueue: TaskQueues.llm,
    scheduleToCloseTimeout: input.timeoutMs,
    startToCloseTimeout: input.timeoutMs,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] },
  });
  try {
    return await deriveCrawlParams({ jobId: input.previewId });
  } catch (err) {
    if (outOfBudget(err)) {
      const last = err.cause instanceof ApplicationFailure ? ` (last: ${err.cause.message})` : '';
      throw ApplicationFailure.create({
        type: 'REQUEST_TIMEOUT',
        nonRetryable: true,
        message: `Request Timeout: the model did not turn the prompt into crawl options within ${Math.round(input.timeoutMs / 1000)} s: the provider was slow or failing${last}. Retry, or set the crawl options yourself.`,
        details: [{ code: 'LLM_TIMEOUT' }],
      });
    }
    throw err;
  }
}

/**
 * The budget ended the step: it timed out, or it failed with a retryable error that Temporal
 * did not retry because the next attempt would start past the schedule-to-close timeout.
 */
function outOfBudget(err: unknown): err is ActivityFailure {
  if (!(err instanceof ActivityFailure)) return false;
  const cause = err.cause;
  if (cause instanceof TimeoutFailure) return true;
  return cause instanceof ApplicationFailure && !cause.nonRetryable && !(NON_RETRYABLE_KINDS as readonly string[]).includes(cause.type ?? '');
}
