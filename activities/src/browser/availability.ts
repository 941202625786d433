import type { TaskQueueBacklog } from '@wds/metrics';
import { ALL_QUEUES, TaskQueues, type TaskQueue } from '@wds/workflows/common';

/** Whether some worker serves a queue (wds-browser, wds-media) right now. Injected into the fetch activity. */
export type BrowserAvailability = () => Promise<boolean>;
export type QueueAvailability = BrowserAvailability;

/** The slice of a Temporal connection this needs (NativeConnection and Connection both have it). */
export interface TaskQueueDescriber {
  workflowService: {
    describeTaskQueue(req: {
      namespace: string;
      taskQueue: { name: string; kind?: number };
      taskQueueType?: number;
      reportStats?: boolean;
    }): Promise<{
      pollers?: { lastAccessTime?: { seconds?: unknown; nanos?: number | null } | null }[] | null;
      stats?: { approximateBacklogCount?: unknown; approximateBacklogAge?: { seconds?: unknown; nanos?: number | null } | null } | null;
    }>;
  };
}

/** TASK_QUEUE_TYPE_WORKFLOW and _ACTIVITY in temporal.api.enums.v1.TaskQueueType. */
const WORKFLOW_QUEUE = 1;
const ACTIVITY_QUEUE = 2;
/** A live poller re-polls at least once a minute; older entries are workers that went away. */
const POLLER_FRESH_MS = 90_000;
/** Answers are remembered this long; a "no" only briefly, so a browser worker that just started is seen soon. */
const CACHE_YES_MS = 5_000;
const CACHE_NO_MS = 1_000;

/** protobufjs gives int64 as a Long object (or a number/string, depending on options). */
function int64(v: unknown): number {
  if (v && typeof v === 'object' && 'toNumber' in v && typeof (v as { toNumber: unknown }).toNumber === 'function') return (v as { toNumber(): number }).toNumber();
  return Number(v ?? 0);
}

/**
 * Asks Temporal whether any worker polled wds-browser recently, remembered for a few seconds.
 * A failed lookup answers "available": the render is then queued and, for optional renders,
 * falls back to HTTP if nobody picks it up (see workflows/src/scrape/engine.ts).
 */
export function temporalBrowserAvailability(conn: TaskQueueDescriber, namespace: string, now = () => Date.now()): BrowserAvailability {
  return temporalQueueAvailability(conn, namespace, TaskQueues.browser, now);
}

/** The same for any activity queue (wds-media: the audio and video formats). */
export function temporalQueueAvailability(conn: TaskQueueDescriber, namespace: string, queue: TaskQueue, now = () => Date.now()): QueueAvailability {
  let cached: { at: number; value: boolean } | undefined;
  let inflight: Promise<boolean> | undefined;
  const lookup = async (): Promise<boolean> => {
    try {
      const res = await conn.workflowService.describeTaskQueue({ namespace, taskQueue: { name: queue, kind: 1 }, taskQueueType: ACTIVITY_QUEUE });
      const t = now();
      return (res.pollers ?? []).some((p) => {
        const s = int64(p.lastAccessTime?.seconds);
        return s > 0 && t - s * 1000 < POLLER_FRESH_MS;
      });
    } catch {
      return true;
    }
  };
  return async () => {
    if (cached && now() - cached.at < (cached.value ? CACHE_YES_MS : CACHE_NO_MS)) return cached.value;
    inflight ??= lookup().then((value) => {
      cached = { at: now(), value };
      inflight = undefined;
      return value;
    });
    return inflight;
  };
}

/**
 * Every WDS task queue's backlog, both task types, from Temporal's own statistics (DescribeTaskQueue with
 * report_stats: the approximate count and the oldest task's age that Temporal documents as the scaling signal).
 * Queues Temporal has never seen answer zero. Read by control workers for /metrics.
 */
export function temporalQueueBacklog(conn: TaskQueueDescriber, namespace: string): () => Promise<TaskQueueBacklog[]> {
  const types = [
    { type: 'workflow', code: WORKFLOW_QUEUE },
    { type: 'activity', code: ACTIVITY_QUEUE },
  ] as const;
  return async () =>
    Promise.all(
      ALL_QUEUES.flatMap((taskQueue) =>
        types.map(async ({ type, code }) => {
          const res = await conn.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue, kind: 1 }, taskQueueType: code, reportStats: true });
          const age = res.stats?.approximateBacklogAge;
          return { taskQueue, type, tasks: int64(res.stats?.approximateBacklogCount), oldestSeconds: age ? int64(age.seconds) + (age.nanos ?? 0) / 1e9 : 0 };
        }),
      ),
    );
}
