import { index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { teams } from './teams';

/** Endpoint classes that carry their own requests-per-minute limit. */
export type LimitClass = 'scrape' | 'crawl' | 'batch' | 'map' | 'parse' | 'status' | 'other';

/**
 * Per-team limits set by an operator, overriding the deployment's defaults (API env) field by
 * field: null (or a class absent from rate_per_minute) = the default, 0 = no limit. Kept in
 * Postgres so every API process enforces the same numbers. credit_limit has no default (null = none).
 * max_monitors, agent_max_credits and interact_session_minutes bound what a team's jobs may spend
 * even without a credit limit (issue 38): their defaults come from the API's env too.
 */
export const teamLimits = pgTable('team_limits', {
  teamId: uuid('team_id').primaryKey().references(() => teams.id, { onDelete: 'cascade' }),
  /** Requests per minute by endpoint class, e.g. {"scrape": 100, "crawl": 15}. */
  ratePerMinute: jsonb('rate_per_minute').$type<Partial<Record<LimitClass, number>>>().notNull().default({}),
  /** Scrapes running at once for the team (concurrency-check, queue-status). */
  maxConcurrency: integer('max_concurrency'),
  /** Credits the team may use in total; beyond: 402. */
  creditLimit: integer('credit_limit'),
  /** Monitors the team may have (not deleted); one more: 403 MONITOR_LIMIT_REACHED. */
  maxMonitors: integer('max_monitors'),
  /** The largest `maxCredits` of one agent job, and the cap of a job that sets none; above: 400. */
  agentMaxCredits: integer('agent_max_credits'),
  /** Minutes one interact session may live (browser minutes billed at its end). */
  interactSessionMinutes: integer('interact_session_minutes'),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** Fixed one-minute windows of request counts, shared by all API processes (old windows are deleted lazily). */
export const rateWindows = pgTable(
  'rate_windows',
  {
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    limitClass: text('limit_class').notNull(),
    windowStart: timestamp('window_start', { withTimezone: true }).notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.limitClass, t.windowStart] })],
);

/**
 * Concurrency slots held by running scrapes (one row per admitted request). Taken under a
 * per-team advisory lock, so API processes never over-admit; a crashed API's slots expire.
 */
export const concurrencySlots = pgTable(
  'concurrency_slots',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('concurrency_slots_team_idx').on(t.teamId)],
);
