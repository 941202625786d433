import { proxyActivities } from '@temporalio/workflow';
import type { MapActivities, StoreActivities } from '@wds/activities/types';
import { NON_RETRYABLE_KINDS, TaskQueues, type MapWorkflowInput } from '../contracts';
import { describeFailure } from '../failure';

/** Map: one discovery activity that stores the link list in Postgres; the API waits for it. */
export async function mapWorkflow(input: MapWorkflowInput): Promise<{ count: number }> {
  const { mapSite } = proxyActivities<MapActivities>({
    taskQueue: TaskQueues.fetch,
    startToCloseTimeout: input.timeoutMs + 5_000,
    retry: { maximumAttempts: 2, nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] },
  });
  const { recordMapFailure } = proxyActivities<StoreActivities>({ taskQueue: TaskQueues.control, startToCloseTimeout: '10s' });
  try {
    return await mapSite({ jobId: input.jobId });
  } catch (err) {
    await recordMapFailure({ jobId: input.jobId, error: describeFailure(err) });
    throw err;
  }
}
