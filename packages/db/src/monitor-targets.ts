import { sql } from 'drizzle-orm';
import type { Db } from './client';
import { releaseCollectedCrawls } from './crawl-jobs';

/**
 * Crawl and search targets of monitor checks (schema/monitors.ts monitor_check_targets): what a
 * run's workflow runs before its page frontier, the crawl job's results it collects, and the
 * collection that lets the check end (pending_targets). Idempotent: a target is collected once.
 */

export interface RunTarget {
  checkId: string;
  targetId: string;
  type: 'crawl' | 'search';
  jobId: string | null;
  status: 'pending' | 'collected';
  monitorId: string;
  teamId: string;
}

/** The targets of a run's checks, in a stable order. */
export async function runTargetsOf(db: Db, runId: string): Promise<RunTarget[]> {
  const r = await db.execute<{ check_id: string; target_id: string; type: RunTarget['type']; job_id: string | null; status: RunTarget['status']; monitor_id: string; team_id: string }>(sql`
    SELECT t.check_id, t.target_id, t.type, t.job_id, t.status, c.monitor_id, c.team_id
    FROM monitor_check_targets t JOIN monitor_checks c ON c.id = t.check_id WHERE t.run_id = ${runId} ORDER BY t.check_id, t.target_id`);
  return r.rows.map((t) => ({ checkId: t.check_id, targetId: t.target_id, type: t.type, jobId: t.job_id, status: t.status, monitorId: t.monitor_id, teamId: t.team_id }));
}

export async function runTarget(db: Db, checkId: string, targetId: string): Promise<RunTarget | null> {
  const r = await db.execute<{ check_id: string; target_id: string; type: RunTarget['type']; job_id: string | null; status: RunTarget['status']; monitor_id: string; team_id: string }>(sql`
    SELECT t.check_id, t.target_id, t.type, t.job_id, t.status, c.monitor_id, c.team_id
    FROM monitor_check_targets t JOIN monitor_checks c ON c.id = t.check_id WHERE t.check_id = ${checkId} AND t.target_id = ${targetId}`);
  const t = r.rows[0];
  return t ? { checkId: t.check_id, targetId: t.target_id, type: t.type, jobId: t.job_id, status: t.status, monitorId: t.monitor_id, teamId: t.team_id } : null;
}

/**
 * A target is collected: its result entry written and the check's count of pending targets
 * lowered, with the credits it cost beyond its pages (a search call), in one statement. A
 * second call (a retried activity) changes nothing. True when this call collected it.
 */
export async function collectTarget(db: Db, t: { checkId: string; targetId: string; result: Record<string, unknown>; credits?: number }): Promise<boolean> {
  const r = await db.execute<{ n: number }>(sql`
    WITH done AS (
      UPDATE monitor_check_targets SET status = 'collected', result = ${JSON.stringify(t.result)}::jsonb
      WHERE check_id = ${t.checkId} AND target_id = ${t.targetId} AND status = 'pending' RETURNING check_id, job_id
    ), released AS (${releaseCollectedCrawls(sql`SELECT job_id FROM done`)}
    ), counted AS (
      UPDATE monitor_checks c SET pending_targets = greatest(0, c.pending_targets - 1), target_credits = c.target_credits + ${t.credits ?? 0}
      FROM done WHERE c.id = done.check_id
    )
    SELECT count(*)::int AS n FROM done`);
  return (r.rows[0]?.n ?? 0) > 0;
}

/** URL keys a target already added to its check (a retried collection resumes after them). */
export async function targetPageKeys(db: Db, checkId: string, targetId: string): Promise<Set<string>> {
  const r = await db.execute<{ url_key: string }>(sql`SELECT url_key FROM monitor_check_pages WHERE check_id = ${checkId} AND target_id = ${targetId}`);
  return new Set(r.rows.map((x) => x.url_key));
}

export interface CrawledPage {
  seq: number;
  urlKey: string;
  document: unknown;
  credits: number;
}

/** A crawl job's documents after `afterSeq`, in completion order (a target's collection reads them in chunks). */
export async function crawlDocumentsAfter(db: Db, jobId: string, afterSeq: number, limit: number): Promise<CrawledPage[]> {
  const r = await db.execute<{ seq: string; url_key: string; document: unknown; credits: number }>(sql`
    SELECT seq, url_key, document, credits FROM crawl_documents WHERE job_id = ${jobId} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`);
  return r.rows.map((d) => ({ seq: Number(d.seq), urlKey: d.url_key, document: d.document, credits: d.credits }));
}

/** A crawl job's pages that failed (fetch errors; not robots-blocked or cancelled ones), with their errors. */
export async function crawlFailures(db: Db, jobId: string): Promise<{ url: string; error: string }[]> {
  const r = await db.execute<{ url: string; error: string | null }>(sql`
    SELECT url, error FROM crawl_urls WHERE job_id = ${jobId} AND status = 'failed' AND NOT discovery_only ORDER BY seq`);
  return r.rows.map((x) => ({ url: x.url, error: x.error ?? 'the page could not be fetched' }));
}

/** Every URL the crawl job reached (any status): what the site links to now. */
export async function crawlReachedUrls(db: Db, jobId: string): Promise<string[]> {
  const r = await db.execute<{ url: string }>(sql`SELECT url FROM crawl_urls WHERE job_id = ${jobId}`);
  return r.rows.map((x) => x.url);
}
