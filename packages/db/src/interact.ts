import { and, eq, sql } from 'drizzle-orm';
import type { Db } from './client';
import { chargeCtes } from './ledger';
import { interactCalls, interactSessions, scrapeJobs } from './schema/index';
import { storable } from './text';

/**
 * Interact sessions and calls (schema/interact.ts). A session row follows its page: parked by the
 * worker that rendered the scrape, live while a session uses it, ended (with the reason) after.
 * Ending a live session frees its team concurrency slot and bills it, in one statement.
 */

/**
 * Credits per browser minute of a live session (Firecrawl's published prices): 2 for code only, 7
 * once a prompt ran in it; prorated by the second, at least one minute. Parked pages cost nothing.
 */
export const INTERACT_CREDITS_PER_MINUTE = { code: 2, prompt: 7 } as const;

export type InteractSession = typeof interactSessions.$inferSelect;
export type InteractCall = typeof interactCalls.$inferSelect;

/** What POST /v2/scrape/{id}/interact needs of the scrape: the team's own row only. */
export async function loadScrapeForInteract(db: Db, teamId: string, scrapeId: string) {
  const [row] = await db
    .select({ status: scrapeJobs.status, url: scrapeJobs.url, options: scrapeJobs.options, createdAt: scrapeJobs.createdAt })
    .from(scrapeJobs)
    .where(and(eq(scrapeJobs.id, scrapeId), eq(scrapeJobs.teamId, teamId)));
  return row ?? null;
}

/** Whether the team was billed for this scrape: true for a zero-data-retention scrape whose row is gone. */
export async function scrapeBilledToTeam(db: Db, teamId: string, scrapeId: string): Promise<boolean> {
  const r = await db.execute<{ ok: boolean }>(sql`
    SELECT EXISTS (SELECT 1 FROM credit_ledger WHERE job_id = ${scrapeId} AND team_id = ${teamId} AND job_kind = 'scrape') AS ok`);
  return !!r.rows[0]?.ok;
}

export async function loadInteractSession(db: Db, scrapeId: string): Promise<InteractSession | null> {
  const [row] = await db.select().from(interactSessions).where(eq(interactSessions.scrapeId, scrapeId));
  return row ?? null;
}

/** A scrape's rendered page is kept on `queue`'s worker (never replaces a live session). */
export async function parkInteractPage(db: Db, p: { scrapeId: string; teamId: string; queue: string }): Promise<void> {
  await db
    .insert(interactSessions)
    .values({ scrapeId: p.scrapeId, teamId: p.teamId, queue: p.queue, state: 'parked' })
    .onConflictDoUpdate({
      target: interactSessions.scrapeId,
      set: { queue: p.queue, state: 'parked', endReason: null, endedAt: null, lastUsedAt: sql`now()` },
      setWhere: sql`${interactSessions.state} <> 'live'`,
    });
}

/** A session starts on `queue`'s worker, holding `slotId` (the team concurrency slot), if any. */
export async function openInteractSession(db: Db, p: { scrapeId: string; teamId: string; queue: string; slotId?: string | null }): Promise<void> {
  const v = { queue: p.queue, state: 'live' as const, slotId: p.slotId ?? null, prompted: false, endReason: null, endedAt: null };
  await db
    .insert(interactSessions)
    .values({ scrapeId: p.scrapeId, teamId: p.teamId, ...v })
    .onConflictDoUpdate({ target: interactSessions.scrapeId, set: { ...v, startedAt: sql`now()`, lastUsedAt: sql`now()` } });
}

/**
 * A call used the session: its last use is now, and its concurrency slot lives `ttlMs` more (a
 * session whose every process died gives the slot back then). False when the row is no longer a
 * live session on `queue`.
 */
export async function touchInteractSession(db: Db, p: { scrapeId: string; queue: string; ttlMs: number; prompted?: boolean }): Promise<boolean> {
  const r = await db.execute<{ n: number }>(sql`
    WITH s AS (
      UPDATE interact_sessions SET last_used_at = now(), prompted = prompted OR ${!!p.prompted}
      WHERE scrape_id = ${p.scrapeId} AND queue = ${p.queue} AND state = 'live' RETURNING slot_id
    ), slot AS (
      UPDATE concurrency_slots SET expires_at = greatest(expires_at, now() + ${p.ttlMs} * interval '1 millisecond')
      WHERE id IN (SELECT slot_id FROM s)
    )
    SELECT count(*)::int AS n FROM s`);
  return Number(r.rows[0]!.n) > 0;
}

export interface EndedSession {
  ended: boolean;
  /** How long the live session lasted (0 for a parked page). */
  durationMs: number;
  credits: number;
}

/**
 * Ends the scrape's session or parked page (idempotent): its slot is freed and, if it was live,
 * its browser minutes are billed (key `interact:<scrape>:<start>`: each session once). `queue`
 * and `state` narrow what may be ended (a worker reports only its own pages).
 */
export async function endInteractSession(db: Db, p: { scrapeId: string; reason: string; queue?: string; state?: 'parked' | 'live' }): Promise<EndedSession> {
  const rate = INTERACT_CREDITS_PER_MINUTE;
  const r = await db.execute<{ n: number; ms: number | null; credits: number | null }>(sql`
    WITH old AS (
      SELECT scrape_id, state FROM interact_sessions
      WHERE scrape_id = ${p.scrapeId} AND state <> 'ended'
        ${p.queue ? sql`AND queue = ${p.queue}` : sql``} ${p.state ? sql`AND state = ${p.state}` : sql``}
      FOR UPDATE
    ), ended AS (
      UPDATE interact_sessions s SET state = 'ended', end_reason = ${p.reason}, ended_at = now()
      FROM old WHERE s.scrape_id = old.scrape_id
      RETURNING s.team_id, s.scrape_id, s.slot_id, s.started_at, s.prompted, old.state AS was,
        extract(epoch FROM now() - s.started_at) AS seconds
    ), freed AS (
      DELETE FROM concurrency_slots WHERE id IN (SELECT slot_id FROM ended)
    ), ${chargeCtes(sql`
      SELECT team_id, scrape_id, 'interact'::text,
        ceil((CASE WHEN prompted THEN ${rate.prompt}::int ELSE ${rate.code}::int END) * greatest(60, seconds) / 60)::int,
        'interact:' || scrape_id || ':' || floor(extract(epoch FROM started_at) * 1000)::bigint
      FROM ended WHERE was = 'live'`)}
    SELECT (SELECT count(*)::int FROM ended) AS n,
      (SELECT (seconds * 1000)::int FROM ended WHERE was = 'live') AS ms,
      (SELECT sum(amount)::int FROM credit_charge) AS credits`);
  const row = r.rows[0]!;
  return { ended: Number(row.n) > 0, durationMs: Number(row.ms ?? 0), credits: Number(row.credits ?? 0) };
}

export async function insertInteractCall(
  db: Db,
  c: { id: string; scrapeId: string; teamId: string; code?: string; prompt?: string; timeoutMs: number },
): Promise<void> {
  await db.insert(interactCalls).values({ id: c.id, scrapeId: c.scrapeId, teamId: c.teamId, code: c.code ?? null, prompt: c.prompt ?? null, timeoutMs: c.timeoutMs });
  // Rows of calls whose API died before reading them go now and then.
  if (Math.random() < 0.01) await db.execute(sql`DELETE FROM interact_calls WHERE created_at < now() - interval '1 hour'`);
}

export async function loadInteractCall(db: Db, id: string): Promise<InteractCall | null> {
  const [row] = await db.select().from(interactCalls).where(eq(interactCalls.id, id));
  return row ?? null;
}

export async function updateInteractCall(db: Db, id: string, patch: { snapshot?: unknown; generatedCode?: string; result?: unknown }): Promise<void> {
  const set: Partial<InteractCall> = {};
  if (patch.snapshot !== undefined) set.snapshot = storable(patch.snapshot);
  if (patch.generatedCode !== undefined) set.generatedCode = patch.generatedCode;
  if (patch.result !== undefined) set.result = storable(patch.result);
  await db.update(interactCalls).set(set).where(eq(interactCalls.id, id));
}

export async function deleteInteractCall(db: Db, id: string): Promise<void> {
  await db.delete(interactCalls).where(eq(interactCalls.id, id));
}
