import { and, desc, eq, ne, sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { chargeCtes } from './ledger';
import { pageVersionCtes, type VersionWrite } from './page-versions';
import { pickOnce } from './pick';
import { monitorChecks, monitors } from './schema/index';
import { storableText } from './text';

/**
 * Monitors (schema/monitors.ts): the monitor rows the API edits, the claim of due monitors by
 * a tick (checks, skipped records and the run's page frontier in one transaction), the run's
 * page leases, results stored a batch at a time and checks ended in one statement each batch.
 * Every write is idempotent: a retried activity rewrites the same rows or finds them done.
 */

export type MonitorRow = typeof monitors.$inferSelect;
export type MonitorCheckRow = typeof monitorChecks.$inferSelect;
export type NewMonitor = typeof monitors.$inferInsert;

export async function insertMonitor(db: Db, m: NewMonitor): Promise<MonitorRow> {
  const [row] = await db.insert(monitors).values(m).returning();
  return row!;
}

/** A team's monitor (a deleted one, or another team's, reads as missing). */
export async function loadTeamMonitor(db: Db, teamId: string, id: string): Promise<MonitorRow | null> {
  const [row] = await db.select().from(monitors).where(and(eq(monitors.id, id), eq(monitors.teamId, teamId), ne(monitors.status, 'deleted')));
  return row ?? null;
}

export async function listTeamMonitors(db: Db, teamId: string, limit: number, offset: number): Promise<MonitorRow[]> {
  return db.select().from(monitors).where(and(eq(monitors.teamId, teamId), ne(monitors.status, 'deleted'))).orderBy(desc(monitors.createdAt), desc(monitors.id)).limit(limit).offset(offset);
}

/** Writes fields of a team's monitor (never a deleted one); null when there is none. */
export async function updateTeamMonitor(db: Db, teamId: string, id: string, set: Partial<NewMonitor>): Promise<MonitorRow | null> {
  const [row] = await db
    .update(monitors)
    .set({ ...set, updatedAt: new Date() })
    .where(and(eq(monitors.id, id), eq(monitors.teamId, teamId), ne(monitors.status, 'deleted')))
    .returning();
  return row ?? null;
}

/** The checks a monitor's due time turns into, decided by the caller (schedules, targets) from the claimed rows. */
export interface DueMonitor {
  id: string;
  teamId: string;
  schedule: { cron: string; timezone: string; text?: string };
  targets: Record<string, unknown>[];
  nextRunAt: Date;
  runningCheckId: string | null;
  /** The team has used its credit limit (used + reserved ≥ credit_limit). */
  outOfCredits: boolean;
}

export interface CheckPageSeed {
  targetId: string;
  url: string;
  urlKey: string;
}

/** What the caller decided for one claimed monitor. */
export interface DueDecision {
  monitorId: string;
  nextRunAt: Date | null;
  /** No check (overdue past the catch-up window): the monitor only moves on. */
  check?: { id: string; status: 'running' | 'skipped_overlap' | 'skipped_no_credits'; pages: CheckPageSeed[]; scheduledFor: Date };
}

/**
 * A tick's claim: locks up to `limit` due active monitors of the shard (SKIP LOCKED, so ticks
 * and API edits never wait on each other), lets `decide` turn each into a check (or a skipped
 * record), and writes the run, the checks, their pages (the run's frontier) and the monitors'
 * next due times and running slots in one transaction. Idempotent on `runId`: a retried claim
 * whose first attempt committed returns that attempt's counts and claims nothing more.
 */
export async function claimDueMonitors(
  db: Db,
  c: { runId: string; shard: number; shards: number; limit: number },
  decide: (m: DueMonitor) => DueDecision,
): Promise<{ checks: number; pages: number; skipped: number; more: boolean; claimed: number }> {
  return db.transaction(async (tx) => {
    const prior = (await tx.execute<{ checks: number; pages: number }>(sql`
      SELECT checks, (SELECT count(*)::int FROM monitor_check_pages WHERE run_id = ${c.runId}) AS pages FROM monitor_runs WHERE id = ${c.runId}`)).rows[0];
    if (prior) return { checks: prior.checks, pages: prior.pages, skipped: 0, more: false, claimed: 0 };
    type Row = { id: string; team_id: string; schedule: DueMonitor['schedule']; targets: Record<string, unknown>[]; next_run_at: Date | string; running_check_id: string | null; out_of_credits: boolean };
    const rows = (
      await tx.execute<Row>(sql`
        SELECT m.id, m.team_id, m.schedule, m.targets, m.next_run_at, m.running_check_id,
          coalesce((SELECT l.credit_limit IS NOT NULL AND l.credit_limit <= (SELECT coalesce(sum(b.used + b.reserved), 0) FROM team_credit_balances b WHERE b.team_id = m.team_id)
                    FROM team_limits l WHERE l.team_id = m.team_id), false) AS out_of_credits
        FROM monitors m
        WHERE m.status = 'active' AND m.next_run_at <= now() AND m.shard_key % ${c.shards} = ${c.shard}
        ORDER BY m.next_run_at LIMIT ${c.limit} FOR UPDATE OF m SKIP LOCKED`)
    ).rows;
    if (!rows.length) return { checks: 0, pages: 0, skipped: 0, more: false, claimed: 0 };
    const decisions = rows.map((r) =>
      decide({ id: r.id, teamId: r.team_id, schedule: r.schedule, targets: r.targets, nextRunAt: new Date(r.next_run_at), runningCheckId: r.running_check_id, outOfCredits: r.out_of_credits }),
    );
    const teamOf = new Map(rows.map((r) => [r.id, r.team_id]));
    const checks = decisions.filter((d) => d.check).map((d) => ({ ...d.check!, monitorId: d.monitorId, teamId: teamOf.get(d.monitorId)! }));
    const running = checks.filter((k) => k.status === 'running');
    await insertChecks(tx as unknown as Db, c.runId, 'scheduled', checks);
    await tx.execute(sql`INSERT INTO monitor_runs (id, kind, checks) VALUES (${c.runId}, 'scheduled', ${running.length})`);
    await tx.execute(sql`
      UPDATE monitors m SET next_run_at = d.next, last_run_at = CASE WHEN d.running THEN now() ELSE m.last_run_at END,
        running_check_id = CASE WHEN d.running THEN d.check_id ELSE m.running_check_id END, updated_at = now()
      FROM unnest(${sql.param(decisions.map((d) => d.monitorId))}::uuid[], ${sql.param(decisions.map((d) => d.nextRunAt?.toISOString() ?? null))}::timestamptz[],
                  ${sql.param(decisions.map((d) => d.check?.status === 'running'))}::bool[], ${sql.param(decisions.map((d) => d.check?.id ?? null))}::uuid[]) AS d(id, next, running, check_id)
      WHERE m.id = d.id`);
    const pages = running.reduce((n, k) => n + k.pages.length, 0);
    return { checks: running.length, pages, skipped: checks.length - running.length, more: rows.length === c.limit, claimed: rows.length };
  });
}

/** Inserts checks (and the pages of running ones) of one run. */
async function insertChecks(
  db: Db,
  runId: string,
  trigger: 'scheduled' | 'manual',
  checks: { id: string; monitorId: string; teamId: string; status: string; pages: CheckPageSeed[]; scheduledFor: Date | null }[],
): Promise<void> {
  if (!checks.length) return;
  const running = (s: string) => s === 'running';
  await db.execute(sql`
    INSERT INTO monitor_checks (id, monitor_id, team_id, run_id, status, trigger, scheduled_for, started_at, finished_at, estimated_credits, summary)
    SELECT k.id, k.monitor_id, k.team_id, CASE WHEN k.status = 'running' THEN ${runId}::uuid END, k.status, ${trigger}, k.scheduled_for,
      CASE WHEN k.status = 'running' THEN now() END, CASE WHEN k.status <> 'running' THEN now() END, k.estimated,
      CASE WHEN k.status <> 'running' THEN ${EMPTY_SUMMARY}::jsonb END
    FROM unnest(${sql.param(checks.map((k) => k.id))}::uuid[], ${sql.param(checks.map((k) => k.monitorId))}::uuid[], ${sql.param(checks.map((k) => k.teamId))}::uuid[],
                ${sql.param(checks.map((k) => k.status))}::text[], ${sql.param(checks.map((k) => k.scheduledFor?.toISOString() ?? null))}::timestamptz[],
                ${sql.param(checks.map((k) => (running(k.status) ? k.pages.length : null)))}::int[]) AS k(id, monitor_id, team_id, status, scheduled_for, estimated)`);
  const pages = checks.filter((k) => running(k.status)).flatMap((k) => k.pages.map((p) => ({ ...p, checkId: k.id })));
  if (!pages.length) return;
  await db.execute(sql`
    INSERT INTO monitor_check_pages (check_id, target_id, url_key, url, run_id)
    SELECT p.check_id, p.target_id, p.url_key, p.url, ${runId}::uuid
    FROM unnest(${sql.param(pages.map((p) => p.checkId))}::uuid[], ${sql.param(pages.map((p) => p.targetId))}::text[],
                ${sql.param(pages.map((p) => p.urlKey))}::text[], ${sql.param(pages.map((p) => p.url))}::text[]) AS p(check_id, target_id, url_key, url)
    ON CONFLICT DO NOTHING`);
}

const EMPTY_SUMMARY = JSON.stringify({ totalPages: 0, same: 0, changed: 0, new: 0, removed: 0, error: 0 });

export type ManualClaim = { started: true; checkId: string } | { started: false; reason: 'running'; checkId: string } | { started: false; reason: 'paused' | 'missing' };

/**
 * "Run now": takes the monitor's running-check slot (a check already running, or a paused
 * monitor, refuses), then writes the run, the check and its pages in the same transaction.
 * A Schedule's own trigger would overlap freely (ALLOW_ALL), which is why the slot is in Postgres.
 */
export async function claimManualCheck(db: Db, m: { teamId: string; monitorId: string; runId: string; checkId: string; pages: CheckPageSeed[] }): Promise<ManualClaim> {
  return db.transaction(async (tx) => {
    const taken = await tx.execute(sql`
      UPDATE monitors SET running_check_id = ${m.checkId}, last_run_at = now(), updated_at = now()
      WHERE id = ${m.monitorId} AND team_id = ${m.teamId} AND status = 'active' AND running_check_id IS NULL RETURNING id`);
    if (!taken.rows.length) {
      const [row] = (await tx.execute<{ status: string; running_check_id: string | null }>(sql`SELECT status, running_check_id FROM monitors WHERE id = ${m.monitorId} AND team_id = ${m.teamId}`)).rows;
      if (!row || row.status === 'deleted') return { started: false, reason: 'missing' };
      if (row.running_check_id) return { started: false, reason: 'running', checkId: row.running_check_id };
      return { started: false, reason: 'paused' };
    }
    await tx.execute(sql`INSERT INTO monitor_runs (id, kind, checks) VALUES (${m.runId}, 'manual', 1)`);
    await insertChecks(tx as unknown as Db, m.runId, 'manual', [{ id: m.checkId, monitorId: m.monitorId, teamId: m.teamId, status: 'running', pages: m.pages, scheduledFor: null }]);
    return { started: true, checkId: m.checkId };
  });
}

export async function loadMonitorCheck(db: Db, monitorId: string, checkId: string): Promise<MonitorCheckRow | null> {
  const [row] = await db.select().from(monitorChecks).where(and(eq(monitorChecks.id, checkId), eq(monitorChecks.monitorId, monitorId)));
  return row ?? null;
}

export async function loadCheckById(db: Db, checkId: string): Promise<MonitorCheckRow | null> {
  const [row] = await db.select().from(monitorChecks).where(eq(monitorChecks.id, checkId));
  return row ?? null;
}

export async function listMonitorChecks(db: Db, monitorId: string, o: { limit: number; offset: number; status?: string }): Promise<MonitorCheckRow[]> {
  const where = o.status ? and(eq(monitorChecks.monitorId, monitorId), eq(monitorChecks.status, o.status as MonitorCheckRow['status'])) : eq(monitorChecks.monitorId, monitorId);
  return db.select().from(monitorChecks).where(where).orderBy(desc(monitorChecks.createdAt), desc(monitorChecks.id)).limit(o.limit).offset(o.offset);
}

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
  createdAt: Date;
}

/** A check's page results in order (pages still waiting are left out), `limit` from `skip`. */
export async function checkPages(db: Db, checkId: string, o: { limit: number; skip: number; status?: string; notSame?: boolean }): Promise<CheckPageRow[]> {
  const filter = o.status ? sql` AND status = ${o.status}` : o.notSame ? sql` AND status <> 'same'` : sql``;
  return checkPagesWhere(db, sql`check_id = ${checkId} AND status NOT IN ('queued', 'leased')${filter}`, o.limit, o.skip);
}

async function checkPagesWhere(db: Db, where: SQL, limit: number, skip: number): Promise<CheckPageRow[]> {
  const r = await db.execute<{ id: string; target_id: string; url: string; status: string; previous_scrape_id: string | null; current_scrape_id: string | null; status_code: number | null; error: string | null; metadata: unknown; diff: unknown; snapshot: unknown; created_at: string | Date }>(sql`
    SELECT id, target_id, url, status, previous_scrape_id, current_scrape_id, status_code, error, metadata, diff, snapshot, created_at
    FROM monitor_check_pages WHERE ${where} ORDER BY seq LIMIT ${limit} OFFSET ${skip}`);
  return r.rows.map((p) => ({
    id: p.id, targetId: p.target_id, url: p.url, status: p.status, previousScrapeId: p.previous_scrape_id, currentScrapeId: p.current_scrape_id,
    statusCode: p.status_code, error: p.error, metadata: p.metadata, diff: p.diff, snapshot: p.snapshot, createdAt: new Date(p.created_at),
  }));
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
}

/** Leases up to `n` waiting pages of a run (an attempt's first claim retakes its own leases; expired leases are taken over). */
export async function claimCheckPages(db: Db, runId: string, owner: string, n: number, leaseMs: number, opts: { retakeOwn: boolean }): Promise<LeasedCheckPage[]> {
  const mine = opts.retakeOwn ? sql`lease_owner = ${owner} OR ` : sql``;
  const r = await db.execute<{ check_id: string; target_id: string; url: string; url_key: string; id: string; monitor_id: string; team_id: string }>(sql`
    WITH leased AS (
      UPDATE monitor_check_pages p SET status = 'leased', lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = p.attempts + 1
      WHERE p.run_id = ${runId} AND p.seq = ANY(${pickOnce(sql`
        SELECT seq FROM monitor_check_pages WHERE run_id = ${runId} AND (status = 'queued' OR (status = 'leased' AND (${mine}lease_until < now())))
        ORDER BY seq LIMIT ${n} FOR UPDATE SKIP LOCKED`)})
      RETURNING p.check_id, p.target_id, p.url, p.url_key, p.id, p.seq
    )
    SELECT l.check_id, l.target_id, l.url, l.url_key, l.id, c.monitor_id, c.team_id
    FROM leased l JOIN monitor_checks c ON c.id = l.check_id ORDER BY l.seq`);
  return r.rows.map((p) => ({ checkId: p.check_id, targetId: p.target_id, url: p.url, urlKey: p.url_key, pageId: p.id, monitorId: p.monitor_id, teamId: p.team_id }));
}

/** Targets and settings of monitors (the batch's pages need them), by id. */
export async function monitorsById(db: Db, ids: string[]): Promise<Map<string, MonitorRow>> {
  if (!ids.length) return new Map();
  const rows = await db.select().from(monitors).where(sql`${monitors.id} = ANY(${sql.param(ids)}::uuid[])`);
  return new Map(rows.map((r) => [r.id, r]));
}

export interface CheckPageResult {
  checkId: string;
  targetId: string;
  urlKey: string;
  status: 'same' | 'new' | 'changed' | 'removed' | 'error';
  statusCode: number | null;
  error: string | null;
  previousScrapeId: string | null;
  currentScrapeId: string | null;
  metadata: unknown;
  diff: unknown;
  snapshot: unknown;
  credits: number;
}

/**
 * Stores a batch's page results and their page-version writes (change tracking) in one
 * statement: the versions are recorded exactly when the results are (a page already ended
 * keeps its first result, and a retried batch's versions are idempotent on their source key).
 */
export async function storeCheckPageResults(db: Db, results: CheckPageResult[], writes: VersionWrite[] = []): Promise<void> {
  if (!results.length) return;
  const col = <T>(f: (r: CheckPageResult) => T) => sql.param(results.map(f));
  const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
  await db.execute(sql`
    WITH stored AS (
    UPDATE monitor_check_pages p SET status = r.status, status_code = r.status_code, error = r.error, previous_scrape_id = r.prev, current_scrape_id = r.cur,
      metadata = r.metadata, diff = r.diff, snapshot = r.snapshot, credits = r.credits, lease_owner = NULL, lease_until = NULL
    FROM unnest(${col((r) => r.checkId)}::uuid[], ${col((r) => r.targetId)}::text[], ${col((r) => r.urlKey)}::text[], ${col((r) => r.status)}::text[],
                ${col((r) => r.statusCode)}::int[], ${col((r) => (r.error === null ? null : storableText(r.error).slice(0, 2_000)))}::text[],
                ${col((r) => r.previousScrapeId)}::uuid[], ${col((r) => r.currentScrapeId)}::uuid[], ${col((r) => json(r.metadata))}::jsonb[],
                ${col((r) => json(r.diff))}::jsonb[], ${col((r) => json(r.snapshot))}::jsonb[], ${col((r) => r.credits)}::int[])
      AS r(check_id, target_id, url_key, status, status_code, error, prev, cur, metadata, diff, snapshot, credits)
    WHERE p.check_id = r.check_id AND p.target_id = r.target_id AND p.url_key = r.url_key AND p.status IN ('queued', 'leased')
    RETURNING 1)${pageVersionCtes(writes)}
    SELECT count(*) FROM stored`);
}

/** One page result of a check (a webhook body reads it when it is sent). */
export async function loadCheckPage(db: Db, checkId: string, targetId: string, urlKey: string): Promise<CheckPageRow | null> {
  const [row] = await checkPagesWhere(db, sql`check_id = ${checkId} AND target_id = ${targetId} AND url_key = ${urlKey}`, 1, 0);
  return row ?? null;
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
 * Ends the given running checks whose pages have all ended, in one statement: summary and
 * status (all pages failed: failed; some: partial), the charge (one ledger row per check, key
 * monitor-check:<id>, so a retry bills nothing more), the monitor's slot freed and its last
 * summary. Returns the checks this call ended.
 */
export async function endFinishedChecks(db: Db, checkIds: string[]): Promise<EndedCheck[]> {
  if (!checkIds.length) return [];
  const r = await db.execute<{ id: string; monitor_id: string; team_id: string; status: EndedCheck['status']; summary: EndedCheck['summary']; actual_credits: number; lag_ms: number | null; duration_ms: number }>(sql`
    WITH counts AS (
      SELECT c.id, count(*)::int AS total,
        count(*) FILTER (WHERE p.status = 'same')::int AS same, count(*) FILTER (WHERE p.status = 'changed')::int AS changed,
        count(*) FILTER (WHERE p.status = 'new')::int AS new, count(*) FILTER (WHERE p.status = 'removed')::int AS removed,
        count(*) FILTER (WHERE p.status = 'error')::int AS error, coalesce(sum(p.credits), 0)::int AS credits
      FROM monitor_checks c LEFT JOIN monitor_check_pages p ON p.check_id = c.id
      WHERE c.id = ANY(${sql.param(checkIds)}::uuid[]) AND c.status = 'running'
      GROUP BY c.id
      HAVING count(*) FILTER (WHERE p.status IN ('queued', 'leased')) = 0
    ), fin AS (
      UPDATE monitor_checks c SET
        status = CASE WHEN k.total > 0 AND k.error = k.total THEN 'failed' WHEN k.error > 0 THEN 'partial' ELSE 'completed' END,
        summary = jsonb_build_object('totalPages', k.total, 'same', k.same, 'changed', k.changed, 'new', k.new, 'removed', k.removed, 'error', k.error),
        actual_credits = k.credits, billing_status = 'confirmed', finished_at = now(), updated_at = now()
      FROM counts k WHERE c.id = k.id AND c.status = 'running'
      RETURNING c.id, c.monitor_id, c.team_id, c.status, c.summary, c.actual_credits,
        (EXTRACT(EPOCH FROM c.started_at - c.scheduled_for) * 1000)::int AS lag_ms, (EXTRACT(EPOCH FROM now() - c.started_at) * 1000)::int AS duration_ms
    ), slot AS (
      UPDATE monitors m SET running_check_id = NULL, last_check_summary = fin.summary FROM fin WHERE m.id = fin.monitor_id AND m.running_check_id = fin.id
    ), ${chargeCtes(sql`SELECT team_id, id, 'monitor', actual_credits, 'monitor-check:' || id::text FROM fin`)}
    SELECT id, monitor_id, team_id, status, summary, actual_credits, lag_ms, duration_ms FROM fin`);
  return r.rows.map((k) => ({ id: k.id, monitorId: k.monitor_id, teamId: k.team_id, status: k.status, summary: k.summary, credits: k.actual_credits, lagMs: k.lag_ms, durationMs: k.duration_ms }));
}

/** What is left of a run's frontier, as the frontier loop asks it. */
export async function monitorRunCounts(db: Db, runId: string): Promise<{ status: string; queued: number; leased: number; nextLeaseExpiryMs: number | null }> {
  const r = await db.execute<{ status: string | null; queued: number; leased: number; next_ms: number | null }>(sql`
    SELECT (SELECT status FROM monitor_runs WHERE id = ${runId}) AS status,
      count(*) FILTER (WHERE status = 'queued')::int AS queued, count(*) FILTER (WHERE status = 'leased')::int AS leased,
      (EXTRACT(EPOCH FROM min(lease_until) FILTER (WHERE status = 'leased') - now()) * 1000)::int AS next_ms
    FROM monitor_check_pages WHERE run_id = ${runId} AND status IN ('queued', 'leased')`);
  const row = r.rows[0]!;
  return { status: row.status ?? 'failed', queued: row.queued, leased: row.leased, nextLeaseExpiryMs: row.next_ms };
}

/** The run's checks still running. */
async function runningChecksOfRun(db: Db, runId: string): Promise<string[]> {
  const r = await db.execute<{ id: string }>(sql`SELECT id FROM monitor_checks WHERE run_id = ${runId} AND status = 'running'`);
  return r.rows.map((k) => k.id);
}

/** Pages of a run that never ended (the run failed or was cancelled) become errors, so their checks can end. */
async function failWaitingPages(db: Db, runId: string, error: string): Promise<void> {
  await db.execute(sql`
    UPDATE monitor_check_pages SET status = 'error', error = ${error.slice(0, 2_000)}, lease_owner = NULL, lease_until = NULL
    WHERE run_id = ${runId} AND status IN ('queued', 'leased')`);
}

/** Ends the run row once (false when it had ended). */
async function endMonitorRun(db: Db, runId: string, status: 'completed' | 'failed' | 'cancelled'): Promise<boolean> {
  const r = await db.execute(sql`UPDATE monitor_runs SET status = ${status}, finished_at = now() WHERE id = ${runId} AND status = 'scraping' RETURNING id`);
  return r.rows.length > 0;
}

/** Runs still going after `minAgeMs` (candidates for the stranded-run sweep). */
export async function runningMonitorRunsOlderThan(db: Db, minAgeMs: number, limit: number): Promise<string[]> {
  const r = await db.execute<{ id: string }>(sql`
    SELECT id FROM monitor_runs WHERE status = 'scraping' AND created_at < now() - make_interval(secs => ${minAgeMs / 1000}) ORDER BY created_at LIMIT ${limit}`);
  return r.rows.map((x) => x.id);
}

/** Checks older than their monitor's retention, with their pages (bounded per call); ended runs likewise after a day. */
export async function pruneMonitorChecks(db: Db, limit: number): Promise<number> {
  const r = await db.execute(sql`
    DELETE FROM monitor_checks WHERE id = ANY(ARRAY(
      SELECT c.id FROM monitor_checks c JOIN monitors m ON m.id = c.monitor_id
      WHERE c.created_at < now() - make_interval(days => m.retention_days) AND c.status NOT IN ('running', 'queued') LIMIT ${limit}))`);
  await db.execute(sql`DELETE FROM monitor_runs WHERE id = ANY(ARRAY(SELECT id FROM monitor_runs WHERE status <> 'scraping' AND finished_at < now() - interval '1 day' LIMIT ${limit}))`);
  return r.rowCount ?? 0;
}

/** Whether any monitor is active (the worker recreates the tick Schedules when so). */
export async function anyActiveMonitor(db: Db): Promise<boolean> {
  return (await db.execute(sql`SELECT 1 FROM monitors WHERE status = 'active' LIMIT 1`)).rows.length > 0;
}

/**
 * Ends a run: pages that never ended (a failed or cancelled run) become errors, every check of
 * the run still running is ended (summed, billed, its slot freed), then the run row. Returns
 * the checks this call ended. Used by the run's workflow, the stranded-run sweep and the API
 * when Temporal refuses a "run now".
 */
export async function endMonitorRunChecks(db: Db, runId: string, outcome: 'completed' | 'failed' | 'cancelled', error?: string): Promise<EndedCheck[]> {
  if (outcome !== 'completed') await failWaitingPages(db, runId, error ?? 'The check was cancelled before this page was checked.');
  const ended = await endFinishedChecks(db, await runningChecksOfRun(db, runId));
  await endMonitorRun(db, runId, outcome);
  return ended;
}
