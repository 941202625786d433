import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { round, summary } from './stats';

/**
 * Where the time of a set of workflow runs went, from their Temporal histories: per activity type
 * the wait in its task queue (scheduled → started) and its run (started → closed), the time from
 * the workflow's start to its first activity being scheduled, and from the last activity's end to
 * the workflow's end (each a workflow task, or more); plus, per activity type, how many ran at once
 * on average over the window (`meanBusy`: the sum of run times over the window) and when the last
 * one finished. Times are milliseconds; `t0` is the window's start (epoch ms).
 */
export async function workflowPhases(address: string, workflowIds: string[], t0: number, t1: number) {
  const connection = await Connection.connect({ address });
  const perType = new Map<string, { queueMs: number[]; runMs: number[]; lastEndMs: number; busyMs: number }>();
  const toFirstActivity: number[] = [];
  const afterLastActivity: number[] = [];
  const startAfterT0: number[] = [];
  // Workflow tasks: the first of each run apart (a new run's, which builds the workflow), then the others.
  const wft = { firstQueueMs: [] as number[], firstRunMs: [] as number[], queueMs: [] as number[], runMs: [] as number[] };
  try {
    const client = new Client({ connection, namespace: 'default' });
    await Promise.all(
      chunks(workflowIds, 20).map(async (ids) => {
        for (const id of ids) {
          const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
          analyse(events);
        }
      }),
    );
  } finally {
    await connection.close();
  }

  function analyse(events: temporal.api.history.v1.IHistoryEvent[]) {
    const at = (e: temporal.api.history.v1.IHistoryEvent) => Number(e.eventTime!.seconds) * 1000 + Math.round((e.eventTime!.nanos ?? 0) / 1e6);
    const scheduled = new Map<string, { type: string; at: number }>();
    const started = new Map<string, number>();
    let firstScheduled = Infinity;
    let lastClosed = -Infinity;
    let wftScheduled = 0;
    let wftStarted = 0;
    let firstWft = true;
    const begin = at(events[0]!);
    startAfterT0.push(begin - t0);
    for (const e of events) {
      if (e.workflowTaskScheduledEventAttributes) wftScheduled = at(e);
      if (e.workflowTaskStartedEventAttributes) {
        wftStarted = at(e);
        (firstWft ? wft.firstQueueMs : wft.queueMs).push(wftStarted - wftScheduled);
      }
      if (e.workflowTaskCompletedEventAttributes || e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes) {
        (firstWft ? wft.firstRunMs : wft.runMs).push(at(e) - wftStarted);
        firstWft = false;
      }
      const s = e.activityTaskScheduledEventAttributes;
      if (s) {
        scheduled.set(String(e.eventId), { type: s.activityType?.name ?? '?', at: at(e) });
        firstScheduled = Math.min(firstScheduled, at(e));
      }
      const st = e.activityTaskStartedEventAttributes;
      if (st) started.set(String(st.scheduledEventId), at(e));
      const closed = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
      if (closed) {
        const sch = scheduled.get(String(closed.scheduledEventId))!;
        const start = started.get(String(closed.scheduledEventId)) ?? sch.at;
        const t = perType.get(sch.type) ?? { queueMs: [], runMs: [], lastEndMs: -Infinity, busyMs: 0 };
        t.queueMs.push(start - sch.at);
        t.runMs.push(at(e) - start);
        t.lastEndMs = Math.max(t.lastEndMs, at(e) - t0);
        t.busyMs += Math.max(0, Math.min(at(e), t1) - Math.max(start, t0));
        perType.set(sch.type, t);
        lastClosed = Math.max(lastClosed, at(e));
      }
    }
    const end = at(events[events.length - 1]!);
    if (Number.isFinite(firstScheduled)) toFirstActivity.push(firstScheduled - begin);
    if (Number.isFinite(lastClosed)) afterLastActivity.push(end - lastClosed);
  }

  return {
    runs: workflowIds.length,
    workflowStartAfterWindowStartMs: summary(startAfterT0),
    startToFirstActivityScheduledMs: summary(toFirstActivity),
    lastActivityToWorkflowEndMs: summary(afterLastActivity),
    workflowTasks: {
      first: { queueMs: summary(wft.firstQueueMs), runMs: summary(wft.firstRunMs) },
      others: { queueMs: summary(wft.queueMs), runMs: summary(wft.runMs) },
    },
    activities: Object.fromEntries(
      [...perType].map(([type, t]) => [
        type,
        { queueMs: summary(t.queueMs), runMs: summary(t.runMs), lastEndAfterWindowStartMs: round(t.lastEndMs), meanBusy: round(t.busyMs / (t1 - t0)) },
      ]),
    ),
  };
}

function chunks<T>(xs: T[], n: number): T[][] {
  const out: T[][] = Array.from({ length: n }, () => []);
  xs.forEach((x, i) => out[i % n]!.push(x));
  return out.filter((c) => c.length);
}
