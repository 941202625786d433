import { sql } from 'drizzle-orm';
import type { Db } from './client';
import { teamLimits, type LimitClass } from './schema/limits';

export type TeamLimits = {
  ratePerMinute: Partial<Record<LimitClass, number>>;
  maxConcurrency: number | null;
  creditLimit: number | null;
  /** Monitors the team may have at once (not deleted). */
  maxMonitors: number | null;
  /** The largest `maxCredits` of one agent job; a job that sets none gets this (or Firecrawl's 2,500, the lower). */
  agentMaxCredits: number | null;
  /** Minutes one interact session may live. */
  interactSessionMinutes: number | null;
};

/** The limits a team_limits row overrides field by field, each defaulting to the deployment's (env). */
type DefaultedLimit = 'maxConcurrency' | 'maxMonitors' | 'agentMaxCredits' | 'interactSessionMinutes';
const DEFAULTED: DefaultedLimit[] = ['maxConcurrency', 'maxMonitors', 'agentMaxCredits', 'interactSessionMinutes'];

/** The deployment's limits for every team (env); a team_limits row overrides them field by field. */
export type LimitDefaults = Pick<TeamLimits, 'ratePerMinute'> & Partial<Pick<TeamLimits, DefaultedLimit>>;
export const NO_LIMITS: LimitDefaults = { ratePerMinute: {} };

/**
 * The team's effective limits: each field of its team_limits row (each class of its
 * rate_per_minute) where set, else the deployment default. 0 means no limit, in a row as in the
 * defaults, so a row can lift a default for one team; the result carries no limit as absent/null.
 */
export async function getTeamLimits(db: Db, teamId: string, defaults: LimitDefaults = NO_LIMITS): Promise<TeamLimits> {
  const [row] = await db.select().from(teamLimits).where(sql`${teamLimits.teamId} = ${teamId}`);
  const merged = { ...defaults.ratePerMinute, ...(row?.ratePerMinute ?? {}) };
  const ratePerMinute = Object.fromEntries(Object.entries(merged).filter(([, n]) => typeof n === 'number' && n > 0));
  const limits = { ratePerMinute, creditLimit: row?.creditLimit ?? null } as TeamLimits;
  for (const k of DEFAULTED) limits[k] = (row?.[k] ?? defaults[k]) || null;
  return limits;
}

/** Operator/test entry point: replace a team's limits (null or absent fields fall back to the defaults). */
export async function setTeamLimits(db: Db, teamId: string, l: Partial<TeamLimits>): Promise<void> {
  const v = {
    ratePerMinute: l.ratePerMinute ?? {},
    creditLimit: l.creditLimit ?? null,
    ...(Object.fromEntries(DEFAULTED.map((k) => [k, l[k] ?? null])) as Record<DefaultedLimit, number | null>),
  };
  await db
    .insert(teamLimits)
    .values({ teamId, ...v })
    .onConflictDoUpdate({ target: teamLimits.teamId, set: { ...v, updatedAt: sql`now()` } });
}

/**
 * Counts one request in the current one-minute window (atomic upsert, so every API process sees
 * the same count) and returns the count and the seconds until the window ends.
 */
export async function countRequest(db: Db, teamId: string, cls: LimitClass): Promise<{ count: number; retryAfterSeconds: number }> {
  // Committed without waiting for the disk: see admission.ts (bookkeeping, not records).
  const r = await db.execute<{ count: number; left: number }>(sql`
    WITH c AS (
      INSERT INTO rate_windows (team_id, limit_class, window_start, count)
      VALUES (${teamId}, ${cls}, date_trunc('minute', now()), 1)
      ON CONFLICT (team_id, limit_class, window_start) DO UPDATE SET count = rate_windows.count + 1
      RETURNING count, ceil(extract(epoch FROM (window_start + interval '1 minute' - now())))::int AS left
    )
    SELECT c.count, c.left, set_config('synchronous_commit', 'off', true) AS async_commit FROM c`);
  const row = r.rows[0]!;
  await pruneRateWindows(db);
  return { count: Number(row.count), retryAfterSeconds: Math.max(1, Number(row.left)) };
}

/** Old windows go now and then (one request in ~200), not on every call. */
export async function pruneRateWindows(db: Db): Promise<void> {
  if (Math.random() < 0.005) await db.execute(sql`DELETE FROM rate_windows WHERE window_start < now() - interval '5 minutes'`);
}

/** Jobs of the team running now (pending scrapes/parses, crawls and batches scraping) and the latest success. */
export async function teamQueue(db: Db, teamId: string): Promise<{ active: number; activeScrapes: number; mostRecentSuccess: Date | null }> {
  const r = await db.execute<{ scrapes: string; crawls: string; parses: string; recent: Date | string | null }>(sql`
    SELECT (SELECT count(*) FROM scrape_jobs WHERE team_id = ${teamId} AND status = 'pending') AS scrapes,
           (SELECT count(*) FROM jobs WHERE team_id = ${teamId} AND kind IN ('crawl', 'batch', 'extract') AND status IN ('queued', 'running')) AS crawls,
           (SELECT count(*) FROM jobs WHERE team_id = ${teamId} AND kind = 'parse' AND status IN ('queued', 'running', 'cancelling')) AS parses,
           (SELECT max(completed_at) FROM scrape_jobs WHERE team_id = ${teamId} AND status = 'completed') AS recent`);
  const row = r.rows[0]!;
  const scrapes = Number(row.scrapes);
  return { active: scrapes + Number(row.crawls) + Number(row.parses), activeScrapes: scrapes, mostRecentSuccess: row.recent ? new Date(row.recent) : null };
}

/**
 * Takes one of the team's `max` concurrency slots, or returns null when all are held. The count
 * and the insert run under a per-team transaction advisory lock (wds_take_concurrency_slot,
 * migration 0019: one round trip), so concurrent API processes cannot both take the last slot.
 * Slots expire after `ttlMs` (a crashed API's slots come back).
 */
export async function acquireConcurrencySlot(db: Db, teamId: string, max: number, ttlMs: number): Promise<string | null> {
  const r = await db.execute<{ id: string | null }>(sql`
    SELECT wds_take_concurrency_slot(${teamId}::uuid, ${max}::int, ${Math.round(ttlMs)}::int) AS id, set_config('synchronous_commit', 'off', true) AS async_commit`);
  return r.rows[0]?.id ?? null;
}

export async function releaseConcurrencySlot(db: Db, id: string): Promise<void> {
  await db.execute(sql`WITH d AS (DELETE FROM concurrency_slots WHERE id = ${id}) SELECT set_config('synchronous_commit', 'off', true)`);
}

/** Slots held now (concurrency-check). */
export async function heldConcurrencySlots(db: Db, teamId: string): Promise<number> {
  const r = await db.execute<{ n: string }>(sql`SELECT count(*) AS n FROM concurrency_slots WHERE team_id = ${teamId} AND expires_at >= now()`);
  return Number(r.rows[0]!.n);
}
