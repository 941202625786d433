import { sql } from 'drizzle-orm';
import type { Db } from './client';
import { webhookOutbox } from './schema/index';
import { pickOnce } from './pick';

export interface WebhookEventRow {
  jobId: string;
  url: string;
  headers?: Record<string, string> | null;
  payload: unknown;
}

export async function enqueueWebhook(db: Db, row: WebhookEventRow) {
  await db.insert(webhookOutbox).values({ ...row, headers: row.headers ?? null });
}

export interface DueWebhook {
  id: number;
  url: string;
  headers: Record<string, string> | null;
  payload: unknown;
  attempts: number;
}

/**
 * Takes up to n due deliveries and pushes their next attempt time forward (the claim), so
 * several workers can deliver side by side and a crashed deliverer's events come back later.
 * Events of one job are delivered in order: only the oldest pending event per job is due.
 */
export async function claimDueWebhooks(db: Db, n: number, claimMs: number): Promise<DueWebhook[]> {
  const res = await db.execute<{ id: number; url: string; headers: Record<string, string> | null; payload: unknown; attempts: number }>(sql`
    UPDATE webhook_outbox w SET next_attempt_at = now() + make_interval(secs => ${claimMs / 1000}), attempts = w.attempts + 1
    WHERE w.id = ANY(${pickOnce(sql`
      SELECT id FROM webhook_outbox o
      WHERE status = 'pending' AND next_attempt_at <= now()
        AND NOT EXISTS (SELECT 1 FROM webhook_outbox p WHERE p.job_id = o.job_id AND p.status = 'pending' AND p.id < o.id)
      ORDER BY id LIMIT ${n} FOR UPDATE SKIP LOCKED`)})
    RETURNING w.id, w.url, w.headers, w.payload, w.attempts`);
  return res.rows.map((r) => ({ ...r, id: Number(r.id) })).sort((a, b) => a.id - b.id);
}

export async function markWebhookDelivered(db: Db, id: number) {
  await db.execute(sql`UPDATE webhook_outbox SET status = 'delivered', delivered_at = now(), last_error = NULL WHERE id = ${id}`);
}

export async function markWebhookFailed(db: Db, id: number, error: string, retryInMs: number | null) {
  await db.execute(sql`
    UPDATE webhook_outbox SET last_error = ${error.slice(0, 1000)},
      status = ${retryInMs === null ? 'dead' : 'pending'},
      next_attempt_at = now() + make_interval(secs => ${(retryInMs ?? 0) / 1000})
    WHERE id = ${id}`);
}
