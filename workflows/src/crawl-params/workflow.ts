import { proxyActivities } from '@temporalio/workflow';
import { NON_RETRYABLE_KINDS, TaskQueues } from '../common';
import type { CrawlParamsActivities, CrawlParamsWorkflowInput, CrawlParamsWorkflowResult } from './contracts';

/**
 * One model step on wds-llm, within the request's budget: retried (a provider's 429 or 5xx)
 * until the budget ends; a model answer the crawl schema refuses is a non-retryable 422.
 */
export async function crawlParamsWorkflow(input: CrawlParamsWorkflowInput): Promise<CrawlParamsWorkflowResult> {
  const { deriveCrawlParams } = proxyActivities<CrawlParamsActivities>({
    taskQueue: TaskQueues.llm,
    scheduleToCloseTimeout: input.timeoutMs,
    startToCloseTimeout: input.timeoutMs,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] },
  });
  return deriveCrawlParams({ jobId: input.previewId });
}
