import { sql } from 'drizzle-orm';
import type { JobKind, JobStatus } from '@wds/workflows/jobs';
import type { Db } from '../client';

/** A live job a workflow should be running, for the stranded-job sweeper. */
export type LiveJob = {
  id: string;
  kind: JobKind;
  status: JobStatus;
  workflowId: string;
};

/**
 * Live jobs meant to run under a workflow, older than `minAgeMs` (their API may still be starting
 * them), oldest first, skipping `skip` (jobs the sweeper saw running a moment ago).
 */
export async function liveJobsOlderThan(db: Db, o: { minAgeMs: number; limit: number; skip?: string[] }): Promise<LiveJob[]> {
  const skip = o.skip?.length ? sql`AND NOT (id = ANY(${sql.param(o.skip)}::uuid[]))` : sql``;
  const r = await db.execute<LiveJob>(sql`
    SELECT id, kind, status, workflow_id AS "workflowId" FROM jobs
    WHERE status IN ('queued', 'running', 'cancelling') AND workflow_id IS NOT NULL
      AND created_at < now() - make_interval(secs => ${o.minAgeMs / 1000}) ${skip}
    ORDER BY created_at LIMIT ${o.limit}`);
  return r.rows;
}

/** Jobs deleted per sweep: a backlog (after downtime) goes over several sweeps, each statement short. */
const JOBS_PER_SWEEP = 500;

/**
 * The one expiry path: deletes jobs whose `expires_at` passed, with everything of them (their
 * extensions, frontier, documents and events cascade; ledger entries stay: they are billing).
 * An ended job goes at its time; a zero-data-retention request's row goes at its time whatever
 * its status (the request is over: whatever is left of it must not stay). What must wait longer
 * says so by its `expires_at` (null: held; see README, Jobs). `FOR UPDATE SKIP LOCKED`: control
 * workers sweeping at once take different jobs. Returns how many jobs went, by kind.
 */
export async function deleteExpiredJobs(db: Db, limit = JOBS_PER_SWEEP): Promise<Partial<Record<JobKind, number>>> {
  const r = await db.execute<{ kind: JobKind; n: number }>(sql`
    WITH gone AS (
      DELETE FROM jobs WHERE id IN (
        SELECT id FROM jobs
        WHERE expires_at < now() AND (status IN ('completed', 'failed', 'cancelled') OR zero_data_retention)
        ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING id, kind)
    -- Until every kind's events reference jobs (then they cascade): events and heads of the jobs deleted and
    -- of the jobs that go with them (a root agent's sub-agents; every CTE reads the rows as they were before).
    , ids AS (SELECT id FROM gone UNION ALL SELECT c.id FROM jobs c WHERE c.parent_id IN (SELECT id FROM gone))
    , events AS (DELETE FROM job_events WHERE job_id IN (SELECT id FROM ids))
    , heads AS (DELETE FROM job_event_heads WHERE job_id IN (SELECT id FROM ids))
    SELECT kind, count(*)::int AS n FROM gone GROUP BY kind`);
  return Object.fromEntries(r.rows.map((x) => [x.kind, Number(x.n)]));
}
