import { bigint, foreignKey, index, integer, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid, bigserial } from 'drizzle-orm/pg-core';
import { jobEvents } from './events';
import type { BillingKind } from './ledger';

/**
 * Webhook deliveries: one row per job event that a job's webhook subscribes to, written in the
 * statement that appends the event. The request body is built when it is sent (from the event
 * and, for a page, the stored document), so no content is copied here. Workers deliver them
 * with retries and backoff, in event order per job, so a slow or failing receiver never holds
 * a crawl back.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    jobId: uuid('job_id').notNull(),
    /** Which job table the webhook's settings come from (see activities/src/webhooks/sources.ts). */
    jobKind: text('job_kind').$type<BillingKind>().notNull(),
    eventSeq: integer('event_seq').notNull(),
    url: text('url').notNull(),
    /** scheme://host:port of `url`: deliveries run with bounded concurrency per origin. */
    origin: text('origin').notNull(),
    status: text('status').$type<'pending' | 'delivered' | 'dead'>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
  },
  (t) => [
    foreignKey({ columns: [t.jobId, t.eventSeq], foreignColumns: [jobEvents.jobId, jobEvents.seq], name: 'webhook_deliveries_event_fk' }).onDelete('cascade'),
    uniqueIndex('webhook_deliveries_event_idx').on(t.jobId, t.eventSeq),
    index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
  ],
);

/** Every attempt of a delivery: when, how long it took, and the receiver's status code or the error. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    deliveryId: bigint('delivery_id', { mode: 'number' }).notNull().references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    durationMs: integer('duration_ms').notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.attempt] })],
);
