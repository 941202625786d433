import { proxyActivities } from '@temporalio/workflow';
import type { MapActivities, MapStoreActivities, MapWorkflowInput } from './contracts';
import { NON_RETRYABLE_KINDS, TaskQueues } from '../common';
import { describeFailure } from '../failure';

/** Map: one discovery activity that stores the link list in Postgres; the API waits for it. */
export async function mapWorkflow(input: MapWorkflowInput): Promise<{ count: number }> {
  const { mapSite } = proxyActivities<MapActivities>({
    taskQueue: TaskQueues.fetch,
    startToCloseTimeout: input.timeoutMs + 5_000,
    retry: { maximumAttempts: 2, nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] },
  });
  const { recordMapFailure } = proxyActivities<MapStoreActivities>({ taskQueue: TaskQueues.control, startToCloseTimeout: '10s' });
  try {
    return await mapSite({ jobId: input.jobId });
  } catch (err) {
    await recordMapFailure({ jobId: input.jobId, error: describeFailure(err) });
    throw err;
  }
}
