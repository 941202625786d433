import { isDeepStrictEqual } from 'node:util';
import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { anyActiveMonitor, type Db } from '@wds/db';
import { TaskQueues, workflowIds } from '@wds/workflows/common';
import { monitorScheduleIds, type MonitorTickInput } from '@wds/workflows/monitor';
import { startSweepLoop } from '../stranded/sweep';

/** How the deployment ticks (worker settings; README: WDS_MONITOR_*). */
export interface MonitorTicking {
  shards: number;
  tickMs: number;
  maxChecksPerRun: number;
  catchupWindowMs: number;
  plan: MonitorTickInput['plan'];
}

/** How often a control worker makes sure the tick Schedules exist as configured. */
const ENSURE_EVERY_MS = 60_000;

/**
 * The shared tick Schedules, one per shard: every `tickMs` (shards offset evenly within it),
 * overlap SKIP (a tick only claims and starts runs, so one never lasts long), a catch-up window
 * of a few ticks (a missed tick is harmless: the next claims everything due). Missing ones are
 * created, changed ones updated, shards beyond the count deleted. Idempotent: every control
 * worker calls it.
 */
export async function ensureTickSchedules(client: Client, t: MonitorTicking): Promise<void> {
  for (let shard = 0; shard < t.shards; shard++) {
    const id = monitorScheduleIds.tick(shard);
    const args: MonitorTickInput[] = [{ shard, shards: t.shards, maxChecksPerRun: t.maxChecksPerRun, catchupWindowMs: t.catchupWindowMs, plan: t.plan, tickMs: t.tickMs }];
    const spec = { intervals: [{ every: t.tickMs, offset: Math.floor((shard * t.tickMs) / t.shards) }] };
    const action = { type: 'startWorkflow' as const, workflowType: 'monitorTickWorkflow', taskQueue: TaskQueues.control, args, workflowExecutionTimeout: '10 minutes' };
    const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: Math.max(10_000, 3 * t.tickMs) };
    const handle = client.schedule.getHandle(id);
    try {
      const d = await handle.describe();
      const current = d.action.type === 'startWorkflow' ? d.action.args : undefined;
      const every = d.spec.intervals?.[0]?.every;
      if (isDeepStrictEqual(current, args) && Number(every) === t.tickMs) continue;
      await handle.update((prev) => ({ ...prev, spec, action, policies }));
    } catch (e) {
      if (!(e instanceof ScheduleNotFoundError)) throw e;
      await client.schedule.create({ scheduleId: id, spec, action, policies }).catch((err: unknown) => {
        if (!(err instanceof Error && err.name === 'ScheduleAlreadyRunning')) throw err;
      });
    }
  }
  for await (const s of client.schedule.list()) {
    const m = /^wds-monitor-tick-(\d+)$/.exec(s.scheduleId);
    if (m && Number(m[1]) >= t.shards) await client.schedule.getHandle(s.scheduleId).delete().catch(() => {});
  }
}

/**
 * A control worker's monitor upkeep, as a sweep loop: at start and every minute, when any monitor
 * is active, the tick Schedules are made to exist (so one lost in a restore, or deleted, comes
 * back from the monitors table). Runs no workflow runs (a "run now" whose API died before starting
 * it, a terminated workflow) are the one stranded-job sweeper's (activities/src/jobs/stranded.ts).
 */
export function startMonitorUpkeep(o: { db: Db; everyMs: number; client: Client; ticking: MonitorTicking; onError?: (e: unknown) => void }): { stop(): Promise<void> } {
  let ensuredAt = 0;
  return startSweepLoop(o.everyMs, async () => {
    if (Date.now() - ensuredAt >= ENSURE_EVERY_MS && (await anyActiveMonitor(o.db))) {
      await ensureTickSchedules(o.client, o.ticking).catch((e: unknown) => o.onError?.(e));
      ensuredAt = Date.now();
    }
  });
}
