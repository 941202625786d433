import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
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
 * Whatever the request asked, an extract's results are kept until its `expiresAt` (24 hours after
 * it ended, Firecrawl's retention for extract results): then the job goes whole (`deleteExpiredExtracts`).
 */

/** Deletes the data of the ended ZDR jobs that `cond` selects (a condition on crawl_jobs), in one statement; returns how many jobs. */
async function purgeJobs(db: Db, cond: SQL): Promise<number> {
  const r = await db.execute<{ n: number }>(sql`
    WITH j AS (
      SELECT id FROM crawl_jobs WHERE zero_data_retention AND status <> 'scraping' AND completed_at IS NOT NULL AND ${cond}
    ), docs AS (DELETE FROM crawl_documents WHERE job_id IN (SELECT id FROM j)
    ), drafts AS (DELETE FROM crawl_llm_pages WHERE job_id IN (SELECT id FROM j)
    ), urls AS (DELETE FROM crawl_urls WHERE job_id IN (SELECT id FROM j)
    ), robots AS (DELETE FROM crawl_robots WHERE job_id IN (SELECT id FROM j)
    ), origins AS (DELETE FROM crawl_origin_engines WHERE job_id IN (SELECT id FROM j)
    ), events AS (DELETE FROM job_events WHERE job_id IN (SELECT id FROM j)
    ), job AS (
      -- The options held the URL patterns, headers and webhook; the flag stays so later writes keep nothing.
      UPDATE crawl_jobs SET url = NULL, options = '{"zeroDataRetention": true}'::jsonb, error = CASE WHEN error IS NULL THEN NULL ELSE 'failed' END
      WHERE id IN (SELECT id FROM j) AND (url IS NOT NULL OR options <> '{"zeroDataRetention": true}'::jsonb)
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
  await db.execute(sql`UPDATE crawl_jobs SET delivered_at = coalesce(delivered_at, now()) WHERE id = ${jobId} AND zero_data_retention AND status <> 'scraping'`);
  const n = await purgeJobs(db, sql`id = ${jobId} AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE job_id = ${jobId} AND status = 'pending')`);
  return n > 0;
}

/** Expired extracts deleted per sweep: a backlog (after downtime) goes over several sweeps, each statement short. */
const EXTRACTS_PER_SWEEP = 500;

/**
 * Deletes ended extract jobs whose results expired: the extract row (its per-page model results
 * cascade), its frontier job of kind `extract` (URLs, page documents, drafts, robots copies
 * cascade) and its events (webhook deliveries cascade). Ledger entries stay: they are billing.
 * A running extract is never taken, whatever its dates.
 */
export async function deleteExpiredExtracts(db: Db, limit = EXTRACTS_PER_SWEEP): Promise<number> {
  const r = await db.execute<{ n: number }>(sql`
    WITH x AS (
      SELECT id FROM extract_jobs WHERE status <> 'processing' AND expires_at < now() ORDER BY expires_at LIMIT ${limit}
    ), frontier AS (DELETE FROM crawl_jobs WHERE id IN (SELECT id FROM x) AND kind = 'extract'
    ), events AS (DELETE FROM job_events WHERE job_id IN (SELECT id FROM x)
    ), heads AS (DELETE FROM job_event_heads WHERE job_id IN (SELECT id FROM x)
    ), gone AS (DELETE FROM extract_jobs WHERE id IN (SELECT id FROM x) RETURNING 1)
    SELECT count(*)::int AS n FROM gone`);
  return Number(r.rows[0]?.n ?? 0);
}

export interface RetentionSweep {
  /** How long an ended ZDR job's results wait to be read before they are deleted anyway (WDS_ZDR_RESULT_TTL_MS). */
  resultTtlMs: number;
  /** How long after its timeout a ZDR scrape's or parse's row may still be the API's (its answer being sent). */
  graceMs: number;
}

/**
 * The control workers' retention sweep: deletes what zero-data-retention requests left behind —
 * scrape and parse rows whose API died before deleting them, and the data of ended ZDR jobs that
 * were delivered (pages a late worker wrote after the read, too) or whose TTL passed. Jobs that
 * ended more than a week ago were swept long before and are not looked at again. Also deletes
 * extracts whose results expired (any extract, ZDR or not).
 */
export async function sweepRetention(db: Db, o: RetentionSweep): Promise<{ scrapes: number; parses: number; jobs: number; extracts: number }> {
  const scrapes = await db.execute(sql`
    DELETE FROM scrape_jobs WHERE ${KEEPS_NOTHING_SQL}
      AND created_at < now() - make_interval(secs => (coalesce((options ->> 'timeout')::int, 60000) + ${o.graceMs}) / 1000.0)`);
  const parses = await db.execute(sql`
    DELETE FROM parse_jobs WHERE options ->> 'zeroDataRetention' = 'true'
      AND created_at < now() - make_interval(secs => (coalesce((options ->> 'timeout')::int, 300000) + ${o.graceMs}) / 1000.0)`);
  const jobs = await purgeJobs(
    db,
    sql`completed_at > now() - interval '7 days' AND (delivered_at IS NOT NULL OR completed_at < now() - make_interval(secs => ${o.resultTtlMs / 1000}))`,
  );
  const extracts = await deleteExpiredExtracts(db);
  return { scrapes: scrapes.rowCount ?? 0, parses: parses.rowCount ?? 0, jobs, extracts };
}
