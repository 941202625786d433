import { sql } from 'drizzle-orm';
import type { Db } from './client';

/**
 * The deployment's politeness budget per origin, in Postgres (schema/politeness.ts, functions of
 * migration 0036): one statement per take, release, backoff and recovery, committed
 * asynchronously (the state is ephemeral: the tables are UNLOGGED). Every caller is a holder (a
 * worker process) whose slots count while its row is alive; `renewHolder` keeps it so.
 */

/** Channel on which every backoff step (up or down) is announced: `{origin, inMs, level}`. */
export const ORIGIN_BACKOFF_CHANNEL = 'wds_origin_backoff';

export interface OriginTake {
  origin: string;
  holder: string;
  /** Requests in flight at the origin at most, across the deployment; 0: no cap. */
  cap: number;
  /** At least this long between request starts at the origin (this request's view: the operator's, robots.txt's). */
  intervalMs: number;
  /** Starts are spaced by this, doubled per backoff step left, while the origin recovers. */
  recoveryMs: number;
  /** A start later than this from now is not reserved (the request would miss its deadline); null: no deadline. */
  deadlineInMs: number | null;
}

export interface OriginTakeResult {
  granted: boolean;
  /** Granted: wait this long before starting. Not granted but set: the start would come after the deadline. */
  startInMs: number | null;
  /** The origin's backoff window still to run, if any. */
  backoffInMs: number | null;
  level: number;
  inFlight: number;
}

export async function takeOriginSlot(db: Db, t: OriginTake): Promise<OriginTakeResult> {
  const r = await db.execute<{ o_granted: boolean; o_start_in_ms: number | null; o_backoff_in_ms: number | null; o_level: number; o_in_flight: number }>(sql`
    SELECT t.*, set_config('synchronous_commit', 'off', true) AS async_commit
    FROM wds_origin_take(${t.origin}, ${t.holder}, ${t.cap}::int, ${Math.round(t.intervalMs)}::int, ${Math.round(t.recoveryMs)}::int, ${t.deadlineInMs === null ? null : Math.max(0, Math.round(Math.min(t.deadlineInMs, 2 ** 31 - 1)))}::int) t`);
  const row = r.rows[0]!;
  return { granted: row.o_granted, startInMs: row.o_start_in_ms, backoffInMs: row.o_backoff_in_ms, level: row.o_level, inFlight: row.o_in_flight };
}

/**
 * A granted request is about to start, `reservedMsAgo` after the start it reserved: 0 to start now,
 * else ms to wait for the new start it was given (it woke later than `toleranceMs` and another
 * request's start was reserved after its own, which it would have crowded).
 */
export async function beginOriginStart(db: Db, b: { origin: string; reservedMsAgo: number; intervalMs: number; recoveryMs: number; toleranceMs: number }): Promise<number> {
  const r = await db.execute<{ wait: number }>(sql`
    SELECT wds_origin_begin(${b.origin}, ${Math.max(0, Math.round(b.reservedMsAgo))}::int, ${Math.round(b.intervalMs)}::int, ${Math.round(b.recoveryMs)}::int, ${Math.round(b.toleranceMs)}::int) AS wait,
      set_config('synchronous_commit', 'off', true) AS async_commit`);
  return r.rows[0]?.wait ?? 0;
}

/** One request of `holder` at `origin` ended. */
export async function releaseOriginSlot(db: Db, origin: string, holder: string): Promise<void> {
  await db.execute(sql`
    WITH d AS (UPDATE origin_holds SET in_flight = in_flight - 1 WHERE origin = ${origin} AND holder = ${holder} AND in_flight > 0)
    SELECT set_config('synchronous_commit', 'off', true)`);
}

export interface OriginBackoff {
  origin: string;
  /** Retry-After in ms, when the answer had one. */
  retryAfterMs: number | null;
  /** How long ago the request that got this answer started. */
  startedMsAgo: number;
  baseMs: number;
  maxMs: number;
  reason: string;
}

/** A 429/503 or a burst of resets: the origin's backoff after it (announced on ORIGIN_BACKOFF_CHANNEL). */
export async function backOffOrigin(db: Db, b: OriginBackoff): Promise<{ backoffInMs: number; level: number }> {
  const r = await db.execute<{ o_backoff_in_ms: number; o_level: number }>(sql`
    SELECT * FROM wds_origin_backoff(${b.origin}, ${b.retryAfterMs === null ? null : Math.round(Math.min(b.retryAfterMs, 2 ** 31 - 1))}::int, ${Math.round(b.startedMsAgo)}::int, ${Math.round(b.baseMs)}::int, ${Math.round(b.maxMs)}::int, ${b.reason})`);
  return { backoffInMs: r.rows[0]!.o_backoff_in_ms, level: r.rows[0]!.o_level };
}

/** A success after the backoff window: one step less, at most one per `stepMs`; the new level, or null when nothing changed. */
export async function recoverOrigin(db: Db, origin: string, stepMs: number): Promise<number | null> {
  const r = await db.execute<{ level: number | null }>(sql`SELECT wds_origin_recover(${origin}, ${Math.round(stepMs)}::int) AS level`);
  return r.rows[0]?.level ?? null;
}

/** Origins in backoff now or still recovering: what a worker's fast path must know when it (re)connects to the channel. */
export async function originsInBackoff(db: Db): Promise<{ origin: string; backoffInMs: number; level: number }[]> {
  const r = await db.execute<{ origin: string; in_ms: number; level: number }>(sql`
    SELECT origin, greatest(0, ceil(extract(epoch FROM backoff_until - clock_timestamp()) * 1000))::int AS in_ms, backoff_level AS level
    FROM origin_budgets WHERE backoff_level > 0 OR backoff_until > now()`);
  return r.rows.map((x) => ({ origin: x.origin, backoffInMs: x.in_ms ?? 0, level: x.level }));
}

/**
 * Keeps `holder` alive for `leaseMs` more; holders dead for a minute are forgotten with their
 * holds (they stopped counting when their lease ended).
 */
export async function renewHolder(db: Db, holder: string, leaseMs: number): Promise<void> {
  await db.execute(sql`
    WITH up AS (
      INSERT INTO politeness_holders (holder, expires_at) VALUES (${holder}, now() + make_interval(secs => ${leaseMs / 1000}))
      ON CONFLICT (holder) DO UPDATE SET expires_at = EXCLUDED.expires_at
    ), dead AS (
      DELETE FROM politeness_holders WHERE expires_at < now() - interval '1 minute' RETURNING holder
    ), gone AS (
      DELETE FROM origin_holds WHERE holder IN (SELECT holder FROM dead)
    )
    SELECT set_config('synchronous_commit', 'off', true)`);
}

/** A holder shutting down: its slots stop counting at once. */
export async function dropHolder(db: Db, holder: string): Promise<void> {
  await db.execute(sql`WITH h AS (DELETE FROM politeness_holders WHERE holder = ${holder}) DELETE FROM origin_holds WHERE holder = ${holder}`);
}

/** What an origin's budget holds now (tests, operators). */
export async function originBudgetState(db: Db, origin: string): Promise<{ inFlight: number; backoffInMs: number; level: number; reason: string | null } | null> {
  const r = await db.execute<{ in_flight: number; in_ms: number; level: number; reason: string | null }>(sql`
    SELECT (SELECT coalesce(sum(h.in_flight), 0)::int FROM origin_holds h JOIN politeness_holders p ON p.holder = h.holder WHERE h.origin = b.origin AND p.expires_at > now()) AS in_flight,
           greatest(0, ceil(extract(epoch FROM b.backoff_until - clock_timestamp()) * 1000))::int AS in_ms, b.backoff_level AS level, b.backoff_reason AS reason
    FROM origin_budgets b WHERE b.origin = ${origin}`);
  const x = r.rows[0];
  return x ? { inFlight: x.in_flight, backoffInMs: x.in_ms ?? 0, level: x.level, reason: x.reason } : null;
}
