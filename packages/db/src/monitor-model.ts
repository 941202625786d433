import { sql } from 'drizzle-orm';
import type { Db } from './client';
import type { CheckPageKind, LeasedCheckPage } from './monitor-pages';
import { pickOnce } from './pick';
import { storable, storableText } from './text';

/**
 * Monitor check pages waiting for their model step (status `llm`): json mode's extraction, the
 * goal judge. A fetch batch (wds-fetch) or a crawl target's collection holds a page here with
 * what the step reads (`pending`); the run's LLM window (wds-llm) claims pages with a lease, and
 * the step ends each with storeCheckPageResults(…, ['llm']) — so the page is seen only once its
 * model-made parts are in. A retryable provider failure gives the page back for later
 * (`lease_until` is then the back-off).
 */

export interface HeldPage {
  checkId: string;
  targetId: string;
  urlKey: string;
  pending: unknown;
}

/** Leased pages of a fetch batch → waiting for the model step. */
export async function holdForModel(db: Db, pages: HeldPage[]): Promise<void> {
  if (!pages.length) return;
  await db.execute(sql`
    UPDATE monitor_check_pages p SET status = 'llm', pending = h.pending, lease_owner = NULL, lease_until = NULL
    FROM unnest(${sql.param(pages.map((x) => x.checkId))}::uuid[], ${sql.param(pages.map((x) => x.targetId))}::text[], ${sql.param(pages.map((x) => x.urlKey))}::text[],
                ${sql.param(pages.map((x) => JSON.stringify(storable(x.pending))))}::jsonb[]) AS h(check_id, target_id, url_key, pending)
    WHERE p.check_id = h.check_id AND p.target_id = h.target_id AND p.url_key = h.url_key AND p.status IN ('queued', 'leased')`);
}

/** A leased page of the model step: a frontier page (monitor-pages.ts) with its retry state. */
export interface ModelPage extends LeasedCheckPage {
  /** Claims of this page's model step so far, this one included. */
  attempts: number;
  /** Ms since its model step first failed retryably (null: it has not). */
  failingMs: number | null;
}

/**
 * Leases up to `n` ready pages of a run (never leased, lease or back-off over; an attempt's
 * first claim also retakes what earlier attempts of the same activity held), oldest first.
 */
export async function claimModelPages(db: Db, runId: string, owner: string, n: number, leaseMs: number, opts: { retakeOwn: boolean }): Promise<ModelPage[]> {
  const mine = opts.retakeOwn ? sql`OR lease_owner = ${owner}` : sql``;
  type Row = { check_id: string; target_id: string; url: string; url_key: string; id: string; kind: CheckPageKind; pending: unknown; attempts: number; failing_ms: number | null; monitor_id: string; team_id: string; seq: string };
  const r = await db.execute<Row>(sql`
    WITH leased AS (
      UPDATE monitor_check_pages p SET lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = p.attempts + 1
      WHERE p.run_id = ${runId} AND p.seq = ANY(${pickOnce(sql`
        SELECT seq FROM monitor_check_pages WHERE run_id = ${runId} AND status = 'llm' AND (lease_until IS NULL OR lease_until < now() ${mine})
        ORDER BY seq LIMIT ${n} FOR UPDATE SKIP LOCKED`)})
      RETURNING p.check_id, p.target_id, p.url, p.url_key, p.id, p.kind, p.pending, p.attempts, p.seq, (EXTRACT(EPOCH FROM now() - p.failing_since) * 1000)::int AS failing_ms
    )
    SELECT l.*, c.monitor_id, c.team_id FROM leased l JOIN monitor_checks c ON c.id = l.check_id ORDER BY l.seq`);
  return r.rows.map((p) => ({
    checkId: p.check_id, targetId: p.target_id, url: p.url, urlKey: p.url_key, pageId: p.id, kind: p.kind, pending: p.pending,
    attempts: p.attempts, failingMs: p.failing_ms, monitorId: p.monitor_id, teamId: p.team_id,
  }));
}

/**
 * Gives a page back after a retryable failure of its model step: not claimable for `waitMs`;
 * `countAttempt` (a provider failure, not a full token window) starts its patience clock.
 */
export async function deferModelPage(db: Db, p: { checkId: string; targetId: string; urlKey: string }, owner: string, waitMs: number, o: { error?: string; countAttempt: boolean }): Promise<void> {
  await db.execute(sql`
    UPDATE monitor_check_pages SET lease_owner = NULL, lease_until = now() + make_interval(secs => ${waitMs / 1000}),
      failing_since = CASE WHEN ${o.countAttempt} THEN coalesce(failing_since, now()) ELSE failing_since END,
      attempts = CASE WHEN ${o.countAttempt} THEN attempts ELSE greatest(0, attempts - 1) END,
      error = coalesce(${o.error ? storableText(o.error).slice(0, 2_000) : null}, error)
    WHERE check_id = ${p.checkId} AND target_id = ${p.targetId} AND url_key = ${p.urlKey} AND status = 'llm' AND lease_owner = ${owner}`);
}
