import { and, asc, eq, inArray, notExists, sql } from 'drizzle-orm';
import type { Db } from './client';
import { crawlDocuments, crawlJobs, crawlLlmPages, crawlUrls, monitorCheckTargets } from './schema/index';
import { frontierInsert, UNFINISHED_URL, type FrontierEntry } from './frontier';
import { EXPIRES_FROM_NOW, RESULTS_KEPT } from './retention';

/**
 * Crawl and batch jobs as a whole: creating one with its seeds, reading it, its live counters, and
 * ending it (completed, failed, cancelled, or failed as stranded). Pages are in frontier.ts (which
 * URLs to fetch), crawl-pages.ts (storing a fetched page) and crawl-documents.ts (reading results).
 */

export interface NewCrawlJob {
  id: string;
  teamId: string;
  kind: 'crawl' | 'batch';
  url: string | null;
  options: unknown;
  pageLimit: number;
  zeroDataRetention: boolean;
  idempotencyKey?: string | null;
}

/**
 * Inserts a job and its seed URLs (a batch's list) in one transaction, so a job never exists
 * without its frontier. Its workflow is started after the commit; a job whose start never
 * happens is failed by the API (start refused) or by the workers' sweeper (API died first).
 */
export async function insertCrawlJob(db: Db, job: NewCrawlJob, seeds: FrontierEntry[] = []) {
  await db.transaction(async (tx) => {
    await tx.insert(crawlJobs).values(job);
    if (seeds.length) await tx.execute(frontierInsert(job.id, seeds));
  });
}

/** Inserts a job unless it exists (a monitor crawl target's job, created again by a retried activity). */
export async function ensureCrawlJob(db: Db, job: NewCrawlJob): Promise<void> {
  await db.insert(crawlJobs).values(job).onConflictDoNothing();
}

/**
 * Fails a job whose workflow is not running it: its start failed, the API died before starting
 * it, or the workflow ended without ending the job. Its idempotency key is released, so a retried
 * request starts a fresh job. False when the job had already ended.
 */
export async function failStrandedJob(db: Db, jobId: string, error: string): Promise<boolean> {
  const rows = await db
    .update(crawlJobs)
    .set({ status: 'failed', error, completedAt: new Date(), expiresAt: EXPIRES_FROM_NOW, idempotencyKey: null })
    .where(and(eq(crawlJobs.id, jobId), eq(crawlJobs.status, 'scraping')))
    .returning({ id: crawlJobs.id });
  return rows.length > 0;
}

/** Running jobs created more than `minAgeMs` ago, oldest first (candidates for the stranded-job sweep). */
export async function runningJobsOlderThan(db: Db, minAgeMs: number, limit: number): Promise<{ id: string; kind: 'crawl' | 'batch' | 'extract' }[]> {
  return db
    .select({ id: crawlJobs.id, kind: crawlJobs.kind })
    .from(crawlJobs)
    .where(and(eq(crawlJobs.status, 'scraping'), sql`${crawlJobs.createdAt} < now() - make_interval(secs => ${minAgeMs / 1000})`))
    .orderBy(asc(crawlJobs.createdAt))
    .limit(limit);
}

export async function findJobByIdempotencyKey(db: Db, teamId: string, key: string) {
  const [row] = await db
    .select({ id: crawlJobs.id })
    .from(crawlJobs)
    .where(and(eq(crawlJobs.teamId, teamId), eq(crawlJobs.idempotencyKey, key)));
  return row?.id ?? null;
}

export async function loadCrawlJob(db: Db, id: string) {
  const [row] = await db.select().from(crawlJobs).where(eq(crawlJobs.id, id));
  return row ?? null;
}

export async function loadTeamCrawlJob(db: Db, teamId: string, id: string, kind: 'crawl' | 'batch') {
  const [row] = await db
    .select()
    .from(crawlJobs)
    .where(and(eq(crawlJobs.id, id), eq(crawlJobs.teamId, teamId), eq(crawlJobs.kind, kind)));
  return row ?? null;
}

export async function jobStatus(db: Db, id: string) {
  const [row] = await db.select({ status: crawlJobs.status }).from(crawlJobs).where(eq(crawlJobs.id, id));
  return row?.status ?? null;
}

/** Counters of a running job, counted from its frontier and documents. */
export async function liveCounters(db: Db, jobId: string): Promise<{ total: number; completed: number; failed: number; creditsUsed: number }> {
  const res = await db.execute<{ total: number; completed: number; failed: number; credits: number }>(sql`
    SELECT
      (SELECT least(count(*), (SELECT page_limit FROM crawl_jobs WHERE id = ${jobId}))::int
         FROM crawl_urls WHERE job_id = ${jobId} AND NOT discovery_only AND status NOT IN ('robots', 'cancelled')) AS total,
      (SELECT count(*)::int FROM crawl_urls WHERE job_id = ${jobId} AND status = 'failed') AS failed,
      d.completed, d.credits
    FROM (SELECT count(*)::int AS completed, coalesce(sum(credits), 0)::int AS credits FROM crawl_documents WHERE job_id = ${jobId}) d`);
  const r = res.rows[0]!;
  return { total: Math.max(r.total, r.completed), completed: r.completed, failed: r.failed, creditsUsed: r.credits };
}

/** Ends a job unless it already ended (a cancel written by the API wins over a late completion). */
export async function finishJob(db: Db, jobId: string, status: 'completed' | 'failed' | 'cancelled', error?: string): Promise<{ status: string; changed: boolean }> {
  const c = await liveCounters(db, jobId);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(crawlJobs)
      .set({ status, error: error ?? null, completedAt: new Date(), expiresAt: EXPIRES_FROM_NOW, completed: c.completed, failed: c.failed, creditsUsed: c.creditsUsed })
      .where(and(eq(crawlJobs.id, jobId), eq(crawlJobs.status, 'scraping')))
      .returning({ status: crawlJobs.status });
    const final = row?.status ?? (await tx.select({ s: crawlJobs.status }).from(crawlJobs).where(eq(crawlJobs.id, jobId)))[0]?.s ?? status;
    if (final === 'cancelled') {
      await tx
        .update(crawlUrls)
        .set({ status: 'cancelled', leaseOwner: null, leaseUntil: null })
        .where(and(eq(crawlUrls.jobId, jobId), inArray(crawlUrls.status, [...UNFINISHED_URL, 'llm'])));
    }
    // Pages still waiting for their model step are never shown once the job has ended (a
    // completed job has none: its workflow waits for them).
    if (final !== 'scraping') await tx.delete(crawlLlmPages).where(eq(crawlLlmPages.jobId, jobId));
    // A job the API cancelled: its final counters are written now, once the work has stopped.
    // Its results expire 24 hours after that end (a retried call keeps the first end's).
    if (!row) {
      await tx
        .update(crawlJobs)
        .set({
          completedAt: sql`coalesce(${crawlJobs.completedAt}, now())`,
          expiresAt: sql`coalesce(${crawlJobs.completedAt}, now()) + ${RESULTS_KEPT}`,
          completed: c.completed, failed: c.failed, creditsUsed: c.creditsUsed,
        })
        .where(eq(crawlJobs.id, jobId));
    }
    return { status: final, changed: !!row };
  });
}

/** Marks a job cancelled (the API does this before cancelling the workflow). False when it had already ended. */
export async function markJobCancelled(db: Db, jobId: string): Promise<boolean> {
  const rows = await db
    .update(crawlJobs)
    .set({ status: 'cancelled' })
    .where(and(eq(crawlJobs.id, jobId), eq(crawlJobs.status, 'scraping')))
    .returning({ id: crawlJobs.id });
  return rows.length > 0;
}

/**
 * The team's running crawls (GET /v2/crawl/active): the crawls it started. A monitor crawl
 * target's crawl runs under the team too, but the team never asked for it: it is left out here
 * and shown by the monitor's checks (their targetResults name it, and GET /v2/crawl/{id} still
 * answers for it). Its check target row exists before the job does (the claim picks the id), so
 * such a crawl never shows here, not even for a moment.
 */
export async function activeCrawls(db: Db, teamId: string) {
  const byMonitor = db.select({ one: sql`1` }).from(monitorCheckTargets).where(eq(monitorCheckTargets.jobId, crawlJobs.id));
  return db
    .select({ id: crawlJobs.id, teamId: crawlJobs.teamId, url: crawlJobs.url, options: crawlJobs.options })
    .from(crawlJobs)
    .where(and(eq(crawlJobs.teamId, teamId), eq(crawlJobs.kind, 'crawl'), eq(crawlJobs.status, 'scraping'), notExists(byMonitor)))
    .orderBy(asc(crawlJobs.createdAt));
}
