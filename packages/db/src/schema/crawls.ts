import { sql } from 'drizzle-orm';
import { bigserial, boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { jobs } from './jobs';

/**
 * Crawls and batch scrapes: the job kernel's row (schema/jobs.ts: team, kind `crawl` | `batch`,
 * status, options, error, credits, times, expiry, zero data retention) with this extension holding
 * what is the frontier's: the start URL, the page limit and counters the status endpoint reads,
 * and when a zero-data-retention job's results were handed out. The frontier (crawl_urls, unique
 * per normalised URL) and the documents (one per URL key) hang off it and go with the job. An
 * extract job (schema/extracts.ts) owns a job of kind `extract` with such an extension for the
 * pages it fetches.
 */
export const crawlJobs = pgTable('crawl_jobs', {
  id: uuid('id').primaryKey().references(() => jobs.id, { onDelete: 'cascade' }),
  /** Start URL of a crawl; null for batches and zero-data-retention jobs. */
  url: text('url'),
  pageLimit: integer('page_limit').notNull(),
  /**
   * URLs claimed for the first time (the page limit is enforced against it at claim time).
   * The remaining counters are final values, written when the job ends; while it runs they
   * are counted from the frontier and documents (see liveCounters).
   */
  enqueued: integer('enqueued').notNull().default(0),
  completed: integer('completed').notNull().default(0),
  failed: integer('failed').notNull().default(0),
  /**
   * Zero data retention: when the ended job's results were handed out (its status read to the
   * last page). From then on its pages, frontier and events are deleted (retention.ts).
   */
  deliveredAt: timestamp('delivered_at', { withTimezone: true }),
});

export type CrawlUrlStatus = 'queued' | 'leased' | 'browser' | 'rendering' | 'llm' | 'done' | 'failed' | 'robots' | 'duplicate' | 'cancelled';

export const crawlUrls = pgTable(
  'crawl_urls',
  {
    jobId: uuid('job_id').notNull().references(() => crawlJobs.id, { onDelete: 'cascade' }),
    urlKey: text('url_key').notNull(),
    url: text('url').notNull(),
    depth: integer('depth').notNull().default(0),
    /**
     * queued → leased → done | failed | robots (blocked by robots.txt) | duplicate (a crawl page repeating
     * an earlier page's content or canonical URL: `duplicate_of`, no document) | cancelled; a page whose
     * request asks for model-made formats goes leased → llm (fetched, waiting in crawl_llm_pages)
     * → done | failed | cancelled; a page the browser engine renders (crawl-browser.ts) goes
     * leased → browser (handed over, waiting for a browser page activity) → rendering (leased to
     * one) → done | llm | failed | cancelled.
     */
    status: text('status').$type<CrawlUrlStatus>().notNull().default('queued'),
    /** Activity that holds the lease; a retried attempt of the same activity takes its rows back at once. */
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    attempts: integer('attempts').notNull().default(0),
    /** Id of the page's scrape (document metadata.scrapeId, or the error's id). */
    pageId: uuid('page_id').notNull().default(sql`gen_random_uuid()`),
    error: text('error'),
    /** External pages are scraped but their links are not followed. */
    external: boolean('external').notNull().default(false),
    /** Fetched only to discover links (a start URL outside includePaths): no document, not counted. */
    discoveryOnly: boolean('discovery_only').notNull().default(false),
    /**
     * Change tracking in a crawl: a URL known from earlier crawls of the site (page_versions) that no
     * page of this crawl links to, added once the linked frontier was exhausted (visibility `hidden`).
     */
    hidden: boolean('hidden').notNull().default(false),
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    doneAt: timestamp('done_at', { withTimezone: true }),
    /** Status `duplicate`: the URL key of the page this one repeats (crawl_fingerprints). */
    duplicateOf: text('duplicate_of'),
  },
  (t) => [
    primaryKey({ columns: [t.jobId, t.urlKey] }),
    // Partial: only URLs still to fetch (frontier.ts UNFINISHED_URL; claims.test.ts checks the
    // two agree). A finished URL leaves the index (its status change adds
    // no entry), and a statement that finds a job's URLs by key can only take the primary key:
    // with the whole index, a planner holding stale statistics (a table grown within the minute
    // before autovacuum's analyze) found a page group's URLs by scanning all of the job's.
    index('crawl_urls_claim_idx')
      .on(t.jobId, t.status, t.seq)
      .where(sql`${t.status} IN ('queued', 'leased', 'browser', 'rendering')`),
    // Failed, robots-blocked and duplicate URLs (errors, counters): few, read in frontier order.
    index('crawl_urls_problem_idx')
      .on(t.jobId, t.seq)
      .where(sql`${t.status} IN ('failed', 'robots', 'duplicate')`),
  ],
);

export const crawlDocuments = pgTable(
  'crawl_documents',
  {
    jobId: uuid('job_id').notNull().references(() => crawlJobs.id, { onDelete: 'cascade' }),
    urlKey: text('url_key').notNull(),
    /** Order of completion: pagination and the WebSocket stream read by it. */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    document: jsonb('document').notNull(),
    /** Credits this page cost (1, or its PDF pages): the job's creditsUsed is their sum. */
    credits: integer('credits').notNull().default(1),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.urlKey] }), index('crawl_documents_job_seq_idx').on(t.jobId, t.seq)],
);

/**
 * Pages fetched for a job whose scrapeOptions ask for model-made formats (json, summary, …):
 * the page's document waits here, unseen by status, pagination, WebSocket and webhooks, until
 * an LLM batch (wds-llm) claims it, runs the model and moves the enriched document into
 * crawl_documents (whose seq is then its completion order). A row exists while the work is
 * pending; it is leased to one LLM batch at a time, and after a retryable failure held back
 * until `lease_until` (the back-off).
 */
export const crawlLlmPages = pgTable(
  'crawl_llm_pages',
  {
    jobId: uuid('job_id').notNull().references(() => crawlJobs.id, { onDelete: 'cascade' }),
    urlKey: text('url_key').notNull(),
    /** Claim order: pages are enriched in the order they were fetched. */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    /** The document as fetched (with the markdown the model reads), before the model-made fields. */
    document: jsonb('document').notNull(),
    /** Credits of the page itself (1, or its PDF pages); the formats' credits are added when it completes. */
    credits: integer('credits').notNull().default(1),
    /** LLM batch activity holding the lease; null while the page is ready or backing off. */
    leaseOwner: text('lease_owner'),
    /** Not claimable before this (a lease, or a back-off after a retryable failure); null = ready. */
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    attempts: integer('attempts').notNull().default(0),
    /** The last retryable failure, kept as the page's error if the job's patience runs out. */
    lastError: text('last_error'),
    /**
     * The first retryable failure of its model step (null: none yet). The patience for provider
     * failures counts from here, not from the fetch: a page may wait long for its turn.
     */
    failingSince: timestamp('failing_since', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.urlKey] }), index('crawl_llm_pages_job_seq_idx').on(t.jobId, t.seq)],
);

/**
 * A crawl's page fingerprints (activities/src/crawl/duplicates.ts): a hash of the page's text and,
 * when it names one, of its canonical URL's key, each held by the first page that had it. A later
 * page with a fingerprint some other page holds is that page's duplicate. Hashes only: nothing of
 * the page's content or URL is kept here.
 */
export const crawlFingerprints = pgTable(
  'crawl_fingerprints',
  {
    jobId: uuid('job_id').notNull().references(() => crawlJobs.id, { onDelete: 'cascade' }),
    fingerprint: text('fingerprint').notNull(),
    urlKey: text('url_key').notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.fingerprint] })],
);

/** robots.txt, fetched once per origin per crawl. `body` null: none (404) or unreachable → everything allowed. */
export const crawlRobots = pgTable(
  'crawl_robots',
  {
    jobId: uuid('job_id').notNull().references(() => crawlJobs.id, { onDelete: 'cascade' }),
    origin: text('origin').notNull(),
    body: text('body'),
    fetchedAt: timestamp('fetched_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.origin] })],
);

/**
 * How a job's pages of one origin render, learned by its fetch batches (crawl-browser.ts): `rendered`
 * counts the origin's pages the HTTP engine found script-rendered and handed to the browser;
 * `static` is set once one of its HTML pages was served as fetched while the origin was still
 * undecided. An origin with ORIGIN_RENDERED_PAGES rendered pages and none static sends its further
 * pages straight to the browser engine, without the HTTP fetch that would only escalate them.
 */
export const crawlOriginEngines = pgTable(
  'crawl_origin_engines',
  {
    jobId: uuid('job_id').notNull().references(() => crawlJobs.id, { onDelete: 'cascade' }),
    origin: text('origin').notNull(),
    rendered: integer('rendered').notNull().default(0),
    static: boolean('static').notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.origin] })],
);
