import { boolean, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { teams } from './teams';

/**
 * Interact sessions (POST/DELETE /v2/scrape/{id}/interact), one row per scrape: where its live
 * page is and in what state. `parked`: the scrape's own rendered page, kept by the browser worker
 * that rendered it for a first interaction; `live`: an interact session's page; `ended`: neither
 * (`end_reason` says why). `queue` is that browser worker's own task queue
 * (`wds-browser-<workerId>`): the only way a call reaches the process holding the page.
 */
export const interactSessions = pgTable(
  'interact_sessions',
  {
    scrapeId: uuid('scrape_id').primaryKey(),
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    queue: text('queue').notNull(),
    state: text('state').$type<'parked' | 'live' | 'ended'>().notNull(),
    endReason: text('end_reason'),
    /** The team concurrency slot (concurrency_slots.id) a live session holds; freed when it ends. */
    slotId: uuid('slot_id'),
    /** A prompt was run in this session (billed at the prompt rate). */
    prompted: boolean('prompted').notNull().default(false),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }).notNull().defaultNow(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
  },
  (t) => [index('interact_sessions_team_state_idx').on(t.teamId, t.state)],
);

/**
 * One interact call while it runs: what the caller sent (code or prompt), what the model made of
 * a prompt, and the answer. The session workflow carries only the call's id; the worker reads the
 * code from here and writes the answer here, and the API reads it and deletes the row.
 */
export const interactCalls = pgTable(
  'interact_calls',
  {
    id: uuid('id').primaryKey(),
    scrapeId: uuid('scrape_id').notNull(),
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    code: text('code'),
    prompt: text('prompt'),
    timeoutMs: integer('timeout_ms').notNull(),
    /** The page as the model saw it (prompt calls). */
    snapshot: jsonb('snapshot'),
    /** The code the model wrote for the prompt (what ran). */
    generatedCode: text('generated_code'),
    /** The answer's fields (result, stdout, stderr, exitCode, killed, error, output). */
    result: jsonb('result'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('interact_calls_created_idx').on(t.createdAt)],
);
