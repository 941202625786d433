import { sql } from 'drizzle-orm';
import { index, integer, json, jsonb, pgTable, primaryKey, smallint, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { teams } from './teams';

/**
 * The operator's catalog of provider capabilities (`npm run catalog -- import FILE`); the
 * built-in capabilities live in code (packages/catalog) and are never stored. `entry` is the
 * declaration as validated by packages/catalog (endpoint, options JSON Schema, credit cost…);
 * `domains` is copied out of it so domain matching is one indexed array overlap.
 */
export const catalogEntries = pgTable(
  'catalog_entries',
  {
    provider: text('provider').notNull(),
    capability: text('capability').notNull(),
    /** `json`, not `jsonb`: the operator's key order (options as declared) is kept for listings. */
    entry: json('entry').notNull(),
    /** Lower-case registrable hosts (`example.com`) the capability's tools apply to; a page on any subdomain matches. */
    domains: text('domains').array().notNull().default(sql`'{}'::text[]`),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.capability] }), index('catalog_entries_domains_idx').using('gin', t.domains)],
);

/**
 * pending: stored by the API, its workflow not yet begun (nothing executed; a retry may start it);
 * running: the workflow began (credits reserved, calls may be executing);
 * completed: `response` holds the body every replay answers with;
 * unresolved: the workflow ended without an answer; what the calls did is unknown.
 * A request refused for credits (402) is deleted: nothing ran, and the id may be used again.
 */
export type CatalogRequestStatus = 'pending' | 'running' | 'completed' | 'unresolved';

/**
 * One catalog-mode request per (team, x-request-id): the idempotency record. `id` is the
 * request's `scrape_id` and its `chargeId` (the ledger keys of its calls start with it).
 */
export const catalogRequests = pgTable(
  'catalog_requests',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    requestId: text('request_id').notNull(),
    /** sha256 of the canonical calls: a reuse of the request id with other calls is a 409. */
    fingerprint: text('fingerprint').notNull(),
    /** The calls as validated (provider, capability, options): the workflow reads them from here. */
    calls: jsonb('calls').notNull(),
    timeoutMs: integer('timeout_ms').notNull(),
    status: text('status').$type<CatalogRequestStatus>().notNull().default('pending'),
    response: jsonb('response'),
    creditsUsed: integer('credits_used').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('catalog_requests_team_request_idx').on(t.teamId, t.requestId)],
);

/** Who bills a call: the catalog (its published price) or the WDS job it ran (a built-in scrape bills as any scrape). */
export type CatalogChargedBy = 'catalog' | 'job';

/** One call's outcome, written by the activity that ran it (idempotent per (request, idx)). */
export const catalogCallResults = pgTable(
  'catalog_call_results',
  {
    requestId: uuid('request_id').notNull().references(() => catalogRequests.id, { onDelete: 'cascade' }),
    idx: smallint('idx').notNull(),
    /** The call's entry of `data.alexandria`: `{provider, capability, creditsCost, data, …}` or `{provider, capability, error}`. */
    result: jsonb('result').notNull(),
    credits: integer('credits').notNull().default(0),
    chargedBy: text('charged_by').$type<CatalogChargedBy>().notNull().default('catalog'),
  },
  (t) => [primaryKey({ columns: [t.requestId, t.idx] })],
);

/**
 * Which version of a provider's third-party data terms a team accepted (spec: Authentication
 * rule 5). A provider whose catalog entry declares `terms` is called only for a team that
 * accepted that version; a new version needs a new acceptance.
 */
export const catalogTermsAcceptances = pgTable(
  'catalog_terms_acceptances',
  {
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    version: text('version').notNull(),
    acceptedAt: timestamp('accepted_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.provider] })],
);
