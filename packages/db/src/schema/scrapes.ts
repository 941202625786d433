import { sql } from 'drizzle-orm';
import { customType, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { teams } from './teams';

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

/** A scrape whose options ask that nothing of it be kept (zero data retention, lockdown). */
export const KEEPS_NOTHING_SQL = sql.raw(`(options ->> 'zeroDataRetention' = 'true' OR options ->> 'lockdown' = 'true')`);

/**
 * One row per scrape request. The API inserts it with the validated options; the worker's
 * activity writes `document` (or `error`) and the status. Only the id crosses Temporal.
 */
export const scrapeJobs = pgTable(
  'scrape_jobs',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    /** null for zero-data-retention requests. */
    url: text('url'),
    options: jsonb('options').notNull(),
    status: text('status').$type<'pending' | 'completed' | 'failed'>().notNull().default('pending'),
    document: jsonb('document'),
    error: jsonb('error'),
    creditsUsed: integer('credits_used').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    /**
     * `direct`: dispatched through Postgres to a fetch worker (scrape-queue.ts), which leases it;
     * null: a Temporal workflow runs it (browser, model formats, WDS_SCRAPE_FETCH=queue/local).
     */
    dispatch: text('dispatch').$type<'direct'>(),
    /** The worker holding a direct scrape (`host:pid:tag`) and until when; an expired lease is taken over. */
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    /** Direct scrapes: attempts started (a worker that dies mid-scrape costs one). */
    attempts: integer('attempts').notNull().default(0),
  },
  (t) => [
    index('scrape_jobs_team_created_idx').on(t.teamId, t.createdAt),
    // What fetch workers sweep for: direct scrapes nobody holds (a lost notification, a dead worker).
    index('scrape_jobs_direct_pending_idx').on(t.createdAt).where(sql`status = 'pending' AND dispatch = 'direct'`),
    // The rows a zero-data-retention or lockdown scrape leaves when its API died before deleting
    // it: the control workers' retention sweep finds them by age (retention.ts).
    index('scrape_jobs_keep_nothing_idx').on(t.createdAt).where(sql`${KEEPS_NOTHING_SQL}`),
  ],
);

/**
 * The page cache: the raw fetched page, keyed by URL plus every option that changes what
 * the target sends back (see cacheKey), so requests that differ only in formats or cleaning
 * options share one entry. `outputs` keeps what converting the page produced, by conversion
 * options (@wds/documents outputsVariant → formats): a hit whose formats are there is served
 * without converting; it is replaced with the body, so it always belongs to this body.
 */
export const pageCache = pgTable(
  'page_cache',
  {
    cacheKey: text('cache_key').primaryKey(),
    url: text('url').notNull(),
    finalUrl: text('final_url').notNull(),
    statusCode: integer('status_code').notNull(),
    contentType: text('content_type').notNull(),
    /** Response charset decided at fetch time, so a hit decodes exactly like the miss did. */
    charset: text('charset'),
    /**
     * The response body as `body_encoding` says: `br` (brotli, compressed by the writer, see
     * scrapes.ts) or null (the bytes as fetched: small bodies, rows written before migration 0028).
     * Stored as it comes (STORAGE EXTERNAL): Postgres's pglz is not offered it.
     */
    body: bytea('body').notNull(),
    bodyEncoding: text('body_encoding'),
    engine: text('engine').notNull(),
    fetchedAt: timestamp('fetched_at', { withTimezone: true }).notNull().defaultNow(),
    outputs: jsonb('outputs').$type<Record<string, object>>(),
  },
  (t) => [index('page_cache_url_idx').on(t.url)],
);
