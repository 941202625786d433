import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import type { BillingKind } from './schema/ledger';

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
  jobKind: BillingKind;
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

/** Where a job's webhook is delivered, as SQL values (literals or a prepared statement's placeholders); NULL url: no webhook. */
export interface EventHookSql {
  kind: SQL;
  url: SQL;
  origin: SQL;
}

/** A webhook as the SQL values of EventHookSql (NULLs without one). */
export function eventHookSql(hook: EventWebhook | null | undefined): EventHookSql {
  return { kind: sql`${hook?.jobKind ?? null}::text`, url: sql`${hook?.url ?? null}::text`, origin: sql`${hook ? new URL(hook.url).origin : null}::text` };
}

/**
 * CTEs to put in a WITH list that append one event of `type` for each row of `rows` (a query
 * returning `key` text, `payload` jsonb and `ord`, their order), numbered in that order from one
 * bump of the job's head row; a row whose key the job has already used appends nothing. The
 * head row is taken with INSERT … ON CONFLICT DO UPDATE, which waits for a concurrent appender's
 * commit and then reads the latest value, so numbers are given out without gaps or repeats; the
 * numbers and the events are written by one statement, so a failure leaves no gap. Two
 * appenders racing with one new key make the second fail with a unique violation on
 * job_events_job_key_idx (appendJobEvent treats that as a replay). With a webhook, each event's
 * delivery is queued. The CTEs are named new_event, event_head, event_row (returns seq) and
 * event_delivery.
 */
export function eventRowsCtes(e: { jobId: SQL; type: SQL; rows: SQL; hook: EventHookSql }): SQL {
  return sql`new_event AS (
      SELECT r.key, r.payload, row_number() OVER (ORDER BY r.ord) AS n, count(*) OVER () AS total FROM (${e.rows}) r
      -- OFFSET 0 keeps this a per-key probe of job_events_job_key_idx. Without it the planner may
      -- turn it into an anti-join that reads every event of the job (it estimates a handful from
      -- stale statistics): a crawl storing page groups then reads O(pages) rows per group.
      WHERE NOT EXISTS (SELECT 1 FROM job_events x WHERE x.job_id = ${e.jobId}::uuid AND x.idempotency_key = r.key OFFSET 0)
    ), event_head AS (
      INSERT INTO job_event_heads AS h (job_id, last_seq)
      SELECT ${e.jobId}::uuid, count(*) FROM new_event HAVING count(*) > 0
      ON CONFLICT (job_id) DO UPDATE SET last_seq = h.last_seq + excluded.last_seq
      RETURNING last_seq
    ), event_row AS (
      INSERT INTO job_events (job_id, seq, type, payload, idempotency_key)
      SELECT ${e.jobId}::uuid, event_head.last_seq - new_event.total + new_event.n, ${e.type}::text, new_event.payload, new_event.key
      FROM event_head, new_event
      RETURNING seq
    ), event_delivery AS (
      INSERT INTO webhook_deliveries (job_id, job_kind, event_seq, url, origin)
      SELECT ${e.jobId}::uuid, ${e.hook.kind}, seq, ${e.hook.url}, ${e.hook.origin}
      FROM event_row WHERE ${e.hook.url} IS NOT NULL
    )`;
}

/**
 * eventRowsCtes for one event: appended for each row of `src` (a FROM item: zero or one row;
 * `payload` may refer to its columns), unless the job has used `key`.
 */
export function eventCtes(e: { jobId: string; type: string; key: string; payload: SQL; src: SQL; webhook?: EventWebhook | null }): SQL {
  return eventRowsCtes({
    jobId: sql`${e.jobId}`,
    type: sql`${e.type}`,
    rows: sql`SELECT ${e.key}::text AS key, ${e.payload} AS payload, 1 AS ord FROM ${e.src}`,
    hook: eventHookSql(e.webhook),
  });
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
