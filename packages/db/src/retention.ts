import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import type { JobKind } from '@wds/workflows/jobs';
import { deleteExpiredJobs } from './jobs/index';
import { KEEPS_NOTHING_SQL } from './schema/scrapes';

/**
 * Zero data retention in Postgres. A ZDR request needs rows while it runs (its options for the
 * worker, a crawl's frontier, its pages until they are read); afterwards only what billing and
 * operations need stays: the job's row without URL or options (counters, status, times), its
 * ledger entries, its concurrency and rate counters. The rows go:
 * - a single scrape or parse: deleted by the API once it has answered (and, when the API died
 *   first, by `sweepRetention` once the request's time is up);
 * - a crawl or batch scrape (also the batch behind a search with ZDR scrapeOptions): its pages,
 *   frontier (URLs, errors), robots.txt copies, learned origin engines, model-step drafts and events (with their webhook
 *   deliveries) once its results are delivered — its ended status read to the last page
 *   (`markJobDelivered`) — or `resultTtlMs` after it ended if they never are.
 * Whatever the request asked, the results of a crawl, batch scrape, extract or agent job are kept
 * until its `expiresAt` (24 hours after it ended, Firecrawl's retention for them): then the job goes
 * whole (through the job kernel's `deleteExpiredJobs`: a crawl's, batch's or extract's frontier, pages,
 * drafts and model results cascade from the job), and
 * its status endpoints answer as for an unknown id. Its ledger entries stay. A monitor crawl whose
 * check has not collected its pages yet is held (its `expires_at` NULL until the check collects
 * it: crawl-jobs.ts finishJob, monitor-targets.ts).
 */

/**
 * Deletes the data of the ended ZDR frontier jobs that `cond` selects (a condition on `jobs j` and
 * its `crawl_jobs c`), in one statement; returns how many jobs.
 */
async function purgeJobs(db: Db, cond: SQL): Promise<number> {
  const r = await db.execute<{ n: number }>(sql`
    WITH j AS (
      SELECT j.id FROM jobs j JOIN crawl_jobs c ON c.id = j.id
      WHERE j.zero_data_retention AND j.status IN ('completed', 'failed', 'cancelled') AND j.finished_at IS NOT NULL AND ${cond}
    ), docs AS (DELETE FROM crawl_documents WHERE job_id IN (SELECT id FROM j)
    ), drafts AS (DELETE FROM crawl_llm_pages WHERE job_id IN (SELECT id FROM j)
    ), urls AS (DELETE FROM crawl_urls WHERE job_id IN (SELECT id FROM j)
    ), robots AS (DELETE FROM crawl_robots WHERE job_id IN (SELECT id FROM j)
    ), prints AS (DELETE FROM crawl_fingerprints WHERE job_id IN (SELECT id FROM j)
    ), origins AS (DELETE FROM crawl_origin_engines WHERE job_id IN (SELECT id FROM j)
    ), events AS (DELETE FROM job_events WHERE job_id IN (SELECT id FROM j)
    ), ext AS (UPDATE crawl_jobs SET url = NULL WHERE id IN (SELECT id FROM j) AND url IS NOT NULL
    ), job AS (
      -- The options held the URL patterns, headers and webhook; the flag stays so later writes keep nothing.
      UPDATE jobs SET options = '{"zeroDataRetention": true}'::jsonb,
        error = CASE WHEN error IS NULL THEN NULL ELSE jsonb_build_object('kind', error ->> 'kind', 'message', 'failed') END
      WHERE id IN (SELECT id FROM j) AND (options <> '{"zeroDataRetention": true}'::jsonb OR error ->> 'message' <> 'failed')
    )
    SELECT count(*)::int AS n FROM j`);
  return Number(r.rows[0]?.n ?? 0);
}

/**
 * The API handed out the last page of an ended zero-data-retention job's results: its data goes
 * now, unless a webhook delivery still needs it (the retention sweep takes it after the TTL).
 * Idempotent; false when nothing was purged (not ZDR, still running, or webhooks pending).
 */
export async function markJobDelivered(db: Db, jobId: string): Promise<boolean> {
  await db.execute(sql`UPDATE crawl_jobs c SET delivered_at = coalesce(c.delivered_at, now()) FROM jobs j
    WHERE c.id = ${jobId} AND j.id = c.id AND j.zero_data_retention AND j.status IN ('completed', 'failed', 'cancelled')`);
  const n = await purgeJobs(db, sql`j.id = ${jobId} AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE job_id = ${jobId} AND status = 'pending')`);
  return n > 0;
}

export interface RetentionSweep {
  /** How long an ended ZDR job's results wait to be read before they are deleted anyway (WDS_ZDR_RESULT_TTL_MS). */
  resultTtlMs: number;
  /** How long after its timeout a ZDR scrape's or parse's row may still be the API's (its answer being sent). */
  graceMs: number;
}

/** What one sweep deleted (counts of jobs; `jobs`: ZDR jobs whose data was purged, their rows kept). */
export interface RetentionSwept {
  scrapes: number;
  parses: number;
  /** Jobs of the kernel table deleted by the expiry path, by kind. */
  expired: Partial<Record<JobKind, number>>;
  jobs: number;
  /** Extracts (of `expired`). */
  extracts: number;
  /** Crawls and batch scrapes (of `expired`). */
  crawls: number;
}

/**
 * The control workers' retention sweep: deletes what zero-data-retention requests left behind —
 * scrape and parse rows whose API died before deleting them, and the data of ended ZDR jobs that
 * were delivered (pages a late worker wrote after the read, too) or whose TTL passed. Jobs that
 * ended more than a week ago were swept long before and are not looked at again. Also deletes
 * crawls, batch scrapes, extracts and agent jobs whose results expired (any, ZDR or not).
 */
export async function sweepRetention(db: Db, o: RetentionSweep): Promise<RetentionSwept> {
  const scrapes = await db.execute(sql`
    DELETE FROM scrape_jobs WHERE ${KEEPS_NOTHING_SQL}
      AND created_at < now() - make_interval(secs => (coalesce((options ->> 'timeout')::int, 60000) + ${o.graceMs}) / 1000.0)`);
  // Every kind on the job kernel expires here (a ZDR parse's row among them, at its request's end).
  const expired = await deleteExpiredJobs(db);
  const jobs = await purgeJobs(
    db,
    sql`j.finished_at > now() - interval '7 days' AND (c.delivered_at IS NOT NULL OR j.finished_at < now() - make_interval(secs => ${o.resultTtlMs / 1000}))`,
  );
  return { scrapes: scrapes.rowCount ?? 0, parses: expired.parse ?? 0, expired, jobs, extracts: expired.extract ?? 0, crawls: (expired.crawl ?? 0) + (expired.batch ?? 0) };
}
