import { and, asc, eq, sql } from 'drizzle-orm';
import { inTransaction, type Db } from './client';
import { enqueueUrls, type FrontierEntry } from './frontier';
import { crawlParamsJob } from '@wds/workflows/job-specs';
import type { JobStatus } from '@wds/workflows/jobs';
import { endJobSql, insertJobSql } from './jobs/index';
import { extractJobs, extractPages } from './schema/index';
import { EXPIRES_FROM_NOW } from './retention';
import { storable, storableText } from './text';

/**
 * Extract jobs (schema/extracts.ts): the job row, its frontier job (a `jobs` row of kind
 * `extract` with its crawl_jobs extension, same id) and the per-page model results. Every write a worker makes is
 * idempotent: a page result is keyed by its document, the job ends once.
 */

export interface NewExtractJob {
  id: string;
  teamId: string;
  options: unknown;
  /**
   * How its pages are fetched (the request's scrapeOptions as extract uses them): kept on the
   * frontier row too, as a crawl's `scrapeOptions`, because the statements that store its pages
   * read their rules from there (zero data retention and lockdown; whether a shared search index
   * may show a page to other teams).
   */
  pageOptions: unknown;
  /** Pages the job may fetch in all (named URLs plus what wildcards expand to). */
  pageLimit: number;
  /** Named (non-wildcard) URLs: the frontier's first entries. */
  seeds: FrontierEntry[];
}

/** The job, its frontier row and its named URLs in one transaction: a job never exists without its frontier. */
export async function insertExtractJob(db: Db, job: NewExtractJob): Promise<void> {
  await inTransaction(db, async (tx) => {
    await tx.insert(extractJobs).values({ id: job.id, teamId: job.teamId, options: job.options });
    // Its fetch phase is a frontier job of kind `extract` (the kernel's row, running until the pages are
    // fetched; no workflow id: the extract's own sweep judges it) with its crawl_jobs extension.
    const frontier = insertJobSql({ id: job.id, teamId: job.teamId, kind: 'extract', status: 'running', options: { scrapeOptions: job.pageOptions } });
    await tx.execute(sql`WITH j AS (${frontier}) INSERT INTO crawl_jobs (id, url, page_limit) SELECT id, NULL, ${job.pageLimit}::int FROM j`);
    if (job.seeds.length) await enqueueUrls(tx, job.id, job.seeds);
  });
}

export type ExtractJobRow = typeof extractJobs.$inferSelect;

export async function loadExtractJob(db: Db, id: string): Promise<ExtractJobRow | null> {
  const [row] = await db.select().from(extractJobs).where(eq(extractJobs.id, id));
  return row ?? null;
}

export async function loadTeamExtractJob(db: Db, teamId: string, id: string): Promise<ExtractJobRow | null> {
  const [row] = await db.select().from(extractJobs).where(and(eq(extractJobs.id, id), eq(extractJobs.teamId, teamId)));
  return row ?? null;
}

/**
 * A warning about the job found while it runs (its web search failed or found nothing), shown
 * with the result: set, not appended, so a retried step writes it once; the merge keeps it.
 */
export async function noteExtractWarning(db: Db, id: string, warning: string): Promise<void> {
  await db.update(extractJobs).set({ warning: storableText(warning) }).where(and(eq(extractJobs.id, id), eq(extractJobs.status, 'processing')));
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

/** Completes a running job with its answer; false when it had already ended (a retried step, a cancel). */
export async function completeExtractJob(db: Db, id: string, o: ExtractOutcome): Promise<boolean> {
  const rows = await db
    .update(extractJobs)
    .set({
      status: 'completed',
      data: storable(o.data ?? null),
      sources: storable(o.sources ?? null),
      warning: o.warning === null ? null : storableText(o.warning),
      tokensUsed: o.tokensUsed,
      creditsUsed: o.creditsUsed,
      completedAt: new Date(),
      // Results are kept 24 hours after the job ends (Firecrawl's documented retention).
      expiresAt: EXPIRES_FROM_NOW,
    })
    .where(and(eq(extractJobs.id, id), eq(extractJobs.status, 'processing')))
    .returning({ id: extractJobs.id });
  return rows.length > 0;
}

/** Ends a running job as failed or cancelled (its frontier row too); false when it had already ended. */
export async function endExtractJob(db: Db, id: string, status: 'failed' | 'cancelled', error: string | null, totals: { tokensUsed: number; creditsUsed: number }): Promise<boolean> {
  return db.transaction(async (tx) => {
    const rows = await tx
      .update(extractJobs)
      .set({ status, error: error === null ? null : storableText(error), ...totals, completedAt: new Date(), expiresAt: EXPIRES_FROM_NOW })
      .where(and(eq(extractJobs.id, id), eq(extractJobs.status, 'processing')))
      .returning({ id: extractJobs.id });
    await tx.execute(endJobSql(id, { status, error: error === null ? null : { kind: 'INTERNAL', message: error }, keptMs: null }));
    return rows.length > 0;
  });
}

/** Tokens the job's page and merge steps used (final figure for the job row). */
export async function extractTokensUsed(db: Db, jobId: string): Promise<number> {
  const r = await db.execute<{ n: number }>(sql`
    SELECT coalesce(sum(prompt_tokens + completion_tokens), 0)::int AS n FROM extract_pages WHERE job_id = ${jobId}`);
  return r.rows[0]!.n;
}

/**
 * Extract jobs still processing (fetching or past it), created more than `minAgeMs` ago, oldest
 * first: candidates for the extract's stranded-job sweep, which fails those no workflow runs.
 */
export async function processingExtractsOlderThan(db: Db, minAgeMs: number, limit: number): Promise<string[]> {
  const r = await db.execute<{ id: string }>(sql`
    SELECT id FROM extract_jobs WHERE status = 'processing' AND created_at < now() - make_interval(secs => ${minAgeMs / 1000})
    ORDER BY created_at LIMIT ${limit}`);
  return r.rows.map((x) => x.id);
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
