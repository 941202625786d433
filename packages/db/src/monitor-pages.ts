import { createHash } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { chargeCtes } from './ledger';
import { pageVersionCtes, type VersionWrite } from './page-versions';
import { pickOnce } from './pick';
import { storable, storableText } from './text';

/**
 * A monitor check's pages (schema/monitors.ts monitor_check_pages): the run's frontier (leased
 * like crawl URLs), results stored a batch at a time with their page-version writes, pages
 * waiting for their model step (monitor-model.ts), and the end of every check whose pages are
 * all in, in one statement. Every write is idempotent: a retried activity rewrites the same rows
 * or finds them done.
 */

export type CheckPageStatus = 'same' | 'new' | 'changed' | 'removed' | 'error';
export type CheckPageKind = 'page' | 'hidden' | 'search';

export interface CheckPageRow {
  id: string;
  targetId: string;
  url: string;
  status: string;
  previousScrapeId: string | null;
  currentScrapeId: string | null;
  statusCode: number | null;
  error: string | null;
  metadata: unknown;
  diff: unknown;
  snapshot: unknown;
  judgment: unknown;
  createdAt: Date;
}

/** A check's page results in order (pages still waiting are left out), `limit` from `skip`. */
export async function checkPages(db: Db, checkId: string, o: { limit: number; skip: number; status?: string; notSame?: boolean }): Promise<CheckPageRow[]> {
  const filter = o.status ? sql` AND status = ${o.status}` : o.notSame ? sql` AND status <> 'same'` : sql``;
  return checkPagesWhere(db, sql`check_id = ${checkId} AND status NOT IN ('queued', 'leased', 'llm')${filter}`, o.limit, o.skip);
}

async function checkPagesWhere(db: Db, where: SQL, limit: number, skip: number): Promise<CheckPageRow[]> {
  const r = await db.execute<{
    id: string; target_id: string; url: string; status: string; previous_scrape_id: string | null; current_scrape_id: string | null; status_code: number | null;
    error: string | null; metadata: unknown; diff: unknown; snapshot: unknown; judgment: unknown; created_at: string | Date;
  }>(sql`
    SELECT id, target_id, url, status, previous_scrape_id, current_scrape_id, status_code, error, metadata, diff, snapshot, judgment, created_at
    FROM monitor_check_pages WHERE ${where} ORDER BY seq LIMIT ${limit} OFFSET ${skip}`);
  return r.rows.map((p) => ({
    id: p.id, targetId: p.target_id, url: p.url, status: p.status, previousScrapeId: p.previous_scrape_id, currentScrapeId: p.current_scrape_id,
    statusCode: p.status_code, error: p.error, metadata: p.metadata, diff: p.diff, snapshot: p.snapshot, judgment: p.judgment, createdAt: new Date(p.created_at),
  }));
}

/** One page result of a check (a webhook body reads it when it is sent). */
export async function loadCheckPage(db: Db, checkId: string, targetId: string, urlKey: string): Promise<CheckPageRow | null> {
  const [row] = await checkPagesWhere(db, sql`check_id = ${checkId} AND target_id = ${targetId} AND url_key = ${urlKey}`, 1, 0);
  return row ?? null;
}

// ---- the run's frontier ----

export interface LeasedCheckPage {
  checkId: string;
  targetId: string;
  url: string;
  urlKey: string;
  pageId: string;
  monitorId: string;
  teamId: string;
  kind: CheckPageKind;
  /** What the page's target left for it (a search result's title and snippet); null for most pages. */
  pending: unknown;
}

/** Leases up to `n` waiting pages of a run (an attempt's first claim retakes its own leases; expired leases are taken over). */
export async function claimCheckPages(db: Db, runId: string, owner: string, n: number, leaseMs: number, opts: { retakeOwn: boolean }): Promise<LeasedCheckPage[]> {
  const mine = opts.retakeOwn ? sql`lease_owner = ${owner} OR ` : sql``;
  const r = await db.execute<{ check_id: string; target_id: string; url: string; url_key: string; id: string; monitor_id: string; team_id: string; kind: CheckPageKind; pending: unknown }>(sql`
    WITH leased AS (
      UPDATE monitor_check_pages p SET status = 'leased', lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = p.attempts + 1
      WHERE p.run_id = ${runId} AND p.seq = ANY(${pickOnce(sql`
        SELECT seq FROM monitor_check_pages WHERE run_id = ${runId} AND (status = 'queued' OR (status = 'leased' AND (${mine}lease_until < now())))
        ORDER BY seq LIMIT ${n} FOR UPDATE SKIP LOCKED`)})
      RETURNING p.check_id, p.target_id, p.url, p.url_key, p.id, p.seq, p.kind, p.pending
    )
    SELECT l.check_id, l.target_id, l.url, l.url_key, l.id, l.kind, l.pending, c.monitor_id, c.team_id
    FROM leased l JOIN monitor_checks c ON c.id = l.check_id ORDER BY l.seq`);
  return r.rows.map((p) => ({ checkId: p.check_id, targetId: p.target_id, url: p.url, urlKey: p.url_key, pageId: p.id, monitorId: p.monitor_id, teamId: p.team_id, kind: p.kind, pending: p.pending }));
}

export interface CheckPageResult {
  checkId: string;
  targetId: string;
  urlKey: string;
  status: CheckPageStatus;
  statusCode: number | null;
  error: string | null;
  previousScrapeId: string | null;
  currentScrapeId: string | null;
  metadata: unknown;
  diff: unknown;
  snapshot: unknown;
  judgment?: unknown;
  credits: number;
}

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(storable(v)));
const errorText = (e: string | null) => (e === null ? null : storableText(e).slice(0, 2_000));

/**
 * Stores page results and their page-version writes (change tracking) in one statement: the
 * versions are recorded exactly when the results are (a page already ended keeps its first
 * result, and a retried batch's versions are idempotent on their source key). `from`: the
 * statuses a page may end from — a fetch batch ends leased pages, the model step `llm` ones.
 */
export async function storeCheckPageResults(db: Db, results: CheckPageResult[], writes: VersionWrite[] = [], from: readonly ('queued' | 'leased' | 'llm')[] = ['queued', 'leased']): Promise<number> {
  if (!results.length) return 0;
  const col = <T>(f: (r: CheckPageResult) => T) => sql.param(results.map(f));
  const r = await db.execute<{ n: number }>(sql`
    WITH stored AS (
    UPDATE monitor_check_pages p SET status = r.status, status_code = r.status_code, error = r.error, previous_scrape_id = r.prev, current_scrape_id = r.cur,
      metadata = r.metadata, diff = r.diff, snapshot = r.snapshot, judgment = r.judgment, credits = p.prepaid_credits + r.credits,
      lease_owner = NULL, lease_until = NULL, pending = NULL
    FROM unnest(${col((r) => r.checkId)}::uuid[], ${col((r) => r.targetId)}::text[], ${col((r) => r.urlKey)}::text[], ${col((r) => r.status)}::text[],
                ${col((r) => r.statusCode)}::int[], ${col((r) => errorText(r.error))}::text[],
                ${col((r) => r.previousScrapeId)}::uuid[], ${col((r) => r.currentScrapeId)}::uuid[], ${col((r) => json(r.metadata))}::jsonb[],
                ${col((r) => json(r.diff))}::jsonb[], ${col((r) => json(r.snapshot))}::jsonb[], ${col((r) => json(r.judgment))}::jsonb[], ${col((r) => r.credits)}::int[])
      AS r(check_id, target_id, url_key, status, status_code, error, prev, cur, metadata, diff, snapshot, judgment, credits)
    WHERE p.check_id = r.check_id AND p.target_id = r.target_id AND p.url_key = r.url_key AND p.status = ANY(${sql.param([...from])}::text[])
    RETURNING 1)${pageVersionCtes(writes)}
    SELECT count(*)::int AS n FROM stored`);
  return r.rows[0]?.n ?? 0;
}

/** A page a target adds to its check (a crawled page, a search result): a result, or a row for the frontier / the model step. */
export interface NewCheckPage {
  checkId: string;
  targetId: string;
  url: string;
  urlKey: string;
  kind: CheckPageKind;
  /** queued: the run's fetch batches take it; llm: it waits for its model step with `pending`; else its result. */
  status: CheckPageStatus | 'queued' | 'llm';
  result?: Omit<CheckPageResult, 'checkId' | 'targetId' | 'urlKey' | 'status'>;
  pending?: unknown;
  /** Credits another job already billed (a crawl target's crawl): counted in the check, not charged again. */
  prepaidCredits?: number;
}

/**
 * The page's id: a pure function of (check, target, URL key), so a retried collection names
 * the page — and the page version it records — exactly as the first attempt did.
 */
export function checkPageIdOf(checkId: string, targetId: string, urlKey: string): string {
  const h = createHash('sha256').update(`${checkId}\u0000${targetId}\u0000${urlKey}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Adds pages to a run's checks with their version writes, in one statement. A page already
 * there (a retried collection) keeps its row; the writes are idempotent on their source key
 * (the page's id, `checkPageIdOf`).
 */
export async function insertCheckPages(db: Db, runId: string, pages: NewCheckPage[], writes: VersionWrite[] = []): Promise<void> {
  if (!pages.length) return;
  const col = <T>(f: (p: NewCheckPage) => T) => sql.param(pages.map(f));
  await db.execute(sql`
    WITH added AS (
    INSERT INTO monitor_check_pages (check_id, target_id, url_key, url, id, run_id, kind, status, status_code, error, previous_scrape_id, current_scrape_id,
                                     metadata, diff, snapshot, judgment, pending, credits, prepaid_credits)
    SELECT p.check_id, p.target_id, p.url_key, p.url, p.id, ${runId}::uuid, p.kind, p.status, p.status_code, p.error, p.prev, p.cur,
           p.metadata, p.diff, p.snapshot, p.judgment, p.pending, p.credits, p.prepaid
    FROM unnest(${col((p) => p.checkId)}::uuid[], ${col((p) => p.targetId)}::text[], ${col((p) => p.urlKey)}::text[], ${col((p) => storableText(p.url))}::text[],
                ${col((p) => checkPageIdOf(p.checkId, p.targetId, p.urlKey))}::uuid[], ${col((p) => p.kind)}::text[], ${col((p) => p.status)}::text[],
                ${col((p) => p.result?.statusCode ?? null)}::int[], ${col((p) => errorText(p.result?.error ?? null))}::text[],
                ${col((p) => p.result?.previousScrapeId ?? null)}::uuid[], ${col((p) => p.result?.currentScrapeId ?? null)}::uuid[],
                ${col((p) => json(p.result?.metadata))}::jsonb[], ${col((p) => json(p.result?.diff))}::jsonb[], ${col((p) => json(p.result?.snapshot))}::jsonb[],
                ${col((p) => json(p.result?.judgment))}::jsonb[], ${col((p) => json(p.pending))}::jsonb[],
                ${col((p) => (p.result?.credits ?? 0) + (p.prepaidCredits ?? 0))}::int[], ${col((p) => p.prepaidCredits ?? 0)}::int[])
      AS p(check_id, target_id, url_key, url, id, kind, status, status_code, error, prev, cur, metadata, diff, snapshot, judgment, pending, credits, prepaid)
    ON CONFLICT DO NOTHING
    RETURNING 1)${pageVersionCtes(writes)}
    SELECT count(*) FROM added`);
}

export interface EndedCheck {
  id: string;
  monitorId: string;
  teamId: string;
  status: 'completed' | 'partial' | 'failed';
  summary: { totalPages: number; same: number; changed: number; new: number; removed: number; error: number };
  credits: number;
  /** Scheduled (or started, for manual checks) → started, for the lag metric. */
  lagMs: number | null;
  durationMs: number;
}

/**
 * Ends the given running checks whose pages have all ended and whose crawl and search targets
 * are collected, in one statement: summary and status (all pages failed: failed; some: partial),
 * the charge (one ledger row per check, key monitor-check:<id>, so a retry bills nothing more;
 * credits another job billed are counted, not charged), the targets' results, the email
 * summary's outbox row (notification.email, when some page is not `same`), the monitor's slot
 * freed and its last summary. Returns the checks this call ended.
 */
export async function endFinishedChecks(db: Db, checkIds: string[]): Promise<EndedCheck[]> {
  if (!checkIds.length) return [];
  const r = await db.execute<{ id: string; monitor_id: string; team_id: string; status: EndedCheck['status']; summary: EndedCheck['summary']; actual_credits: number; lag_ms: number | null; duration_ms: number }>(sql`
    WITH counts AS (
      SELECT c.id, count(p.check_id)::int AS total,
        count(*) FILTER (WHERE p.status = 'same')::int AS same, count(*) FILTER (WHERE p.status = 'changed')::int AS changed,
        count(*) FILTER (WHERE p.status = 'new')::int AS new, count(*) FILTER (WHERE p.status = 'removed')::int AS removed,
        count(*) FILTER (WHERE p.status = 'error')::int AS error, coalesce(sum(p.credits), 0)::int AS credits, coalesce(sum(p.prepaid_credits), 0)::int AS prepaid
      FROM monitor_checks c LEFT JOIN monitor_check_pages p ON p.check_id = c.id
      WHERE c.id = ANY(${sql.param(checkIds)}::uuid[]) AND c.status = 'running' AND c.pending_targets = 0
      GROUP BY c.id
      HAVING count(*) FILTER (WHERE p.status IN ('queued', 'leased', 'llm')) = 0
    ), fin AS (
      UPDATE monitor_checks c SET
        status = CASE WHEN k.total > 0 AND k.error = k.total THEN 'failed' WHEN k.error > 0 THEN 'partial' ELSE 'completed' END,
        summary = jsonb_build_object('totalPages', k.total, 'same', k.same, 'changed', k.changed, 'new', k.new, 'removed', k.removed, 'error', k.error),
        actual_credits = k.credits + c.target_credits, billing_status = 'confirmed', finished_at = now(), updated_at = now(),
        target_results = CASE WHEN c.has_targets THEN ${targetResultsOf(sql`c.id`)} ELSE c.target_results END
      FROM counts k WHERE c.id = k.id AND c.status = 'running'
      RETURNING c.id, c.monitor_id, c.team_id, c.status, c.summary, c.actual_credits, c.actual_credits - k.prepaid AS charge,
        (EXTRACT(EPOCH FROM c.started_at - c.scheduled_for) * 1000)::int AS lag_ms, (EXTRACT(EPOCH FROM now() - c.started_at) * 1000)::int AS duration_ms
    ), slot AS (
      UPDATE monitors m SET running_check_id = NULL, last_check_summary = fin.summary FROM fin WHERE m.id = fin.monitor_id AND m.running_check_id = fin.id
    ), mail AS (
      INSERT INTO monitor_emails (check_id, monitor_id, team_id)
      SELECT fin.id, fin.monitor_id, fin.team_id FROM fin JOIN monitors m ON m.id = fin.monitor_id
      WHERE m.notification IS NOT NULL AND (m.notification #>> '{email,enabled}') = 'true' AND (fin.summary->>'totalPages')::int > (fin.summary->>'same')::int
      ON CONFLICT DO NOTHING
    ), ${chargeCtes(sql`SELECT team_id, id, 'monitor', charge, 'monitor-check:' || id::text FROM fin`)}
    SELECT id, monitor_id, team_id, status, summary, actual_credits, lag_ms, duration_ms FROM fin`);
  return r.rows.map((k) => ({ id: k.id, monitorId: k.monitor_id, teamId: k.team_id, status: k.status, summary: k.summary, credits: k.actual_credits, lagMs: k.lag_ms, durationMs: k.duration_ms }));
}

/**
 * The targetResults of a check with crawl or search targets (the JS SDK's MonitorTargetResult):
 * each target's own entry, and for search targets what its results came to — alerts (`matches`),
 * results judged and their credits.
 */
function targetResultsOf(checkId: SQL): SQL {
  return sql`(
    SELECT jsonb_agg(coalesce(t.result, jsonb_build_object('targetId', t.target_id, 'type', t.type)) || CASE WHEN t.type <> 'search' THEN '{}'::jsonb ELSE (
      SELECT jsonb_build_object('matches', count(*) FILTER (WHERE q.metadata->>'searchStatus' = 'alert'),
                                'resultsJudged', count(*) FILTER (WHERE q.judgment IS NOT NULL), 'judgeCredits', count(*) FILTER (WHERE q.judgment IS NOT NULL))
      FROM monitor_check_pages q WHERE q.check_id = t.check_id AND q.target_id = t.target_id) END ORDER BY t.created_at, t.target_id)
    FROM monitor_check_targets t WHERE t.check_id = ${checkId})`;
}
