import { integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/**
 * What happened in a job, in order: crawl/batch `started`, `page`, `completed`, `failed`; agent
 * trace steps; monitor check results. `seq` counts 1, 2, 3… per job with no gaps (an append
 * takes the job's job_event_heads row, so appends of one job are serialised and a failed
 * append leaves no hole). The payload is small — ids and counts, never page content.
 */
export const jobEvents = pgTable(
  'job_events',
  {
    /** No foreign key: events of every job kind share the table. */
    jobId: uuid('job_id').notNull(),
    seq: integer('seq').notNull(),
    type: text('type').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull().default({}),
    /** Unique per job: appending the same key again is a no-op. */
    idempotencyKey: text('idempotency_key').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.seq] }), uniqueIndex('job_events_job_key_idx').on(t.jobId, t.idempotencyKey)],
);

/** The last sequence number given out per job (the row appends lock to stay gap-free). */
export const jobEventHeads = pgTable('job_event_heads', {
  jobId: uuid('job_id').primaryKey(),
  lastSeq: integer('last_seq').notNull(),
});
