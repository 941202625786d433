import { sql } from 'drizzle-orm';
import type { Db } from './client';
import { pickOnce } from './pick';
import type { BillingKind } from './schema/ledger';

/**
 * Webhook deliveries (schema/webhooks.ts), derived from job events (events.ts eventCtes writes
 * them). A delivery is claimed by pushing its next attempt time forward, so several workers
 * deliver side by side and a crashed deliverer's claims come back when they lapse.
 */

export interface DueDelivery {
  id: number;
  jobId: string;
  jobKind: BillingKind;
  eventSeq: number;
  eventType: string;
  eventPayload: Record<string, unknown>;
  url: string;
  origin: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  /** When the event happened (its job_events row): delivery lag counts from here. */
  eventAt: Date;
}

export interface ClaimDeliveriesInput {
  /** At most this many deliveries. */
  n: number;
  /** How long a claim holds before another worker may take the delivery again (longer than an attempt). */
  claimMs: number;
  /** Deliveries in flight at once per origin (in this process). */
  perOrigin: number;
  /** Deliveries this process has in flight now, by origin. */
  inFlight: ReadonlyMap<string, number>;
}

/**
 * Claims due deliveries, oldest first, taking no more per origin than the room that origin has
 * left (`perOrigin` minus what is in flight), so a receiver that hangs can hold at most
 * `perOrigin` of this process's slots. Events of one job go in order: only a job's earliest
 * pending delivery is ever due.
 */
export async function claimDueDeliveries(db: Db, c: ClaimDeliveriesInput): Promise<DueDelivery[]> {
  const busy = [...c.inFlight.entries()].filter(([, k]) => k > 0);
  const full = busy.filter(([, k]) => k >= c.perOrigin).map(([o]) => o);
  type Row = { id: string; job_id: string; job_kind: BillingKind; event_seq: number; type: string; payload: Record<string, unknown>; url: string; origin: string; attempts: number; event_at: Date | string };
  const res = await db.execute<Row>(sql`
    WITH cand AS MATERIALIZED (
      SELECT id, origin, next_attempt_at FROM webhook_deliveries o
      WHERE status = 'pending' AND next_attempt_at <= now() AND origin <> ALL(${sql.param(full)}::text[])
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.job_id = o.job_id AND p.status = 'pending' AND p.event_seq < o.event_seq)
      ORDER BY next_attempt_at, id LIMIT ${c.n * 4} FOR UPDATE SKIP LOCKED
    ), ranked AS (
      SELECT cand.id, cand.next_attempt_at, row_number() OVER (PARTITION BY cand.origin ORDER BY cand.next_attempt_at, cand.id) AS r,
             ${c.perOrigin}::int - coalesce(b.n, 0) AS room
      FROM cand LEFT JOIN unnest(${sql.param(busy.map(([o]) => o))}::text[], ${sql.param(busy.map(([, k]) => k))}::int[]) AS b(origin, n) ON b.origin = cand.origin
    )
    UPDATE webhook_deliveries w SET next_attempt_at = now() + make_interval(secs => ${c.claimMs / 1000}), attempts = w.attempts + 1
    FROM job_events e
    WHERE w.id = ANY(${pickOnce(sql`SELECT id FROM ranked WHERE r <= room ORDER BY next_attempt_at, id LIMIT ${c.n}`)})
      AND e.job_id = w.job_id AND e.seq = w.event_seq
    RETURNING w.id, w.job_id, w.job_kind, w.event_seq, e.type, e.payload, w.url, w.origin, w.attempts, e.created_at AS event_at`);
  return res.rows
    .map((r) => ({ id: Number(r.id), jobId: r.job_id, jobKind: r.job_kind, eventSeq: r.event_seq, eventType: r.type, eventPayload: r.payload, url: r.url, origin: r.origin, attempt: r.attempts, eventAt: new Date(r.event_at) }))
    .sort((a, b) => a.id - b.id);
}

/** One attempt at sending a delivery. */
export interface DeliveryAttempt {
  attempt: number;
  startedAt: Date;
  durationMs: number;
  /** The receiver's status code; null when no response came (error says why). */
  statusCode: number | null;
  error: string | null;
}

/** Records the attempt and ends the delivery: delivered, retried after `retryInMs`, or given up (`retryInMs` null, "dead"). */
export async function recordDeliveryAttempt(db: Db, id: number, a: DeliveryAttempt, outcome: { delivered: true } | { delivered: false; retryInMs: number | null }) {
  const error = a.error?.slice(0, 1000) ?? null;
  const next = outcome.delivered
    ? sql`status = 'delivered', delivered_at = now(), last_error = NULL`
    : sql`status = ${outcome.retryInMs === null ? 'dead' : 'pending'}, last_error = ${error},
          next_attempt_at = now() + make_interval(secs => ${(outcome.retryInMs ?? 0) / 1000})`;
  await db.execute(sql`
    WITH attempt AS (
      INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error)
      VALUES (${id}, ${a.attempt}, ${a.startedAt.toISOString()}::timestamptz, ${Math.round(a.durationMs)}, ${a.statusCode}, ${error})
      ON CONFLICT DO NOTHING
    )
    UPDATE webhook_deliveries SET ${next} WHERE id = ${id}`);
}
