import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import proto from '@temporalio/proto';
import { testInfra } from './stack';

/**
 * What Temporal knows about a workflow's activities, for failure tests that must prove where
 * work ran: which worker process (identity `pid@host`, the SDK default) started which attempt.
 */
export interface ActivityStart {
  type: string;
  attempt: number;
  /** Worker process id, from the worker identity. */
  pid: number;
}

const STARTED = proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
const pidOf = (identity: string | null | undefined) => Number(/^(\d+)@/.exec(identity ?? '')?.[1] ?? NaN);

type Handle = ReturnType<Client['workflow']['getHandle']>;

async function withHandle<T>(namespace: string, workflowId: string, fn: (h: Handle) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: testInfra().temporalAddress });
  try {
    return await fn(new Client({ connection, namespace }).workflow.getHandle(workflowId));
  } finally {
    await connection.close();
  }
}

/**
 * Every started attempt of every activity in the workflow's history (current run). With
 * `closed`, first waits for the run to end: an API can answer from the stored result before the
 * worker has reported the activity done, and only then is its start in the history.
 */
export function activityStarts(namespace: string, workflowId: string, opts: { closed?: boolean } = {}): Promise<ActivityStart[]> {
  return withHandle(namespace, workflowId, async (h) => {
    if (opts.closed) await h.result().catch(() => {});
    const events = (await h.fetchHistory()).events ?? [];
    const types = new Map<string, string>();
    const out: ActivityStart[] = [];
    for (const e of events) {
      if (e.activityTaskScheduledEventAttributes) types.set(String(e.eventId), e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
      const s = e.activityTaskStartedEventAttributes;
      if (s) out.push({ type: types.get(String(s.scheduledEventId)) ?? '', attempt: s.attempt ?? 1, pid: pidOf(s.identity) });
    }
    return out;
  });
}

/**
 * Activities running right now (started, not finished), with the worker process running each. None
 * while the workflow does not exist yet (a direct scrape is handed to its workflow only after its fetch).
 */
export function runningActivities(namespace: string, workflowId: string): Promise<ActivityStart[]> {
  return withHandle(namespace, workflowId, async (h) => {
    const d = await h.describe().catch((e: unknown) => {
      if (e instanceof WorkflowNotFoundError) return null;
      throw e;
    });
    if (!d) return [];
    return (d.raw.pendingActivities ?? [])
      .filter((a) => a.state === STARTED)
      .map((a) => ({ type: a.activityType?.name ?? '', attempt: a.attempt ?? 1, pid: pidOf(a.lastWorkerIdentity) }));
  });
}

/** The event types of a workflow's history (current run), e.g. EVENT_TYPE_MARKER_RECORDED. */
export function historyEventTypes(namespace: string, workflowId: string): Promise<string[]> {
  return withHandle(namespace, workflowId, async (h) => {
    const events = (await h.fetchHistory()).events ?? [];
    return events.map((e) => proto.temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? String(e.eventType));
  });
}

/** An activity result or workflow input as the SDK's default converter wrote it (JSON). */
const payloadJson = (data: Uint8Array) => JSON.parse(Buffer.from(data).toString('utf8')) as unknown;

/** The input the workflow's current run started with. */
export function workflowInput<T>(namespace: string, workflowId: string): Promise<T> {
  return withHandle(namespace, workflowId, async (h) => {
    const first = (await h.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
    const data = first?.input?.payloads?.[0]?.data;
    if (!data) throw new Error(`${workflowId}: no start input in its history`);
    return payloadJson(data) as T;
  });
}

/**
 * The results of a workflow's activities of `type` over all its runs (continue-as-new included),
 * in the order they were scheduled, once it has ended; `undefined` for one that did not complete.
 * Results are decoded from JSON payloads (activity results are small, DESIGN §4).
 */
export function activityResults<T = unknown>(namespace: string, workflowId: string, type: string): Promise<(T | undefined)[]> {
  return withHandle(namespace, workflowId, (h) => activityResultsOf<T>(h, type));
}

/** activityResults on a handle of any client (benchmarks run their own Temporal). */
export async function activityResultsOf<T = unknown>(h: Handle, type: string): Promise<(T | undefined)[]> {
  await h.result().catch(() => {});
  const runs: (T | undefined)[][] = [];
  // From the last run back to the first: each run's start names the run it continues.
  for (let run: Handle | null = h; run; ) {
    const history: Awaited<ReturnType<Handle['fetchHistory']>> = await run.fetchHistory();
    const events = history.events ?? [];
    const scheduled: string[] = [];
    const results = new Map<string, T>();
    for (const e of events) {
      if (e.activityTaskScheduledEventAttributes?.activityType?.name === type) scheduled.push(String(e.eventId));
      const c = e.activityTaskCompletedEventAttributes;
      const data = c?.result?.payloads?.[0]?.data;
      if (c && data) results.set(String(c.scheduledEventId), payloadJson(data) as T);
    }
    runs.unshift(scheduled.map((id) => results.get(id)));
    const previous: string | null | undefined = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    run = previous ? h.client.getHandle(h.workflowId, previous) : null;
  }
  return runs.flat();
}
