import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { jobs } from './jobs';
import { teams } from './teams';

/**
 * Extract jobs (POST /v2/extract). The pages are fetched through the frontier: each extract
 * job owns a frontier job (a `jobs` row of kind `extract` with its crawl_jobs extension) with the same id, so its URLs, leases and page
 * documents live in crawl_urls / crawl_documents like a batch scrape's. What the model made of
 * each page is in extract_pages; the merged answer in extract_jobs.
 */
export const extractJobs = pgTable(
  'extract_jobs',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    /** What the workers need (prompt, schema, page options, wildcards): written once by the API. */
    options: jsonb('options').notNull(),
    status: text('status').$type<'processing' | 'completed' | 'failed' | 'cancelled'>().notNull().default('processing'),
    /** The merged object (conforming to the schema when one was given). */
    data: jsonb('data'),
    /** Field path → URLs the value came from (returned with showSources). */
    sources: jsonb('sources'),
    warning: text('warning'),
    error: text('error'),
    /** Final figures, written when the job ends; while it runs, credits are read from the ledger. */
    tokensUsed: integer('tokens_used').notNull().default(0),
    creditsUsed: integer('credits_used').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull().default(sql`now() + interval '24 hours'`),
  },
  (t) => [
    index('extract_jobs_team_created_idx').on(t.teamId, t.createdAt),
    // The retention sweep's scan for expired extracts, oldest first (retention.ts deleteExpiredExtracts).
    index('extract_jobs_expires_idx').on(t.expiresAt),
  ],
);

/**
 * One row per page document of an extract job once the model step has dealt with it: what it
 * extracted (`extracted`), why it could not (`failed`), or why it was not asked (`skipped`:
 * an error page, an empty page, the credit limit). Keyed by the page's document, so a retried
 * step finds its row and does nothing twice.
 */
export const extractPages = pgTable(
  'extract_pages',
  {
    jobId: uuid('job_id').notNull().references(() => extractJobs.id, { onDelete: 'cascade' }),
    /** crawl_documents.seq of the page. */
    docSeq: bigint('doc_seq', { mode: 'number' }).notNull(),
    url: text('url').notNull(),
    status: text('status').$type<'extracted' | 'failed' | 'skipped'>().notNull(),
    data: jsonb('data'),
    /** The request named this URL (not found by wildcard expansion): ranks first in the merge. */
    named: boolean('named').notNull().default(false),
    /** Leaf values the page filled (non-null): the merge's tie-breaker between pages. */
    filled: integer('filled').notNull().default(0),
    reason: text('reason'),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    credits: integer('credits').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.docSeq] })],
);

/**
 * A crawl-params job's extension (POST /v2/crawl/params-preview and POST /v2/crawl with `prompt`):
 * the API writes the request, the wds-llm activity the derived options. The prompt stays here,
 * out of Temporal's history.
 */
export const crawlParamPreviews = pgTable('crawl_param_previews', {
  id: uuid('id').primaryKey().references(() => jobs.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  prompt: text('prompt').notNull(),
  /** The derived options, already validated by the crawl's schema. */
  result: jsonb('result'),
  warning: text('warning'),
  tokensUsed: integer('tokens_used').notNull().default(0),
});
