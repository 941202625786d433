import { bigint, boolean, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { jobs } from './jobs';

/**
 * Extract jobs (POST /v2/extract): the job kernel's row (schema/jobs.ts: team, kind `extract`,
 * status, the request's options, error, credits, times, expiry) with two extensions of the same
 * id. The pages are fetched through the frontier: a crawl_jobs extension holds the page limit and
 * counters, so its URLs, leases and page documents live in crawl_urls / crawl_documents like a batch
 * scrape's. What the model made of each page is in extract_pages; the merged answer here.
 */
export const extractJobs = pgTable('extract_jobs', {
  id: uuid('id').primaryKey().references(() => jobs.id, { onDelete: 'cascade' }),
  /** The merged object (conforming to the schema when one was given). */
  data: jsonb('data'),
  /** Field path → URLs the value came from (returned with showSources). */
  sources: jsonb('sources'),
  warning: text('warning'),
  /** Final figure, written when the job ends. */
  tokensUsed: integer('tokens_used').notNull().default(0),
});

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
