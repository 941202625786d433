import { sql, type SQL } from 'drizzle-orm';
import { JOB_SPECS, crawlJob } from '@wds/workflows/job-specs';
import { crawlWords, isLive, type JobStatus } from '@wds/workflows/jobs';
import { inTransaction, type Db } from './client';
import { BACKOFF_OWNER, frontierInsert, UNFINISHED_URL, type FrontierEntry } from './frontier';
import { endJobSql, insertJobSql, shownExpiry } from './jobs/index';

/**
 * Crawl and batch jobs as a whole: the kernel's `jobs` row with its frontier extension
 * (schema/crawls.ts crawl_jobs): creating one with its seeds, reading it, its live counters, and
 * ending it (completed, failed, cancelled, or failed as stranded). Pages are in frontier.ts (which
 * URLs to fetch), crawl-pages.ts (storing a fetched page) and crawl-documents.ts (reading results).
 */

export type CrawlKind = 'crawl' | 'batch';
/** The status words of crawl_jobs before the kernel, still the ones on the wire and the workers' (crawlWords). */
export type CrawlStatus = 'scraping' | 'completed' | 'failed' | 'cancelled';

export interface NewCrawlJob {
  id: string;
  teamId: string;
  kind: CrawlKind;
  url: string | null;
  options: unknown;
  pageLimit: number;
  zeroDataRetention: boolean;
  idempotencyKey?: string | null;
}

/**
 * The job row (running: its workflow is started next, and judged by the stranded-job sweeper from
 * then on) and its extension, in one statement.
 */
function insertSql(job: NewCrawlJob): SQL {
  const row = insertJobSql({
    id: job.id, teamId: job.teamId, kind: job.kind, status: 'running', options: job.options,
    zeroDataRetention: job.zeroDataRetention, idempotencyKey: job.idempotencyKey ?? null, workflowId: JOB_SPECS[job.kind].workflowId(job.id),
  });
  return sql`WITH j AS (${row}) INSERT INTO crawl_jobs (id, url, page_limit) SELECT id, ${job.url}, ${job.pageLimit}::int FROM j`;
}

/**
 * Inserts a job and its seed URLs (a batch's list) in one transaction, so a job never exists
 * without its frontier. Its workflow is started after the commit; a job whose start never
 * happens is failed by the API (start refused) or by the workers' stranded-job sweeper (API died first).
 * Returns the id of the job now holding the request: its own, or the twin's that took its
 * idempotency key first (two requests racing with one key: both answer with one job).
 */
export async function insertCrawlJob(db: Db, job: NewCrawlJob, seeds: FrontierEntry[] = []): Promise<string> {
  try {
    await inTransaction(db, async (tx) => {
      await tx.execute(insertSql(job));
      if (seeds.length) await tx.execute(frontierInsert(job.id, seeds));
    });
    return job.id;
  } catch (e) {
    const twin = job.idempotencyKey && (e as { cause?: { constraint?: string } }).cause?.constraint === 'jobs_idempotency_idx'
      ? await findJobByIdempotencyKey(db, job.teamId, job.idempotencyKey)
      : null;
    if (!twin) throw e;
    return twin;
  }
}

/**
 * Inserts a job unless it exists (a monitor crawl target's job, created again by a retried
 * activity; two attempts never run at once, and a racing twin would fail on the key and retry).
 */
export async function ensureCrawlJob(db: Db, job: NewCrawlJob): Promise<void> {
  await inTransaction(db, async (tx) => {
    if (!(await tx.execute(sql`SELECT 1 FROM jobs WHERE id = ${job.id}`)).rows.length) await tx.execute(insertSql(job));
  });
}

/** The running batch a team's idempotency key names, if any (its key is released when it failed to start). */
export async function findJobByIdempotencyKey(db: Db, teamId: string, key: string): Promise<string | null> {
  const r = await db.execute<{ id: string }>(sql`SELECT id FROM jobs WHERE team_id = ${teamId} AND kind = 'batch' AND idempotency_key = ${key}`);
  return r.rows[0]?.id ?? null;
}

/** A crawl or batch job as its readers knew it before the kernel (the wire's words and fields). */
export interface CrawlJobRow {
  id: string;
  teamId: string;
  kind: CrawlKind | 'extract';
  url: string | null;
  options: unknown;
  /** The public word (crawlWords): `scraping` while live, `cancelled` from the moment a cancel is asked. */
  status: CrawlStatus;
  /** The kernel's status (`cancelling` while a cancelled job's workflow still stops it). */
  jobStatus: JobStatus;
  pageLimit: number;
  enqueued: number;
  completed: number;
  failed: number;
  creditsUsed: number;
  /** The failure's message (the kernel keeps a FailureRecord). */
  error: string | null;
  zeroDataRetention: boolean;
  deliveredAt: Date | null;
  createdAt: Date;
  /** When the job ended (its kernel row's finished_at). */
  completedAt: Date | null;
  /** When its results go: 24 hours after it ended; while it runs, 24 hours after it started (as Firecrawl answers). */
  expiresAt: Date;
}

const ROW = sql`j.id, j.team_id AS "teamId", j.kind, c.url, j.options, j.status AS "jobStatus", c.page_limit AS "pageLimit", c.enqueued,
  c.completed, c.failed, j.credits_used AS "creditsUsed", j.error ->> 'message' AS error, j.zero_data_retention AS "zeroDataRetention",
  c.delivered_at AS "deliveredAt", j.created_at AS "createdAt", j.finished_at AS "completedAt",
  ${shownExpiry(crawlJob.resultsKeptMs!)} AS "expiresAt"`;

type RawRow = Omit<CrawlJobRow, 'status'>;
function rowOf(r: RawRow): CrawlJobRow {
  const date = (v: Date | string | null) => (v == null ? null : new Date(v));
  return {
    ...r, status: crawlWords({ status: r.jobStatus, outcome: null }) as CrawlStatus,
    deliveredAt: date(r.deliveredAt), createdAt: date(r.createdAt)!, completedAt: date(r.completedAt), expiresAt: date(r.expiresAt)!,
  };
}

/** A frontier job by id (crawl, batch, or an extract's fetch phase): the job and its extension by primary key. */
export async function loadCrawlJob(db: Db, id: string): Promise<CrawlJobRow | null> {
  const r = await db.execute<RawRow>(sql`SELECT ${ROW} FROM jobs j JOIN crawl_jobs c ON c.id = j.id WHERE j.id = ${id}`);
  return r.rows[0] ? rowOf(r.rows[0]) : null;
}

/** A team's crawl or batch (another team's id, or another kind's, reads as missing). */
export async function loadTeamCrawlJob(db: Db, teamId: string, id: string, kind: CrawlKind): Promise<CrawlJobRow | null> {
  const r = await db.execute<RawRow>(sql`SELECT ${ROW} FROM jobs j JOIN crawl_jobs c ON c.id = j.id WHERE j.id = ${id} AND j.team_id = ${teamId} AND j.kind = ${kind}`);
  return r.rows[0] ? rowOf(r.rows[0]) : null;
}

/** The job's public status word (`scraping` while its frontier takes work), null when it is gone. */
export async function jobStatus(db: Db, id: string): Promise<CrawlStatus | null> {
  const r = await db.execute<{ status: JobStatus }>(sql`SELECT status FROM jobs WHERE id = ${id}`);
  return r.rows[0] ? (crawlWords({ status: r.rows[0].status, outcome: null }) as CrawlStatus) : null;
}

/** Counters of a running job, counted from its frontier and documents. */
export async function liveCounters(db: Db, jobId: string): Promise<{ total: number; completed: number; failed: number; creditsUsed: number; backoff?: { pages: number; retryAt: Date } }> {
  const res = await db.execute<{ total: number; completed: number; failed: number; credits: number; waiting: number; retry_at: Date | string | null }>(sql`
    SELECT
      (SELECT least(count(*), (SELECT page_limit FROM crawl_jobs WHERE id = ${jobId}))::int
         FROM crawl_urls WHERE job_id = ${jobId} AND NOT discovery_only AND status NOT IN ('robots', 'duplicate', 'cancelled')) AS total,
      (SELECT count(*)::int FROM crawl_urls WHERE job_id = ${jobId} AND status = 'failed') AS failed,
      w.waiting, w.retry_at,
      d.completed, d.credits
    FROM (SELECT count(*)::int AS completed, coalesce(sum(credits), 0)::int AS credits FROM crawl_documents WHERE job_id = ${jobId}) d,
      (SELECT count(*)::int AS waiting, min(lease_until) AS retry_at FROM crawl_urls
         WHERE job_id = ${jobId} AND status IN ('leased', 'rendering') AND lease_owner = ${BACKOFF_OWNER}) w`);
  const r = res.rows[0]!;
  // Pages waiting for their site's backoff (429/503), and the earliest time one is retried.
  const backoff = r.waiting > 0 && r.retry_at ? { backoff: { pages: r.waiting, retryAt: new Date(r.retry_at) } } : {};
  return { total: Math.max(r.total, r.completed), completed: r.completed, failed: r.failed, creditsUsed: r.credits, ...backoff };
}

export interface JobOutcome {
  outcome: 'completed' | 'failed' | 'cancelled';
  /** A failure's message. */
  error?: string;
  /** The job never ran (its start was refused, or it was stranded): its idempotency key is freed. */
  releaseKey?: boolean;
}

export interface FinishedJob {
  status: CrawlStatus;
  /** This call ended a job nobody had asked to cancel (false: it had ended, or was being cancelled). */
  changed: boolean;
  /** This call wrote the job's end (a cancelled job's too). */
  ended: boolean;
}

/**
 * Ends a job unless it already ended, with its final counters: a cancel asked by the API wins over
 * a late completion or failure (the job is `cancelling`, and ends `cancelled`). Its results expire
 * 24 hours after the end; a monitor crawl whose check
 * has not collected its pages yet is held until it has (monitor-targets.ts). An extract's call ends
 * only its fetch phase (final counters, URLs cancelled, drafts dropped; `ended` false): the extract
 * ends after its model steps (extracts.ts).
 */
export async function finishJob(db: Db, jobId: string, end: JobOutcome): Promise<FinishedJob> {
  const { outcome, error } = end;
  const c = await liveCounters(db, jobId);
  return inTransaction(db, async (tx) => {
    const [job] = (await tx.execute<{ kind: string; status: JobStatus }>(sql`SELECT kind, status FROM jobs WHERE id = ${jobId} FOR NO KEY UPDATE`)).rows;
    if (!job) return { status: outcome, changed: false, ended: false };
    const status = job.status === 'cancelling' ? 'cancelled' : outcome;
    // An extract's fetch phase ends here, the extract itself later (its model steps, endExtract): its row stays live.
    const fetchPhase = job.kind === 'extract';
    const ended = fetchPhase
      ? { rowCount: isLive(job.status) ? 1 : 0 }
      : await tx.execute(endJobSql(jobId, {
        status, error: status === 'failed' ? { kind: 'INTERNAL', message: error ?? 'The job failed' } : null,
        creditsUsed: c.creditsUsed, keptMs: crawlJob.resultsKeptMs, releaseKey: end.releaseKey,
      }));
    const changed = (ended.rowCount ?? 0) > 0;
    const final = changed ? status : (crawlWords({ status: job.status, outcome: null }) as CrawlStatus);
    if (changed) {
      await tx.execute(sql`UPDATE crawl_jobs SET completed = ${c.completed}, failed = ${c.failed} WHERE id = ${jobId}`);
      await tx.execute(sql`UPDATE jobs SET expires_at = NULL WHERE id = ${jobId}
        AND EXISTS (SELECT 1 FROM monitor_check_targets WHERE job_id = ${jobId} AND status = 'pending')`);
    }
    if (final === 'cancelled') {
      await tx.execute(sql`UPDATE crawl_urls SET status = 'cancelled', lease_owner = NULL, lease_until = NULL
        WHERE job_id = ${jobId} AND status = ANY(${sql.param([...UNFINISHED_URL, 'llm'])}::text[])`);
    }
    // Pages still waiting for their model step are never shown once the job has ended (a
    // completed job has none: its workflow waits for them).
    if (final !== 'scraping') await tx.execute(sql`DELETE FROM crawl_llm_pages WHERE job_id = ${jobId}`);
    // "changed" as before the kernel: this call ended a job nobody had cancelled.
    return { status: final, changed: changed && job.status !== 'cancelling', ended: changed && !fetchPhase };
  });
}

/**
 * The UPDATE releasing the expiry of ended monitor crawls whose check has now collected them (held
 * by finishJob while it had not): 24 hours from their end, as any crawl's. `jobIds`: a subquery.
 */
export const releaseCollectedCrawls = (jobIds: SQL): SQL =>
  sql`UPDATE jobs SET expires_at = finished_at + make_interval(secs => ${crawlJob.resultsKeptMs! / 1000}) WHERE id IN (${jobIds}) AND expires_at IS NULL AND finished_at IS NOT NULL AND kind = 'crawl'`;


/**
 * The team's running crawls (GET /v2/crawl/active): the crawls it started. A monitor crawl
 * target's crawl runs under the team too, but the team never asked for it: it is left out here
 * and shown by the monitor's checks (their targetResults name it, and GET /v2/crawl/{id} still
 * answers for it). Its check target row exists before the job does (the claim picks the id), so
 * such a crawl never shows here, not even for a moment.
 */
export async function activeCrawls(db: Db, teamId: string): Promise<{ id: string; teamId: string; url: string | null; options: unknown }[]> {
  const r = await db.execute<{ id: string; teamId: string; url: string | null; options: unknown }>(sql`
    SELECT j.id, j.team_id AS "teamId", c.url, j.options FROM jobs j JOIN crawl_jobs c ON c.id = j.id
    WHERE j.team_id = ${teamId} AND j.kind = 'crawl' AND j.status IN ('queued', 'running')
      AND NOT EXISTS (SELECT 1 FROM monitor_check_targets t WHERE t.job_id = j.id)
    ORDER BY j.created_at`);
  return r.rows;
}
