import { sql } from 'drizzle-orm';
import { monitorRunJob } from '@wds/workflows/job-specs';
import { crawlWords, type JobStatus } from '@wds/workflows/jobs';
import type { Db } from './client';
import { releaseCollectedCrawls } from './crawl-jobs';
import { endJobSql } from './jobs/index';
import { endFinishedChecks, type EndedCheck } from './monitor-pages';

/**
 * A monitor run as a frontier job (a `jobs` row of kind monitor_run, extended by monitor_runs): what is left of its
 * frontier and model step, and its end — pages and targets that never ended become errors, its
 * checks are ended, then the run row. Used by the run's workflow, the stranded-run sweep and the
 * API when Temporal refuses a "run now".
 */

export interface MonitorRunCounts {
  status: string;
  queued: number;
  leased: number;
  nextLeaseExpiryMs: number | null;
  /** Pages waiting for their model step (absent when none: runs without model work report what they always did). */
  llm?: { pending: number; ready: number; nextReadyMs: number | null };
}

/** What is left of a run's frontier and model step, as the frontier loop asks it. */
export async function monitorRunCounts(db: Db, runId: string): Promise<MonitorRunCounts> {
  const r = await db.execute<{ status: JobStatus | null; queued: number; leased: number; next_ms: number | null; llm: number; llm_ready: number; llm_next_ms: number | null }>(sql`
    SELECT (SELECT status FROM jobs WHERE id = ${runId}) AS status,
      count(*) FILTER (WHERE status = 'queued')::int AS queued, count(*) FILTER (WHERE status = 'leased')::int AS leased,
      (EXTRACT(EPOCH FROM min(lease_until) FILTER (WHERE status = 'leased') - now()) * 1000)::int AS next_ms,
      count(*) FILTER (WHERE status = 'llm')::int AS llm,
      count(*) FILTER (WHERE status = 'llm' AND (lease_until IS NULL OR lease_until < now()))::int AS llm_ready,
      (EXTRACT(EPOCH FROM min(lease_until) FILTER (WHERE status = 'llm' AND lease_until >= now()) - now()) * 1000)::int AS llm_next_ms
    FROM monitor_check_pages WHERE run_id = ${runId} AND status IN ('queued', 'leased', 'llm')`);
  const row = r.rows[0]!;
  // The frontier loop's words (crawl's): `scraping` while live.
  const out: MonitorRunCounts = { status: row.status ? crawlWords({ status: row.status, outcome: null }) : 'failed', queued: row.queued, leased: row.leased, nextLeaseExpiryMs: row.next_ms };
  if (row.llm > 0) out.llm = { pending: row.llm, ready: row.llm_ready, nextReadyMs: row.llm_next_ms };
  return out;
}

/** The run's checks still running. */
async function runningChecksOfRun(db: Db, runId: string): Promise<string[]> {
  const r = await db.execute<{ id: string }>(sql`SELECT id FROM monitor_checks WHERE run_id = ${runId} AND status = 'running'`);
  return r.rows.map((k) => k.id);
}

/**
 * What never ended in a run that failed or was cancelled becomes an error, so its checks can
 * end: waiting pages, and crawl or search targets never collected (each an error page named by
 * the target's URL or first query, so the check reads as failed, not as an empty success).
 */
async function failWhatWaits(db: Db, runId: string, error: string): Promise<void> {
  const message = error.slice(0, 2_000);
  await db.execute(sql`
    UPDATE monitor_check_pages SET status = 'error', error = ${message}, lease_owner = NULL, lease_until = NULL, pending = NULL
    WHERE run_id = ${runId} AND status IN ('queued', 'leased', 'llm')`);
  await db.execute(sql`
    WITH lost AS (
      UPDATE monitor_check_targets t SET status = 'collected', result = jsonb_build_object('targetId', t.target_id, 'type', t.type, 'error', ${message}::text)
      WHERE t.run_id = ${runId} AND t.status = 'pending'
      RETURNING t.check_id, t.target_id, t.type, t.job_id
    ), released AS (${releaseCollectedCrawls(sql`SELECT job_id FROM lost`)}
    ), pages AS (
      INSERT INTO monitor_check_pages (check_id, target_id, url_key, url, run_id, status, error)
      SELECT l.check_id, l.target_id, 'target:' || l.target_id, coalesce(tg->>'url', 'search: ' || (tg->'queries'->>0), l.target_id), ${runId}::uuid, 'error', ${message}
      FROM lost l JOIN monitor_checks c ON c.id = l.check_id JOIN monitors m ON m.id = c.monitor_id
      LEFT JOIN LATERAL (SELECT e AS tg FROM jsonb_array_elements(m.targets) e WHERE e->>'id' = l.target_id LIMIT 1) x ON true
      ON CONFLICT DO NOTHING
    )
    UPDATE monitor_checks c SET pending_targets = greatest(0, c.pending_targets - n.n)
    FROM (SELECT check_id, count(*)::int AS n FROM lost GROUP BY check_id) n WHERE c.id = n.check_id`);
}

/** Ends the run's job once (false when it had ended); the expiry path deletes it a day later. */
async function endMonitorRun(db: Db, runId: string, status: 'completed' | 'failed' | 'cancelled'): Promise<boolean> {
  const r = await db.execute(endJobSql(runId, { status, keptMs: monitorRunJob.resultsKeptMs }));
  return r.rows.length > 0;
}

/** Whether the run's checks have crawl or search targets (its workflow runs them first). */
export async function monitorRunHasTargets(db: Db, runId: string): Promise<boolean> {
  const r = await db.execute<{ targets: boolean }>(sql`SELECT targets FROM monitor_runs WHERE id = ${runId}`);
  return !!r.rows[0]?.targets;
}

/**
 * Ends a run: what never ended (a failed or cancelled run) becomes an error, every check of the
 * run still running is ended (summed, billed, its slot freed), then the run's job. Returns the
 * checks this call ended and whether it ended the job (false: it had ended).
 */
export async function endMonitorRunChecks(db: Db, runId: string, outcome: 'completed' | 'failed' | 'cancelled', error?: string): Promise<{ checks: EndedCheck[]; ended: boolean }> {
  // A completed run has nothing waiting; anything still there (a target never collected) is an error all the same.
  await failWhatWaits(db, runId, error ?? (outcome === 'cancelled' ? 'The check was cancelled before this page was checked.' : 'The check ended before this was checked.'));
  const checks = await endFinishedChecks(db, await runningChecksOfRun(db, runId));
  return { checks, ended: await endMonitorRun(db, runId, outcome) };
}
