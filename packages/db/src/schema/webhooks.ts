import { index, integer, jsonb, pgTable, text, timestamp, uuid, bigserial } from 'drizzle-orm/pg-core';

/**
 * Webhook outbox: jobs append events here inside their own transactions; workers deliver
 * them with retries and backoff, so a slow or failing receiver never holds a crawl back.
 */
export const webhookOutbox = pgTable(
  'webhook_outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    jobId: uuid('job_id').notNull(),
    url: text('url').notNull(),
    headers: jsonb('headers').$type<Record<string, string>>(),
    payload: jsonb('payload').notNull(),
    status: text('status').$type<'pending' | 'delivered' | 'dead'>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
  },
  (t) => [index('webhook_outbox_due_idx').on(t.status, t.nextAttemptAt), index('webhook_outbox_job_idx').on(t.jobId, t.status, t.id)],
);
