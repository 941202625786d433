import { sql } from 'drizzle-orm';
import type { Db } from './client';

/**
 * The deployment's model-token budget per minute (WDS_LLM_TOKENS_PER_MINUTE), shared by every
 * worker through one row per one-minute window (schema/llm.ts), like the API's rate_windows.
 * A model step reserves what it may use (its prompts' tokens + its output budget) before it
 * runs and corrects by its real usage after; a reservation that would pass the limit is refused
 * with the time to the window's end, and the caller waits that long (a retryable failure).
 */

export type TokenReservation =
  | { granted: true; windowStart: Date }
  | { granted: false; retryAfterMs: number; used: number };

/**
 * Adds `tokens` to the current window if that stays within `limit`, atomically (one upsert:
 * concurrent workers never pass the limit together). A step larger than the whole limit is
 * granted in an empty window, alone, so it is not refused for ever.
 */
export async function reserveLlmTokens(db: Db, tokens: number, limit: number): Promise<TokenReservation> {
  const n = Math.max(0, Math.ceil(tokens));
  const r = await db.execute<{ window_start: Date | string }>(sql`
    INSERT INTO llm_token_windows AS w (window_start, tokens) VALUES (date_trunc('minute', now()), ${n})
    ON CONFLICT (window_start) DO UPDATE SET tokens = w.tokens + excluded.tokens
      WHERE w.tokens + excluded.tokens <= ${limit} OR w.tokens = 0
    RETURNING window_start`);
  const row = r.rows[0];
  // Old windows go now and then (one reservation in ~200), not on every call.
  if (Math.random() < 0.005) await db.execute(sql`DELETE FROM llm_token_windows WHERE window_start < now() - interval '5 minutes'`);
  if (row) return { granted: true, windowStart: new Date(row.window_start) };
  const w = await db.execute<{ used: string; left_ms: number }>(sql`
    SELECT tokens AS used, ceil(EXTRACT(EPOCH FROM (window_start + interval '1 minute' - now())) * 1000)::int AS left_ms
    FROM llm_token_windows WHERE window_start = date_trunc('minute', now())`);
  const cur = w.rows[0];
  // The window turned over between the two statements: ask again at once.
  if (!cur) return { granted: false, retryAfterMs: 1, used: 0 };
  return { granted: false, retryAfterMs: Math.max(1, cur.left_ms), used: Number(cur.used) };
}

/** Corrects a granted reservation by `delta` tokens (real usage − reserved; negative gives tokens back), in its own window. */
export async function settleLlmTokens(db: Db, windowStart: Date, delta: number): Promise<void> {
  const d = Math.round(delta);
  if (d === 0) return;
  await db.execute(sql`UPDATE llm_token_windows SET tokens = greatest(0, tokens + ${d}) WHERE window_start = ${windowStart.toISOString()}::timestamptz`);
}

/** Tokens counted in the current window (tests, operators). */
export async function llmTokensThisMinute(db: Db): Promise<number> {
  const r = await db.execute<{ tokens: string }>(sql`SELECT tokens FROM llm_token_windows WHERE window_start = date_trunc('minute', now())`);
  return Number(r.rows[0]?.tokens ?? 0);
}
