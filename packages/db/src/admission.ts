import { sql } from 'drizzle-orm';
import type { Db } from './client';
import type { AuthedKey } from './keys';
import { pruneRateWindows } from './limits';
import type { LimitClass } from './schema/limits';

/**
 * The bookkeeping of one API request in one statement (one round trip instead of up to eight):
 * the key's authentication, its count in the team's minute window, and one of the team's
 * concurrency slots. Counting and the slot need the team's limits, which the API keeps for a few
 * seconds by team: `team` is what it believes the key's team and limits are; when the key turns
 * out to belong to another team, nothing is counted or taken (`asked: false`) and the API does it
 * the long way (countRequest, acquireConcurrencySlot). Semantics are those of the separate calls:
 * - the count is the same upsert as countRequest's;
 * - a slot is taken only when the count is within `perMinute`, by wds_take_concurrency_slot (migration
 *   0019: the per-team advisory lock, expired slots dropped, counted, inserted — acquireConcurrencySlot's
 *   transaction as one function), held until this statement commits.
 * Rate windows and slots are short-lived bookkeeping, committed without waiting for the disk
 * (synchronous_commit off for this transaction): a Postgres crash can forget the last counts and
 * slots of the moment before it, never a charge or a document.
 */
export interface AdmissionAsk {
  /** sha256 of the key (hashKey). */
  keyHash: string;
  team?: {
    id: string;
    cls: LimitClass;
    /** Requests per minute of `cls` for the team; absent = not limited (not counted). */
    perMinute?: number;
    /** Take a concurrency slot out of `max` (POST /v2/scrape and friends, when the team has a limit). */
    slot?: { max: number; ttlMs: number };
  };
}

export interface Admission {
  auth: AuthedKey | null;
  /** Whether `team` was the key's team, so counting and the slot were done as asked. */
  asked: boolean;
  /** The request's count in its minute window, when counted. */
  rate?: { count: number; retryAfterSeconds: number };
  /** When a slot was asked for and the count allowed it: its id, or null (all held). */
  slot?: string | null;
}

export async function admitRequest(db: Db, ask: AdmissionAsk): Promise<Admission> {
  const t = ask.team;
  const r = await db.execute<{
    key_id: string;
    team_id: string;
    scopes: string[] | null;
    flags: AuthedKey['flags'];
    count: number | null;
    left: number | null;
    slot: string | null;
  }>(sql`
    WITH k AS (
      SELECT a.id AS key_id, a.team_id, a.scopes, tm.flags FROM api_keys a JOIN teams tm ON tm.id = a.team_id
      WHERE a.key_hash = ${ask.keyHash} AND a.revoked_at IS NULL LIMIT 1
    ), r AS (
      INSERT INTO rate_windows (team_id, limit_class, window_start, count)
      SELECT k.team_id, ${t?.cls ?? 'other'}, date_trunc('minute', now()), 1 FROM k
      WHERE ${!!t && t.perMinute !== undefined}::bool AND k.team_id = ${t?.id ?? null}::uuid
      ON CONFLICT (team_id, limit_class, window_start) DO UPDATE SET count = rate_windows.count + 1
      RETURNING count, ceil(extract(epoch FROM (window_start + interval '1 minute' - now())))::int AS left
    )
    SELECT k.key_id, k.team_id, k.scopes, k.flags, r.count, r.left,
      CASE WHEN ${!!t?.slot}::bool AND k.team_id = ${t?.id ?? null}::uuid AND (r.count IS NULL OR r.count <= ${t?.perMinute ?? 0})
        THEN wds_take_concurrency_slot(k.team_id, ${t?.slot?.max ?? 0}::int, ${t?.slot?.ttlMs ?? 0}::int) END AS slot,
      set_config('synchronous_commit', 'off', true) AS async_commit
    FROM k LEFT JOIN r ON true`);
  const row = r.rows[0];
  if (!row) return { auth: null, asked: false };
  const auth: AuthedKey = { keyId: row.key_id, teamId: row.team_id, scopes: row.scopes, flags: row.flags };
  const asked = !!t && row.team_id === t.id;
  const out: Admission = { auth, asked };
  if (asked && row.count !== null) {
    out.rate = { count: Number(row.count), retryAfterSeconds: Math.max(1, Number(row.left)) };
    // As countRequest does: whoever counts prunes now and then.
    await pruneRateWindows(db);
  }
  if (asked && t!.slot && (t!.perMinute === undefined || (out.rate?.count ?? 0) <= t!.perMinute)) out.slot = row.slot;
  return out;
}
