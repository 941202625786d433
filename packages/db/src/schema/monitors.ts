import { sql } from 'drizzle-orm';
import { bigserial, boolean, index, integer, jsonb, pgTable, primaryKey, smallint, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { teams } from './teams';

/**
 * Monitors (packages/db/src/monitors.ts). Postgres is the source of truth of every monitor's
 * schedule, pause state, next due time and running-check slot; Temporal Schedules only tick
 * (one per shard), and each tick claims the monitors that are due.
 */
export const monitors = pgTable(
  'monitors',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    status: text('status').$type<'active' | 'paused' | 'deleted'>().notNull().default('active'),
    /** Normalized schedule: {cron, timezone, text?}. */
    schedule: jsonb('schedule').$type<{ cron: string; timezone: string; text?: string }>().notNull(),
    /** Targets as the request gave them, each with its id. */
    targets: jsonb('targets').$type<Record<string, unknown>[]>().notNull(),
    webhook: jsonb('webhook').$type<{ url: string; headers?: Record<string, string>; metadata?: Record<string, unknown>; events?: string[] } | null>(),
    notification: jsonb('notification'),
    retentionDays: integer('retention_days').notNull().default(30),
    goal: text('goal'),
    judgeEnabled: boolean('judge_enabled').notNull().default(false),
    zeroDataRetention: boolean('zero_data_retention').notNull().default(false),
    estimatedCreditsPerMonth: integer('estimated_credits_per_month'),
    /** 0…4095 from the id: a tick of shard s of n claims monitors with shard_key % n = s. */
    shardKey: smallint('shard_key').notNull(),
    /** When the monitor is next due (cron + its jitter); null while paused or deleted. */
    nextRunAt: timestamp('next_run_at', { withTimezone: true }),
    lastRunAt: timestamp('last_run_at', { withTimezone: true }),
    /** The running-check slot: the check running now (a due time meanwhile records skipped_overlap). */
    runningCheckId: uuid('running_check_id'),
    lastCheckSummary: jsonb('last_check_summary'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('monitors_team_idx').on(t.teamId, t.createdAt),
    index('monitors_due_idx').on(t.nextRunAt).where(sql`status = 'active'`),
  ],
);

/** One check of a monitor: what ran (or why it did not) and its summary, written when it ends. */
export const monitorChecks = pgTable(
  'monitor_checks',
  {
    id: uuid('id').primaryKey(),
    monitorId: uuid('monitor_id').notNull().references(() => monitors.id, { onDelete: 'cascade' }),
    teamId: uuid('team_id').notNull(),
    /** The run (frontier job) whose workflow runs this check; null for skipped checks. */
    runId: uuid('run_id'),
    status: text('status').$type<'queued' | 'running' | 'completed' | 'failed' | 'partial' | 'skipped_overlap' | 'skipped_no_credits'>().notNull(),
    trigger: text('trigger').$type<'scheduled' | 'manual'>().notNull(),
    scheduledFor: timestamp('scheduled_for', { withTimezone: true }),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    estimatedCredits: integer('estimated_credits'),
    actualCredits: integer('actual_credits'),
    billingStatus: text('billing_status').$type<'not_applicable' | 'reserved' | 'confirmed' | 'released' | 'failed'>().notNull().default('not_applicable'),
    /** {totalPages, same, changed, new, removed, error}, written when the check ends. */
    summary: jsonb('summary'),
    targetResults: jsonb('target_results').$type<Record<string, unknown>[]>(),
    error: text('error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('monitor_checks_monitor_idx').on(t.monitorId, t.createdAt), index('monitor_checks_run_idx').on(t.runId)],
);

/**
 * One page of one check: its frontier row while it waits (queued → leased, claimed by the run's
 * batch activities like crawl URLs) and then its result (same, new, changed, removed, error).
 * An unchanged page refers to the version it matched; nothing is copied.
 */
export const monitorCheckPages = pgTable(
  'monitor_check_pages',
  {
    checkId: uuid('check_id').notNull().references(() => monitorChecks.id, { onDelete: 'cascade' }),
    targetId: text('target_id').notNull(),
    urlKey: text('url_key').notNull(),
    url: text('url').notNull(),
    id: uuid('id').notNull().default(sql`gen_random_uuid()`),
    runId: uuid('run_id'),
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    status: text('status').$type<'queued' | 'leased' | 'same' | 'new' | 'changed' | 'removed' | 'error'>().notNull().default('queued'),
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    attempts: integer('attempts').notNull().default(0),
    statusCode: integer('status_code'),
    error: text('error'),
    previousScrapeId: uuid('previous_scrape_id'),
    currentScrapeId: uuid('current_scrape_id'),
    metadata: jsonb('metadata'),
    diff: jsonb('diff'),
    snapshot: jsonb('snapshot'),
    credits: integer('credits').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.checkId, t.targetId, t.urlKey] }),
    index('monitor_check_pages_claim_idx').on(t.runId, t.seq).where(sql`status IN ('queued', 'leased')`),
    index('monitor_check_pages_order_idx').on(t.checkId, t.seq),
  ],
);

/** A run: the frontier job of the checks one tick (or one "run now") started; its workflow runs their pages. */
export const monitorRuns = pgTable('monitor_runs', {
  id: uuid('id').primaryKey(),
  kind: text('kind').$type<'scheduled' | 'manual'>().notNull(),
  status: text('status').$type<'scraping' | 'completed' | 'failed' | 'cancelled'>().notNull().default('scraping'),
  checks: integer('checks').notNull().default(0),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  finishedAt: timestamp('finished_at', { withTimezone: true }),
});
