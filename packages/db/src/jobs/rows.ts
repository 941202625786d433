import { sql, type SQL } from 'drizzle-orm';
import type { FailureRecord } from '@wds/workflows/common';
import type { JobKind, JobStatus, TerminalStatus } from '@wds/workflows/jobs';
import type { Db } from '../client';
import { storable } from '../text';

/**
 * A job's row in the kernel table (schema/jobs.ts): written with its kind's extension in one
 * statement or transaction, moved through the one status vocabulary, ended once. A kind's own
 * module calls these (or splices the CTEs into its own statements); nothing else writes `jobs`.
 */

export interface NewJob {
  id: string;
  teamId: string | null;
  kind: JobKind;
  options?: unknown;
  /** Defaults to `queued`. */
  status?: JobStatus;
  parentId?: string | null;
  idempotencyKey?: string | null;
  zeroDataRetention?: boolean;
  /** The workflow meant to run it (null: none yet). */
  workflowId?: string | null;
  /** Set only for rows that must go whatever happens (a zero-data-retention request's): now + this. */
  expiresInMs?: number | null;
}

/** The INSERT of a job row, as a statement or a CTE body (`RETURNING id`). */
export function insertJobSql(j: NewJob): SQL {
  const expires = j.expiresInMs == null ? sql`NULL::timestamptz` : sql`now() + make_interval(secs => ${j.expiresInMs / 1000})`;
  return sql`INSERT INTO jobs (id, team_id, kind, status, parent_id, options, idempotency_key, zero_data_retention, workflow_id, expires_at)
    VALUES (${j.id}, ${j.teamId}, ${j.kind}, ${j.status ?? 'queued'}, ${j.parentId ?? null}, ${JSON.stringify(storable(j.options ?? {}))}::jsonb,
      ${j.idempotencyKey ?? null}, ${j.zeroDataRetention ?? false}, ${j.workflowId ?? null}, ${expires})
    RETURNING id`;
}

export async function insertJob(db: Db, j: NewJob): Promise<void> {
  await db.execute(insertJobSql(j));
}

export interface JobEnd {
  status: TerminalStatus;
  outcome?: string | null;
  error?: FailureRecord | null;
  /** Left as it is when omitted. */
  creditsUsed?: number;
  /** How long it is kept from now (its spec's resultsKeptMs); null: kept. */
  keptMs: number | null;
  /** Also release the idempotency key (a job that failed to start: a retry starts afresh). */
  releaseKey?: boolean;
}

/**
 * The UPDATE ending a live job (`RETURNING id, team_id`): status, outcome, error, credits,
 * finished_at, expires_at. Ends it once: a job already ended is not touched (no row returned).
 * A zero-data-retention row keeps an earlier `expires_at` it was inserted with (its request's end).
 */
export function endJobSql(id: string | SQL, e: JobEnd): SQL {
  const expires = e.keptMs == null ? sql`NULL::timestamptz` : sql`now() + make_interval(secs => ${e.keptMs / 1000})`;
  const error = e.error ? sql`${JSON.stringify(storable(e.error))}::jsonb` : sql`NULL::jsonb`;
  return sql`UPDATE jobs SET status = ${e.status}, outcome = ${e.outcome ?? null}, error = ${error},
      credits_used = ${e.creditsUsed === undefined ? sql`credits_used` : sql`${e.creditsUsed}::int`},
      -- A zero-data-retention row keeps the earlier of its request's end and its spec's time (LEAST skips NULLs).
      finished_at = now(), expires_at = CASE WHEN zero_data_retention THEN least(expires_at, ${expires}) ELSE ${expires} END
      ${e.releaseKey ? sql`, idempotency_key = NULL` : sql``}
    WHERE id = ${id} AND status IN ('queued', 'running', 'cancelling')
    RETURNING id, team_id`;
}

/** Ends a live job; false when it had already ended. */
export async function endJob(db: Db, id: string, e: JobEnd): Promise<boolean> {
  const r = await db.execute(endJobSql(id, e));
  return (r.rowCount ?? 0) > 0;
}

/**
 * Asks a job to stop (the API does this before cancelling its workflow, which then writes the
 * end): `cancelling`. False when it had already ended or was being cancelled.
 */
export async function markJobCancelled(db: Db, jobId: string): Promise<boolean> {
  const r = await db.execute(sql`UPDATE jobs SET status = 'cancelling' WHERE id = ${jobId} AND status IN ('queued', 'running')`);
  return (r.rowCount ?? 0) > 0;
}

/**
 * The `expiresAt` a kind's status endpoint shows, over `jobs j`: its row's expiry, or while none is
 * set (live, or held) `keptMs` (its spec's) from its end, or from its start while it runs (as Firecrawl answers).
 */
export const shownExpiry = (keptMs: number): SQL =>
  sql`coalesce(j.expires_at, coalesce(j.finished_at, j.created_at) + make_interval(secs => ${keptMs / 1000}))`;

/** queued → running (a worker picked it up); a job already running or ended is left alone. */
export async function markJobRunning(db: Db, id: string): Promise<void> {
  await db.execute(sql`UPDATE jobs SET status = 'running', started_at = coalesce(started_at, now()) WHERE id = ${id} AND status = 'queued'`);
}

/** Which workflow runs the job from now on (a direct scrape handed to the scrape workflow). */
export async function setJobWorkflow(db: Db, id: string, workflowId: string): Promise<void> {
  await db.execute(sql`UPDATE jobs SET workflow_id = ${workflowId} WHERE id = ${id}`);
}

export type JobView = {
  id: string;
  teamId: string | null;
  kind: JobKind;
  status: JobStatus;
  outcome: string | null;
  options: unknown;
  error: FailureRecord | null;
  creditsUsed: number;
  zeroDataRetention: boolean;
  createdAt: Date;
  finishedAt: Date | null;
};

const VIEW = sql`id, team_id AS "teamId", kind, status, outcome, options, error, credits_used AS "creditsUsed",
  zero_data_retention AS "zeroDataRetention", created_at AS "createdAt", finished_at AS "finishedAt"`;

/** A job by id (workers' reads: no team check). */
export async function loadJob(db: Db, id: string): Promise<JobView | null> {
  const r = await db.execute<JobView>(sql`SELECT ${VIEW} FROM jobs WHERE id = ${id}`);
  return r.rows[0] ? withDates(r.rows[0]) : null;
}

/** A team's job of one kind (the API's reads: another team's id, or another kind's, reads as missing). */
export async function loadTeamJob(db: Db, teamId: string, kind: JobKind, id: string): Promise<JobView | null> {
  const r = await db.execute<JobView>(sql`SELECT ${VIEW} FROM jobs WHERE id = ${id} AND team_id = ${teamId} AND kind = ${kind}`);
  return r.rows[0] ? withDates(r.rows[0]) : null;
}

/** Deletes a job with everything of it (zero data retention: the request has been answered). */
export async function deleteJob(db: Db, id: string): Promise<void> {
  await db.execute(sql`DELETE FROM jobs WHERE id = ${id}`);
}

function withDates(v: JobView): JobView {
  return { ...v, createdAt: new Date(v.createdAt), finishedAt: v.finishedAt ? new Date(v.finishedAt) : null };
}
