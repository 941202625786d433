import { sql } from 'drizzle-orm';
import { boolean, check, foreignKey, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid, type AnyPgColumn } from 'drizzle-orm/pg-core';
import type { JobKind, JobStatus } from '@wds/workflows/jobs';
import type { FailureRecord } from '@wds/workflows/common';
import { teams } from './teams';

/**
 * The job kernel: one row per job of every kind (workflows/src/jobs.ts has the vocabulary, each
 * kind's JobSpec the rules). A kind's own table is an extension of this row (`id` references it,
 * ON DELETE CASCADE), holding only what is that kind's: deleting the job deletes everything of it,
 * its events included. README (Jobs) has the rules.
 */
export const jobs = pgTable(
  'jobs',
  {
    id: uuid('id').primaryKey(),
    /** null only for a monitor run, which holds the checks of every team due in its shard. */
    teamId: uuid('team_id').references(() => teams.id, { onDelete: 'cascade' }),
    kind: text('kind').$type<JobKind>().notNull(),
    status: text('status').$type<JobStatus>().notNull().default('queued'),
    /** The kind's finer end word when its status alone does not say it (an agent's `refused`, a check's `partial`). */
    outcome: text('outcome'),
    /** The job this one belongs to and goes with (a sub-agent: its root). */
    parentId: uuid('parent_id'),
    /** The request's options with their defaults, as the workers read them ({} once a zero-data-retention job is purged). */
    options: jsonb('options').notNull().default(sql`'{}'::jsonb`),
    error: jsonb('error').$type<FailureRecord>(),
    /** The final figure, written when the job ends; while it runs the ledger has the live one. */
    creditsUsed: integer('credits_used').notNull().default(0),
    /** Unique per team and kind when set; released when the job fails to start (a retry starts afresh). */
    idempotencyKey: text('idempotency_key'),
    /** It keeps no content once delivered: zero data retention, or a lockdown scrape. */
    zeroDataRetention: boolean('zero_data_retention').notNull().default(false),
    /** The Temporal workflow that runs it; null while none is meant to (a scrape dispatched through Postgres). */
    workflowId: text('workflow_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    /** When the expiry path deletes it (set when it ends, from its spec); null: kept. */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
  },
  (t) => [
    foreignKey({ columns: [t.parentId], foreignColumns: [t.id] as [AnyPgColumn] }).onDelete('cascade'),
    check('jobs_status_check', sql`${t.status} IN ('queued', 'running', 'cancelling', 'completed', 'failed', 'cancelled')`),
    check('jobs_team_check', sql`${t.teamId} IS NOT NULL OR ${t.kind} = 'monitor_run'`),
    index('jobs_team_kind_created_idx').on(t.teamId, t.kind, t.createdAt),
    uniqueIndex('jobs_idempotency_idx').on(t.teamId, t.kind, t.idempotencyKey).where(sql`${t.idempotencyKey} IS NOT NULL`),
    // The stranded-job sweeper's scan: live jobs a workflow should be running.
    index('jobs_live_idx').on(t.createdAt).where(sql`${t.status} IN ('queued', 'running', 'cancelling') AND ${t.workflowId} IS NOT NULL`),
    // The expiry path's scan, oldest first.
    index('jobs_expires_idx').on(t.expiresAt).where(sql`${t.expiresAt} IS NOT NULL`),
    index('jobs_parent_idx').on(t.parentId).where(sql`${t.parentId} IS NOT NULL`),
  ],
);
export type JobRow = typeof jobs.$inferSelect;
