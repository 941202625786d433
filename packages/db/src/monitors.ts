import { randomUUID } from 'node:crypto';
import { and, desc, eq, ne, sql } from 'drizzle-orm';
import { monitorRunJob } from '@wds/workflows/job-specs';
import { inTransaction, type Db } from './client';
import { insertJob } from './jobs/index';
import { monitorChecks, monitors } from './schema/index';

/**
 * Monitors (schema/monitors.ts): the monitor rows the API edits, the claim of due monitors by
 * a tick and of a "run now" (checks, skipped records, the runs, their pages and targets in one
 * transaction), reading checks, retention. Pages: monitor-pages.ts; runs: monitor-runs.ts.
 * Every write is idempotent: a retried activity rewrites the same rows or finds them done.
 */

export type MonitorRow = typeof monitors.$inferSelect;
export type MonitorCheckRow = typeof monitorChecks.$inferSelect;
export type NewMonitor = typeof monitors.$inferInsert;

export async function insertMonitor(db: Db, m: NewMonitor): Promise<MonitorRow> {
  const [row] = await db.insert(monitors).values(m).returning();
  return row!;
}

/**
 * The team's monitors (not deleted), counted under a per-team transaction lock: call it in the
 * transaction that inserts the new one, so concurrent creates cannot both take the last place.
 */
export async function lockedTeamMonitorCount(tx: Db, teamId: string): Promise<number> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended('wds-team-monitors:' || ${teamId}, 0))`);
  const r = await tx.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM monitors WHERE team_id = ${teamId} AND status <> 'deleted'`);
  return r.rows[0]!.n;
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

/** A crawl or search target of a check: run by its run's workflow before the page frontier. */
export interface CheckTargetSeed {
  targetId: string;
  type: 'crawl' | 'search';
  /** The crawl job a crawl target's check creates (chosen here, so a retried run finds it). */
  jobId: string | null;
}

/** What the caller decided for one claimed monitor. */
export interface DueDecision {
  monitorId: string;
  nextRunAt: Date | null;
  /** No check (overdue past the catch-up window): the monitor only moves on. */
  check?: { id: string; status: 'running' | 'skipped_overlap' | 'skipped_no_credits'; pages: CheckPageSeed[]; targets: CheckTargetSeed[]; scheduledFor: Date };
}

/** A run a claim made for one check with crawl or search targets (beside the claim's shared run). */
export interface TargetRun {
  runId: string;
  pages: number;
}

export interface ClaimedDue {
  /** Checks in the claim's shared run (`runId`): 0 when it holds none. */
  checks: number;
  pages: number;
  skipped: number;
  more: boolean;
  claimed: number;
  /** Runs of their own, one per check with crawl or search targets. */
  targetRuns: TargetRun[];
}

/**
 * A tick's claim: locks up to `limit` due active monitors of the shard (SKIP LOCKED, so ticks
 * and API edits never wait on each other), lets `decide` turn each into a check (or a skipped
 * record), and writes the runs, the checks, their pages (the runs' frontiers) and targets, and
 * the monitors' next due times and running slots in one transaction. Checks of scrape targets
 * only share the run `runId`; a check with crawl or search targets gets a run of its own (its
 * crawl would hold the others back). Idempotent on `runId`: a retried claim whose first attempt
 * committed returns that attempt's runs and claims nothing more.
 */
export async function claimDueMonitors(db: Db, c: { runId: string; shard: number; shards: number; limit: number }, decide: (m: DueMonitor) => DueDecision): Promise<ClaimedDue> {
  return inTransaction(db, async (tx) => {
    const prior = (await tx.execute<{ checks: number; pages: number }>(sql`
      SELECT checks, (SELECT count(*)::int FROM monitor_check_pages WHERE run_id = ${c.runId}) AS pages FROM monitor_runs WHERE id = ${c.runId}`)).rows[0];
    if (prior) return { checks: prior.checks, pages: prior.pages, skipped: 0, more: false, claimed: 0, targetRuns: await targetRunsOfClaim(tx, c.runId) };
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
    if (!rows.length) return { checks: 0, pages: 0, skipped: 0, more: false, claimed: 0, targetRuns: [] };
    const decisions = rows.map((r) =>
      decide({ id: r.id, teamId: r.team_id, schedule: r.schedule, targets: r.targets, nextRunAt: new Date(r.next_run_at), runningCheckId: r.running_check_id, outOfCredits: r.out_of_credits }),
    );
    const teamOf = new Map(rows.map((r) => [r.id, r.team_id]));
    const checks = decisions.filter((d) => d.check).map((d) => {
      const k = d.check!;
      const own = k.status === 'running' && k.targets.length > 0;
      return { ...k, monitorId: d.monitorId, teamId: teamOf.get(d.monitorId)!, runId: own ? randomUUID() : c.runId };
    });
    const shared = checks.filter((k) => k.status === 'running' && k.runId === c.runId);
    const own = checks.filter((k) => k.status === 'running' && k.runId !== c.runId);
    await insertChecks(tx, 'scheduled', checks);
    for (const id of [c.runId, ...own.map((k) => k.runId)]) await insertRunJob(tx, id);
    await tx.execute(sql`
      INSERT INTO monitor_runs (id, kind, checks, targets, claim_id)
      SELECT r.id, 'scheduled', r.checks, r.targets, r.claim_id
      FROM unnest(${sql.param([c.runId, ...own.map((k) => k.runId)])}::uuid[], ${sql.param([shared.length, ...own.map(() => 1)])}::int[],
                  ${sql.param([false, ...own.map(() => true)])}::bool[], ${sql.param([null, ...own.map(() => c.runId)])}::uuid[]) AS r(id, checks, targets, claim_id)`);
    await tx.execute(sql`
      UPDATE monitors m SET next_run_at = d.next, last_run_at = CASE WHEN d.running THEN now() ELSE m.last_run_at END,
        running_check_id = CASE WHEN d.running THEN d.check_id ELSE m.running_check_id END, updated_at = now()
      FROM unnest(${sql.param(decisions.map((d) => d.monitorId))}::uuid[], ${sql.param(decisions.map((d) => d.nextRunAt?.toISOString() ?? null))}::timestamptz[],
                  ${sql.param(decisions.map((d) => d.check?.status === 'running'))}::bool[], ${sql.param(decisions.map((d) => d.check?.id ?? null))}::uuid[]) AS d(id, next, running, check_id)
      WHERE m.id = d.id`);
    const pages = shared.reduce((n, k) => n + k.pages.length, 0);
    return {
      checks: shared.length, pages, skipped: checks.length - shared.length - own.length, more: rows.length === c.limit, claimed: rows.length,
      targetRuns: own.map((k) => ({ runId: k.runId, pages: k.pages.length })),
    };
  });
}

/**
 * A run's job row: running from its claim (its workflow is started right after the commit; the
 * stranded-job sweeper ends it when none runs), of no team (its checks may be of several).
 */
async function insertRunJob(tx: Db, id: string): Promise<void> {
  await insertJob(tx, { id, teamId: null, kind: 'monitor_run', status: 'running', workflowId: monitorRunJob.workflowId(id) });
}

/** The runs of their own a committed claim made (a retried claim answers them again). */
async function targetRunsOfClaim(db: Db, claimId: string): Promise<TargetRun[]> {
  const r = await db.execute<{ id: string; pages: number }>(sql`
    SELECT r.id, (SELECT count(*)::int FROM monitor_check_pages p WHERE p.run_id = r.id) AS pages FROM monitor_runs r WHERE r.claim_id = ${claimId} ORDER BY r.id`);
  return r.rows.map((x) => ({ runId: x.id, pages: x.pages }));
}

interface NewCheck {
  id: string;
  monitorId: string;
  teamId: string;
  runId: string;
  status: string;
  pages: CheckPageSeed[];
  targets: CheckTargetSeed[];
  scheduledFor: Date | null;
}

/** Inserts checks (and the pages and targets of running ones), each in its run. */
async function insertChecks(db: Db, trigger: 'scheduled' | 'manual', checks: NewCheck[]): Promise<void> {
  if (!checks.length) return;
  const running = (s: string) => s === 'running';
  const col = <T>(f: (k: NewCheck) => T) => sql.param(checks.map(f));
  await db.execute(sql`
    INSERT INTO monitor_checks (id, monitor_id, team_id, run_id, status, trigger, scheduled_for, started_at, finished_at, estimated_credits, summary, pending_targets, has_targets)
    SELECT k.id, k.monitor_id, k.team_id, CASE WHEN k.status = 'running' THEN k.run_id END, k.status, ${trigger}, k.scheduled_for,
      CASE WHEN k.status = 'running' THEN now() END, CASE WHEN k.status <> 'running' THEN now() END, k.estimated,
      CASE WHEN k.status <> 'running' THEN ${EMPTY_SUMMARY}::jsonb END, k.targets, k.targets > 0
    FROM unnest(${col((k) => k.id)}::uuid[], ${col((k) => k.monitorId)}::uuid[], ${col((k) => k.teamId)}::uuid[], ${col((k) => k.runId)}::uuid[],
                ${col((k) => k.status)}::text[], ${col((k) => k.scheduledFor?.toISOString() ?? null)}::timestamptz[],
                ${col((k) => (running(k.status) ? k.pages.length : null))}::int[], ${col((k) => (running(k.status) ? k.targets.length : 0))}::int[])
      AS k(id, monitor_id, team_id, run_id, status, scheduled_for, estimated, targets)`);
  const live = checks.filter((k) => running(k.status));
  const pages = live.flatMap((k) => k.pages.map((p) => ({ ...p, checkId: k.id, runId: k.runId })));
  if (pages.length) {
    await db.execute(sql`
      INSERT INTO monitor_check_pages (check_id, target_id, url_key, url, run_id)
      SELECT p.check_id, p.target_id, p.url_key, p.url, p.run_id
      FROM unnest(${sql.param(pages.map((p) => p.checkId))}::uuid[], ${sql.param(pages.map((p) => p.targetId))}::text[],
                  ${sql.param(pages.map((p) => p.urlKey))}::text[], ${sql.param(pages.map((p) => p.url))}::text[], ${sql.param(pages.map((p) => p.runId))}::uuid[])
        AS p(check_id, target_id, url_key, url, run_id)
      ON CONFLICT DO NOTHING`);
  }
  const targets = live.flatMap((k) => k.targets.map((t) => ({ ...t, checkId: k.id, runId: k.runId })));
  if (targets.length) {
    await db.execute(sql`
      INSERT INTO monitor_check_targets (check_id, target_id, run_id, type, job_id)
      SELECT t.check_id, t.target_id, t.run_id, t.type, t.job_id
      FROM unnest(${sql.param(targets.map((t) => t.checkId))}::uuid[], ${sql.param(targets.map((t) => t.targetId))}::text[], ${sql.param(targets.map((t) => t.runId))}::uuid[],
                  ${sql.param(targets.map((t) => t.type))}::text[], ${sql.param(targets.map((t) => t.jobId))}::uuid[]) AS t(check_id, target_id, run_id, type, job_id)
      ON CONFLICT DO NOTHING`);
  }
}

const EMPTY_SUMMARY = JSON.stringify({ totalPages: 0, same: 0, changed: 0, new: 0, removed: 0, error: 0 });

export type ManualClaim = { started: true; checkId: string; targets: boolean } | { started: false; reason: 'running'; checkId: string } | { started: false; reason: 'paused' | 'missing' };

/**
 * "Run now": takes the monitor's running-check slot (a check already running, or a paused
 * monitor, refuses), then writes the run, the check, its pages and targets in the same
 * transaction. A Schedule's own trigger would overlap freely (ALLOW_ALL), which is why the slot
 * is in Postgres.
 */
export async function claimManualCheck(
  db: Db,
  m: { teamId: string; monitorId: string; runId: string; checkId: string; pages: CheckPageSeed[]; targets: CheckTargetSeed[] },
): Promise<ManualClaim> {
  return inTransaction(db, async (tx) => {
    const taken = await tx.execute(sql`
      UPDATE monitors SET running_check_id = ${m.checkId}, last_run_at = now(), updated_at = now()
      WHERE id = ${m.monitorId} AND team_id = ${m.teamId} AND status = 'active' AND running_check_id IS NULL RETURNING id`);
    if (!taken.rows.length) {
      const [row] = (await tx.execute<{ status: string; running_check_id: string | null }>(sql`SELECT status, running_check_id FROM monitors WHERE id = ${m.monitorId} AND team_id = ${m.teamId}`)).rows;
      if (!row || row.status === 'deleted') return { started: false, reason: 'missing' };
      if (row.running_check_id) return { started: false, reason: 'running', checkId: row.running_check_id };
      return { started: false, reason: 'paused' };
    }
    const targets = m.targets.length > 0;
    await insertRunJob(tx, m.runId);
    await tx.execute(sql`INSERT INTO monitor_runs (id, kind, checks, targets) VALUES (${m.runId}, 'manual', 1, ${targets})`);
    await insertChecks(tx, 'manual', [{ id: m.checkId, monitorId: m.monitorId, teamId: m.teamId, runId: m.runId, status: 'running', pages: m.pages, targets: m.targets, scheduledFor: null }]);
    return { started: true, checkId: m.checkId, targets };
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


/** Checks older than their monitor's retention, with their pages (bounded per call); ended runs go by the expiry path (jobs.expires_at). */
export async function pruneMonitorChecks(db: Db, limit: number): Promise<number> {
  const r = await db.execute(sql`
    DELETE FROM monitor_checks WHERE id = ANY(ARRAY(
      SELECT c.id FROM monitor_checks c JOIN monitors m ON m.id = c.monitor_id
      WHERE c.created_at < now() - make_interval(days => m.retention_days) AND c.status NOT IN ('running', 'queued') LIMIT ${limit}))`);
  return r.rowCount ?? 0;
}

/** Whether any monitor is active (the worker recreates the tick Schedules when so). */
export async function anyActiveMonitor(db: Db): Promise<boolean> {
  return (await db.execute(sql`SELECT 1 FROM monitors WHERE status = 'active' LIMIT 1`)).rows.length > 0;
}

/** Targets and settings of monitors (the batch's pages need them), by id. */
export async function monitorsById(db: Db, ids: string[]): Promise<Map<string, MonitorRow>> {
  if (!ids.length) return new Map();
  const rows = await db.select().from(monitors).where(sql`${monitors.id} = ANY(${sql.param(ids)}::uuid[])`);
  return new Map(rows.map((r) => [r.id, r]));
}
