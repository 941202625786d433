import { index, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The politeness budget of each origin (scheme://host:port) for the whole deployment: when the
 * latest request start was reserved (the interval between starts is counted from it) and the
 * backoff a 429/503 put on it. Shared by every worker; the statements are the functions of
 * migration 0036 (one round trip each: wds_origin_take, wds_origin_backoff, wds_origin_recover).
 * UNLOGGED: a Postgres crash forgets budgets and backoffs, which only makes the next requests
 * start at once.
 */
export const originBudgets = pgTable('origin_budgets', {
  origin: text('origin').primaryKey(),
  /** The start reserved last (may lie in the future: a request waits for its turn). */
  lastStartAt: timestamp('last_start_at', { withTimezone: true }),
  /** No request starts before this (Retry-After, or the exponential backoff). */
  backoffUntil: timestamp('backoff_until', { withTimezone: true }),
  /** Steps of backoff: each 429/503 adds one, each recovery step on success removes one; while above 0 starts are spaced. */
  backoffLevel: integer('backoff_level').notNull().default(0),
  /** When a 429/503 last added a step: answers to requests started before it add none (they were in flight together). */
  backoffChangedAt: timestamp('backoff_changed_at', { withTimezone: true }),
  /** When a success last removed a step (one step per recovery interval). */
  recoveredAt: timestamp('recovered_at', { withTimezone: true }),
  /** What set the backoff (`429`, `503`, `connection resets`), for operators and the pages it holds. */
  backoffReason: text('backoff_reason'),
});

/**
 * Requests in flight per origin and holder (one worker process). A holder's rows count only while
 * its row in politeness_holders is alive, so the slots of a SIGKILLed worker come back when its
 * lease ends; the holder rewrites its own counts on every renewal (a lost release heals).
 */
export const originHolds = pgTable(
  'origin_holds',
  {
    origin: text('origin').notNull(),
    holder: text('holder').notNull(),
    inFlight: integer('in_flight').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.origin, t.holder] }), index('origin_holds_holder_idx').on(t.holder)],
);

/** Worker processes taking politeness slots, alive until `expires_at` (renewed a few times per lease). */
export const politenessHolders = pgTable('politeness_holders', {
  holder: text('holder').primaryKey(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
});
