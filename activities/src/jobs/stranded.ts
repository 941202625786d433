import { endJob, liveJobsOlderThan, type Db, type LiveJob } from '@wds/db';
import { JOB_SPECS } from '@wds/workflows/job-specs';
import type { JobKind } from '@wds/workflows/jobs';
import { finishAgentRun } from '../agent/control';
import { endStrandedCrawl } from '../crawl/stranded';
import { endExtract } from '../extract/finish';
import { finishMonitorRun } from '../monitor/control';
import { startSweepLoop, workflowState, type StrandedSweeperOptions } from '../stranded/sweep';

/** A job seen running under its workflow is looked at again only after this long. */
const RECHECK_MS = 5 * 60_000;
const PER_SWEEP = 500;

/**
 * How a kind ends a job no workflow runs any more, when failing its row is not all (a crawl also
 * announces the failure to its webhook; an agent releases its reservations). Returns whether it
 * ended the job (false: it had ended meanwhile).
 */
export type StrandedHandler = (db: Db, job: LiveJob, reason: string) => Promise<boolean>;

/** The default end: a job asked to stop is `cancelled`, any other `failed` with the reason. */
export async function endStrandedJob(db: Db, job: LiveJob, reason: string): Promise<boolean> {
  return endJob(db, job.id, {
    status: job.status === 'cancelling' ? 'cancelled' : 'failed',
    error: job.status === 'cancelling' ? null : { kind: 'INTERNAL', message: reason, code: 'JOB_STRANDED' },
    keptMs: JOB_SPECS[job.kind].resultsKeptMs,
  });
}

/**
 * The kinds whose end is more than their row's (the others end with endStrandedJob).
 * - agent: the workflow's own end (finishAgent: state `internal`, retryable; the job's reservations
 *   released, the terminal trace events written, a thread's expiry set; a run being cancelled ends
 *   `cancelled`). Sub-agents are judged too, once their workflow recorded its id (startAgentRun): a
 *   child workflow terminated or timed out would otherwise stay `running` and keep its parent
 *   waiting in `wait_subagents` for ever (the parent finds it ended in Postgres).
 * - crawl, batch: the workflow's own end (finishJob: final counters, model-step drafts dropped, the
 *   idempotency key released) and the `failed` webhook event (crawl/stranded.ts).
 * - extract: its own end (endExtract: final tokens and credits, its reservations released), in its
 *   fetch phase or its model steps alike.
 * - monitor_run: the run's own end (finishMonitorRun: its waiting pages and uncollected targets
 *   become errors with the reason, its checks end — summed, billed, their monitors' slots freed —
 *   and are announced); a run is never asked to stop, so it fails.
 */
export const STRANDED_HANDLERS: Partial<Record<JobKind, StrandedHandler>> = {
  crawl: endStrandedCrawl,
  batch: endStrandedCrawl,
  extract: (db, job, reason) => (job.status === 'cancelling' ? endExtract(db, job.id, 'cancelled', null) : endExtract(db, job.id, 'failed', reason)),
  agent: async (db, job, reason) => (await finishAgentRun(db, { runId: job.id, state: 'internal', message: reason, retryable: true })).wrote,
  monitor_run: async (db, job, reason) => (await finishMonitorRun(db, { jobId: job.id, outcome: 'failed', error: reason })).ended,
};

export interface JobSweeperOptions extends StrandedSweeperOptions {
  /** Replaces, for these kinds, the handlers of STRANDED_HANDLERS. */
  handlers?: Partial<Record<JobKind, StrandedHandler>>;
}

/**
 * The one stranded-job sweeper: ends live jobs whose workflow is not running — the API stored the
 * job and died before starting it, or the workflow was terminated or timed out before ending it.
 * Without it such a job would say `running` for ever. Every control worker runs it; an end is
 * conditional on the job still being live, so two sweepers never end a job twice. Temporal being
 * unreachable is no evidence of anything: that sweep is skipped (and retried at the next turn).
 */
export function startJobSweeper(o: JobSweeperOptions): { stop(): Promise<void> } {
  const seenRunning = new Map<string, number>();
  return startSweepLoop(o.everyMs, async (stopped) => {
    const now = Date.now();
    for (const [id, at] of seenRunning) if (now - at > RECHECK_MS) seenRunning.delete(id);
    const jobs = await liveJobsOlderThan(o.db, { minAgeMs: o.graceMs, limit: PER_SWEEP, skip: [...seenRunning.keys()] });
    for (const job of jobs) {
      if (stopped()) return;
      const state = await workflowState(o.temporal, o.namespace, job.workflowId);
      if (state === 'running') {
        seenRunning.set(job.id, now);
        continue;
      }
      const reason =
        state === 'missing'
          ? `The ${JOB_SPECS[job.kind].noun} failed: its workflow was never started (the API stopped before starting it). Retry the request.`
          : `The ${JOB_SPECS[job.kind].noun} failed: its workflow ended without finishing it (terminated or timed out).`;
      const end = o.handlers?.[job.kind] ?? STRANDED_HANDLERS[job.kind] ?? endStrandedJob;
      if (await end(o.db, job, reason)) o.onFailed?.(job.id, reason);
    }
  });
}
