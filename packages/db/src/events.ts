import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import type { JobKind } from './schema/ledger';

/**
 * Job events (schema/events.ts): what happened in a job, numbered 1, 2, 3… per job without
 * gaps, idempotent per (job, key). Webhooks are derived from them: an event appended with a
 * `webhook` gets a delivery row in the same statement (webhooks.ts sends it).
 */

export interface JobEvent {
  seq: number;
  type: string;
  payload: Record<string, unknown>;
  createdAt: Date;
}

/** Where an event is delivered: the job's webhook, when it subscribes to the event. */
export interface EventWebhook {
  url: string;
  jobKind: JobKind;
}

export interface NewJobEvent {
  jobId: string;
  type: string;
  /** Small: ids and counts, never content. */
  payload?: Record<string, unknown>;
  /** Unique per job: appending an event with a key the job has already used does nothing. */
  key: string;
  webhook?: EventWebhook | null;
}

/**
 * CTEs to put in a WITH list that append one event for each row of `src` (a FROM item: zero
 * or one row; `payload` may refer to its columns), numbering it from the job's head row.
 * The head row is taken with INSERT … ON CONFLICT DO UPDATE, which waits for a concurrent
 * appender's commit and then reads the latest value, so numbers are given out one by one; the
 * number and the event are written by one statement, so a failure leaves no gap. Nothing is
 * appended when the key exists; two appenders racing with one new key make the second fail
 * with a unique violation on job_events_job_key_idx (appendJobEvent treats that as a replay).
 * The CTEs are named event_head, event_row (returns seq) and event_delivery.
 */
export function eventCtes(e: { jobId: string; type: string; key: string; payload: SQL; src: SQL; webhook?: EventWebhook | null }): SQL {
  const hook = e.webhook ?? null;
  return sql`event_head AS (
      INSERT INTO job_event_heads AS h (job_id, last_seq)
      SELECT ${e.jobId}::uuid, 1 FROM ${e.src}
      WHERE NOT EXISTS (SELECT 1 FROM job_events WHERE job_id = ${e.jobId}::uuid AND idempotency_key = ${e.key}::text)
      ON CONFLICT (job_id) DO UPDATE SET last_seq = h.last_seq + 1
      RETURNING last_seq
    ), event_row AS (
      INSERT INTO job_events (job_id, seq, type, payload, idempotency_key)
      SELECT ${e.jobId}::uuid, event_head.last_seq, ${e.type}::text, ${e.payload}, ${e.key}::text FROM event_head, ${e.src}
      RETURNING seq
    ), event_delivery AS (
      INSERT INTO webhook_deliveries (job_id, job_kind, event_seq, url, origin)
      SELECT ${e.jobId}::uuid, ${hook?.jobKind ?? null}::text, seq, ${hook?.url ?? null}::text, ${hook ? new URL(hook.url).origin : null}::text
      FROM event_row WHERE ${!!hook}::bool
    )`;
}

/** Appends an event (idempotent on its key) and returns its sequence number; `appended` is false for a replay. */
export async function appendJobEvent(db: Db, e: NewJobEvent): Promise<{ seq: number; appended: boolean }> {
  try {
    const r = await db.execute<{ seq: number }>(sql`
      WITH ${eventCtes({ jobId: e.jobId, type: e.type, key: e.key, payload: sql`${JSON.stringify(e.payload ?? {})}::jsonb`, src: sql`(SELECT 1) one`, webhook: e.webhook })}
      SELECT seq FROM event_row`);
    if (r.rows.length) return { seq: r.rows[0]!.seq, appended: true };
  } catch (err) {
    if (constraintOf(err) !== 'job_events_job_key_idx') throw err;
  }
  const [prior] = (await db.execute<{ seq: number }>(sql`SELECT seq FROM job_events WHERE job_id = ${e.jobId} AND idempotency_key = ${e.key}`)).rows;
  if (!prior) throw new Error(`job event ${e.key} of job ${e.jobId} was neither appended nor found`);
  return { seq: prior.seq, appended: false };
}

/** A job's events after `afterSeq`, in order (at most `limit`). */
export async function jobEventsAfter(db: Db, jobId: string, afterSeq = 0, limit = 100): Promise<JobEvent[]> {
  const r = await db.execute<{ seq: number; type: string; payload: Record<string, unknown>; created_at: Date | string }>(sql`
    SELECT seq, type, payload, created_at FROM job_events WHERE job_id = ${jobId} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`);
  return r.rows.map((row) => ({ seq: row.seq, type: row.type, payload: row.payload, createdAt: new Date(row.created_at) }));
}

/** The constraint a Postgres error names (drizzle wraps driver errors in `cause`). */
function constraintOf(err: unknown): string | undefined {
  for (let e = err as { constraint?: string; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (e.constraint) return e.constraint;
  }
  return undefined;
}
