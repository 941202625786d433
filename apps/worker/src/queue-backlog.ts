import type { NativeConnection } from '@temporalio/worker';
import type { TaskQueueBacklog } from '@wds/metrics';
import { ALL_QUEUES } from '@wds/workflows/common';

/** TASK_QUEUE_TYPE_WORKFLOW and _ACTIVITY in temporal.api.enums.v1.TaskQueueType. */
const TYPES = [
  { type: 'workflow', code: 1 },
  { type: 'activity', code: 2 },
] as const;

/** protobufjs gives int64 as a Long object (or a number/string, depending on options). */
function num(v: unknown): number {
  if (v && typeof v === 'object' && 'toNumber' in v && typeof (v as { toNumber: unknown }).toNumber === 'function') return (v as { toNumber(): number }).toNumber();
  return Number(v ?? 0);
}

/**
 * Every WDS task queue's backlog, both task types, from Temporal's own statistics (DescribeTaskQueue with
 * report_stats: the approximate count and the oldest task's age that Temporal documents as the scaling signal).
 * Queues Temporal has never seen answer zero.
 */
export function taskQueueBacklog(connection: NativeConnection, namespace: string): () => Promise<TaskQueueBacklog[]> {
  return async () =>
    Promise.all(
      ALL_QUEUES.flatMap((taskQueue) =>
        TYPES.map(async ({ type, code }) => {
          const res = await connection.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue, kind: 1 }, taskQueueType: code, reportStats: true });
          const age = res.stats?.approximateBacklogAge;
          return { taskQueue, type, tasks: num(res.stats?.approximateBacklogCount), oldestSeconds: age ? num(age.seconds) + (age.nanos ?? 0) / 1e9 : 0 };
        }),
      ),
    );
}
