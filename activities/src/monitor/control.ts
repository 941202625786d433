import { randomUUID } from 'node:crypto';
import { checkPagesOf, runTargetsOf } from '@wds/contracts';
import { nextDueAt } from '@wds/contracts/monitor-schedule';
import {
  claimDueMonitors, endMonitorRunChecks, monitorRunCounts, monitorsById, pruneMonitorChecks,
  type Db, type DueDecision, type DueMonitor,
} from '@wds/db';
import { monitorChecksEnded } from '@wds/metrics';
import type { JobRef } from '@wds/workflows/common';
import type { FinishJobInput, FrontierState } from '@wds/workflows/crawl';
import type { ClaimDueInput, ClaimDueResult, MonitorControlActivities } from '@wds/workflows/monitor';
import { startMonitorTargets } from './crawl-target';
import { announceEndedChecks } from './events';

export interface MonitorControlDeps {
  db: Db;
  /** WDS_MONITOR_JITTER_MS: the most a monitor's due time is spread past its cron time. */
  jitterMs: number;
}

/**
 * What a due monitor becomes: a check (its running slot free and its team within its credit
 * limit), or a record of why not (skipped_overlap, skipped_no_credits); a monitor overdue past
 * the catch-up window (the deployment was down) only moves on to its next due time.
 */
export function decideDue(m: DueMonitor, now: Date, o: { catchupWindowMs: number; jitterMs: number }): DueDecision {
  const next = nextDueAt(m.schedule, m.id, now, o.jitterMs);
  const base = { monitorId: m.id, nextRunAt: next };
  if (now.getTime() - m.nextRunAt.getTime() > o.catchupWindowMs) return base;
  const status = m.runningCheckId ? 'skipped_overlap' : m.outOfCredits ? 'skipped_no_credits' : 'running';
  const running = status === 'running';
  const targets = running ? runTargetsOf(m.targets).map((t) => ({ ...t, jobId: t.type === 'crawl' ? randomUUID() : null })) : [];
  return { ...base, check: { id: randomUUID(), status, pages: running ? checkPagesOf(m.targets) : [], targets, scheduledFor: m.nextRunAt } };
}

export function createMonitorControlActivities(deps: MonitorControlDeps): MonitorControlActivities {
  const { db } = deps;
  return {
    async claimDueMonitors(input: ClaimDueInput): Promise<ClaimDueResult> {
      const now = new Date();
      const r = await claimDueMonitors(db, input, (m) => {
        const d = decideDue(m, now, { catchupWindowMs: input.catchupWindowMs, jitterMs: deps.jitterMs });
        if (d.check && d.check.status !== 'running') monitorChecksEnded.inc({ status: d.check.status });
        return d;
      });
      return { checks: r.checks, pages: r.pages, skipped: r.skipped, more: r.more, ...(r.targetRuns.length ? { targetRuns: r.targetRuns } : {}) };
    },
    async monitorRunState({ jobId }: JobRef): Promise<FrontierState> {
      const c = await monitorRunCounts(db, jobId);
      return { queued: c.queued, leased: c.leased, nextLeaseExpiryMs: c.nextLeaseExpiryMs, status: c.status, ...(c.llm ? { llm: c.llm } : {}) };
    },
    startMonitorTargets: ({ jobId }: JobRef) => startMonitorTargets(db, jobId),
    finishMonitorRun: async (input: FinishJobInput) => ({ status: (await finishMonitorRun(db, input)).status }),
    async pruneMonitorChecks({ limit }) {
      return { deleted: await pruneMonitorChecks(db, limit) };
    },
  };
}

/** Ends a run (endMonitorRunChecks) and announces the checks it ended; `ended`: this call ended the run's job. */
export async function finishMonitorRun(db: Db, { jobId, outcome, error }: FinishJobInput): Promise<{ status: string; ended: boolean }> {
  const r = await endMonitorRunChecks(db, jobId, outcome, error);
  if (r.checks.length) await announceEndedChecks(db, r.checks, await monitorsById(db, [...new Set(r.checks.map((k) => k.monitorId))]));
  return { status: outcome, ended: r.ended };
}
