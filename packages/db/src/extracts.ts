import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from './client';
import { enqueueUrls, type FrontierEntry } from './frontier';
import { crawlParamsJob, extractJob } from '@wds/workflows/job-specs';
import type { JobStatus } from '@wds/workflows/jobs';
import { endJobSql, insertJobSql, shownExpiry, type JobEnd } from './jobs/index';
import { extractPages } from './schema/index';
import { storable, storableText } from './text';

/**
 * Extract jobs (schema/extracts.ts): the kernel's job row with its two extensions of the same id
 * (the frontier's crawl_jobs, the answer's extract_jobs) and the per-page model results. Every write a worker makes is
 * idempotent: a page result is keyed by its document, the job ends once.
 */

export interface NewExtractJob {
  id: string;
  teamId: string;
  options: unknown;
  /**
   * How its pages are fetched (the request's scrapeOptions as extract uses them): kept in the
   * job's options as a crawl's `scrapeOptions` too, because the statements that store its pages
   * read their rules from there (zero data retention and lockdown; whether a shared search index
   * may show a page to other teams).
   */
  pageOptions: unknown;
  /** Pages the job may fetch in all (named URLs plus what wildcards expand to). */
  pageLimit: number;
  /** Named (non-wildcard) URLs: the frontier's first entries. */
  seeds: FrontierEntry[];
}

/**
 * The job (running: the API starts its workflow next, and the stranded-job sweeper judges it from
 * then on), its two extensions and its named URLs in one transaction: a job never exists without
 * its frontier. Its options carry the page options as `scrapeOptions` too, because the statements
 * that store its pages read their rules from there.
 */
export async function insertExtractJob(db: Db, job: NewExtractJob): Promise<void> {
  const row = insertJobSql({
    id: job.id, teamId: job.teamId, kind: 'extract', status: 'running', workflowId: extractJob.workflowId(job.id),
    options: { ...(job.options as object), scrapeOptions: job.pageOptions },
  });
  await inTransaction(db, async (tx) => {
    await tx.execute(sql`WITH j AS (${row}), f AS (INSERT INTO crawl_jobs (id, url, page_limit) SELECT id, NULL, ${job.pageLimit}::int FROM j)
      INSERT INTO extract_jobs (id) SELECT id FROM j`);
    if (job.seeds.length) await enqueueUrls(tx, job.id, job.seeds);
  });
}

/** An extract job as its readers knew it before the kernel (the wire's words and fields). */
export interface ExtractJobRow {
  id: string;
  teamId: string;
  /** The request's options (StoredExtractOptions, with the page options as `scrapeOptions`). */
  options: unknown;
  /** The public word (extractJob.publicStatus): `processing` while live. */
  status: 'processing' | 'completed' | 'failed' | 'cancelled';
  data: unknown;
  sources: unknown;
  warning: string | null;
  /** The failure's message (the kernel keeps a FailureRecord). */
  error: string | null;
  tokensUsed: number;
  creditsUsed: number;
  createdAt: Date;
  completedAt: Date | null;
  /** 24 hours after it ended; while it runs, 24 hours after it started (as before). */
  expiresAt: Date;
}

const ROW = sql`j.id, j.team_id AS "teamId", j.options, j.status, e.data, e.sources, e.warning, j.error ->> 'message' AS error,
  e.tokens_used AS "tokensUsed", j.credits_used AS "creditsUsed", j.created_at AS "createdAt", j.finished_at AS "completedAt",
  ${shownExpiry(extractJob.resultsKeptMs!)} AS "expiresAt"`;

function rowOf(r: Omit<ExtractJobRow, 'status'> & { status: JobStatus }): ExtractJobRow {
  return {
    ...r, status: extractJob.publicStatus({ status: r.status, outcome: null }) as ExtractJobRow['status'],
    createdAt: new Date(r.createdAt), completedAt: r.completedAt ? new Date(r.completedAt) : null, expiresAt: new Date(r.expiresAt),
  };
}

export async function loadExtractJob(db: Db, id: string): Promise<ExtractJobRow | null> {
  const r = await db.execute<Omit<ExtractJobRow, 'status'> & { status: JobStatus }>(sql`SELECT ${ROW} FROM jobs j JOIN extract_jobs e ON e.id = j.id WHERE j.id = ${id}`);
  return r.rows[0] ? rowOf(r.rows[0]) : null;
}

export async function loadTeamExtractJob(db: Db, teamId: string, id: string): Promise<ExtractJobRow | null> {
  const r = await db.execute<Omit<ExtractJobRow, 'status'> & { status: JobStatus }>(
    sql`SELECT ${ROW} FROM jobs j JOIN extract_jobs e ON e.id = j.id WHERE j.id = ${id} AND j.team_id = ${teamId} AND j.kind = 'extract'`);
  return r.rows[0] ? rowOf(r.rows[0]) : null;
}

/**
 * A warning about the job found while it runs (its web search failed or found nothing), shown
 * with the result: set, not appended, so a retried step writes it once; the merge keeps it.
 */
export async function noteExtractWarning(db: Db, id: string, warning: string): Promise<void> {
  await db.execute(sql`UPDATE extract_jobs e SET warning = ${storableText(warning)} FROM jobs j
    WHERE e.id = ${id} AND j.id = e.id AND j.status IN ('queued', 'running', 'cancelling')`);
}

/** Page documents of the job that the model step has not dealt with yet, in fetch order (their seqs only). */
export async function extractDocsToDo(db: Db, jobId: string): Promise<number[]> {
  const r = await db.execute<{ seq: string }>(sql`
    SELECT d.seq FROM crawl_documents d
    WHERE d.job_id = ${jobId} AND NOT EXISTS (SELECT 1 FROM extract_pages p WHERE p.job_id = d.job_id AND p.doc_seq = d.seq)
    ORDER BY d.seq`);
  return r.rows.map((x) => Number(x.seq));
}

/** A page document of the job with its frontier entry: depth 0 = a URL the request named. */
export async function extractSourcePage(db: Db, jobId: string, docSeq: number): Promise<{ document: unknown; url: string; depth: number } | null> {
  const r = await db.execute<{ document: unknown; url: string; depth: number }>(sql`
    SELECT d.document, u.url, u.depth FROM crawl_documents d
    JOIN crawl_urls u ON u.job_id = d.job_id AND u.url_key = d.url_key
    WHERE d.job_id = ${jobId} AND d.seq = ${docSeq}`);
  return r.rows[0] ?? null;
}

export type ExtractPageRow = typeof extractPages.$inferSelect;
export type NewExtractPage = Omit<typeof extractPages.$inferInsert, 'createdAt'>;

/** Stores a page's result once; false when a row for the page existed already (a retried step). */
export async function storeExtractPage(db: Db, row: NewExtractPage): Promise<boolean> {
  const out = await db
    .insert(extractPages)
    .values({ ...row, data: row.data === undefined || row.data === null ? null : storable(row.data), reason: row.reason == null ? null : storableText(row.reason) })
    .onConflictDoNothing()
    .returning({ seq: extractPages.docSeq });
  return out.length > 0;
}

export async function loadExtractPage(db: Db, jobId: string, docSeq: number): Promise<ExtractPageRow | null> {
  const [row] = await db.select().from(extractPages).where(and(eq(extractPages.jobId, jobId), eq(extractPages.docSeq, docSeq)));
  return row ?? null;
}

export async function extractPageRows(db: Db, jobId: string): Promise<ExtractPageRow[]> {
  return db.select().from(extractPages).where(eq(extractPages.jobId, jobId)).orderBy(asc(extractPages.docSeq));
}

/** What happened to the job's URLs: pages stored, URLs that failed to scrape, URLs never fetched. */
export async function extractFrontierTally(db: Db, jobId: string): Promise<{ documents: number; failed: number; unfetched: number; failures: string[] }> {
  const r = await db.execute<{ documents: number; failed: number; unfetched: number; failures: string[] | null }>(sql`
    SELECT (SELECT count(*)::int FROM crawl_documents WHERE job_id = ${jobId}) AS documents,
           count(*) FILTER (WHERE status = 'failed')::int AS failed,
           count(*) FILTER (WHERE status IN ('queued', 'leased', 'cancelled'))::int AS unfetched,
           (array_agg(url || ': ' || coalesce(error, 'failed') ORDER BY seq) FILTER (WHERE status = 'failed'))[1:3] AS failures
    FROM crawl_urls WHERE job_id = ${jobId}`);
  const row = r.rows[0]!;
  return { documents: row.documents, failed: row.failed, unfetched: row.unfetched, failures: row.failures ?? [] };
}

export interface ExtractOutcome {
  data: unknown;
  sources: unknown;
  warning: string | null;
  tokensUsed: number;
  creditsUsed: number;
}

/** The job's end (one statement) with what its extension keeps; false when it had already ended (a retried step, a cancel). */
async function endExtractRow(db: Db, id: string, o: { end: JobEnd; ext: SQL }): Promise<boolean> {
  const r = await db.execute(sql`WITH j AS (${endJobSql(id, o.end)}) UPDATE extract_jobs SET ${o.ext} WHERE id IN (SELECT id FROM j)`);
  return (r.rowCount ?? 0) > 0;
}

/** Completes a running job with its answer; false when it had already ended (a retried step, a cancel). */
export async function completeExtractJob(db: Db, id: string, o: ExtractOutcome): Promise<boolean> {
  // Results are kept 24 hours after the job ends (Firecrawl's documented retention).
  const end: JobEnd = { status: 'completed', creditsUsed: o.creditsUsed, keptMs: extractJob.resultsKeptMs };
  const ext = sql`data = ${JSON.stringify(storable(o.data ?? null))}::jsonb, sources = ${JSON.stringify(storable(o.sources ?? null))}::jsonb,
    warning = ${o.warning === null ? null : storableText(o.warning)}, tokens_used = ${o.tokensUsed}::int`;
  return endExtractRow(db, id, { end, ext });
}

/** Ends a running job as failed or cancelled; false when it had already ended. */
export async function endExtractJob(db: Db, id: string, status: 'failed' | 'cancelled', error: string | null, totals: { tokensUsed: number; creditsUsed: number }): Promise<boolean> {
  const end: JobEnd = { status, error: error === null ? null : { kind: 'INTERNAL', message: storableText(error) }, creditsUsed: totals.creditsUsed, keptMs: extractJob.resultsKeptMs };
  return endExtractRow(db, id, { end, ext: sql`tokens_used = ${totals.tokensUsed}::int` });
}

/** Tokens the job's page and merge steps used (final figure for the job row). */
export async function extractTokensUsed(db: Db, jobId: string): Promise<number> {
  const r = await db.execute<{ n: number }>(sql`
    SELECT coalesce(sum(prompt_tokens + completion_tokens), 0)::int AS n FROM extract_pages WHERE job_id = ${jobId}`);
  return r.rows[0]!.n;
}

// ---- crawl params from a prompt ----

/** The job row (running: the API starts its workflow next) and the request, in one statement. */
export async function insertCrawlParamPreview(db: Db, row: { id: string; teamId: string; url: string; prompt: string }): Promise<void> {
  const job = insertJobSql({ id: row.id, teamId: row.teamId, kind: 'crawl_params', status: 'running', workflowId: crawlParamsJob.workflowId(row.id) });
  await db.execute(sql`WITH j AS (${job}) INSERT INTO crawl_param_previews (id, url, prompt) SELECT id, ${row.url}, ${storableText(row.prompt)} FROM j`);
}

export type CrawlParamPreview = {
  id: string;
  teamId: string;
  status: JobStatus;
  url: string;
  prompt: string;
  result: unknown;
  warning: string | null;
  tokensUsed: number;
};

export async function loadCrawlParamPreview(db: Db, id: string): Promise<CrawlParamPreview | null> {
  const r = await db.execute<CrawlParamPreview>(sql`
    SELECT j.id, j.team_id AS "teamId", j.status, p.url, p.prompt, p.result, p.warning, p.tokens_used AS "tokensUsed"
    FROM jobs j JOIN crawl_param_previews p ON p.id = j.id WHERE j.id = ${id}`);
  return r.rows[0] ?? null;
}

/** The derived options and the end, together; a retried activity finding the job ended changes nothing. */
export async function completeCrawlParamPreview(db: Db, id: string, r: { result: unknown; warning: string | null; tokensUsed: number }): Promise<void> {
  await db.execute(sql`
    WITH j AS (${endJobSql(id, { status: 'completed', keptMs: crawlParamsJob.resultsKeptMs })})
    UPDATE crawl_param_previews SET result = ${JSON.stringify(storable(r.result))}::jsonb, warning = ${r.warning}, tokens_used = ${r.tokensUsed}
    WHERE id IN (SELECT id FROM j)`);
}
