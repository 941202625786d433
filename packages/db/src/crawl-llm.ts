import { sql } from 'drizzle-orm';
import { pageJobCte, pageStoredCtes } from './crawl-pages';
import type { Db } from './client';
import type { EventWebhook } from './events';
import { pickOnce } from './pick';
import { pageVersionCtes, type VersionWrite } from './page-versions';
import { storable, storableText } from './text';

/**
 * The model step of crawl and batch pages whose scrapeOptions ask for model-made formats. The
 * page handler stores such a page's document in crawl_llm_pages (finishPage with
 * `pendingLlm`), where status, pagination, the WebSocket stream and webhooks do not see it; an
 * LLM batch (wds-llm) claims it with a lease, runs the model, and `finishLlmPage` moves the
 * enriched document into crawl_documents with its credits and its page event in one statement.
 * Every write is idempotent per (job, URL key): the pending row is deleted by the statement
 * that ends it, so a second attempt (a retried activity, a lease taken over) finds nothing to end.
 */

export interface ClaimedLlmPage {
  key: string;
  /** The document as fetched (markdown included). */
  document: unknown;
  /** The page's own credits. */
  credits: number;
  /** Claims of this page so far, this one included. */
  attempts: number;
  /** Ms since the first retryable failure of its model step (null: it has not failed yet): the patience for provider failures counts from it. */
  failingMs: number | null;
  lastError: string | null;
  /** Reached only from memory of earlier crawls (change tracking's visibility `hidden`). */
  hidden: boolean;
}

/**
 * Leases up to `n` ready pages (never leased, lease or back-off over) to `owner`, oldest first.
 * `retakeOwn` (an activity attempt's first claim) also takes back what earlier attempts of the
 * same activity held, so the work of a killed worker resumes at once. SKIP LOCKED: concurrent
 * batches never wait for each other; pickOnce: the pick runs once whatever the plan (pick.ts).
 */
export async function claimLlmPages(db: Db, jobId: string, owner: string, n: number, leaseMs: number, opts: { retakeOwn: boolean }): Promise<ClaimedLlmPage[]> {
  const mine = opts.retakeOwn ? sql`OR lease_owner = ${owner}` : sql``;
  const r = await db.execute<{ url_key: string; document: unknown; credits: number; attempts: number; failing_ms: number | null; last_error: string | null; seq: string; hidden: boolean | null }>(sql`
    UPDATE crawl_llm_pages p SET lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = p.attempts + 1
    WHERE p.job_id = ${jobId} AND p.url_key = ANY(${pickOnce(sql`
      SELECT url_key FROM crawl_llm_pages
      WHERE job_id = ${jobId} AND (lease_until IS NULL OR lease_until < now() ${mine})
      ORDER BY seq LIMIT ${n} FOR UPDATE SKIP LOCKED`)})
    RETURNING p.url_key, p.document, p.credits, p.attempts, p.last_error, p.seq,
              (EXTRACT(EPOCH FROM now() - p.failing_since) * 1000)::int AS failing_ms,
              (SELECT u.hidden FROM crawl_urls u WHERE u.job_id = p.job_id AND u.url_key = p.url_key) AS hidden`);
  return r.rows
    .sort((a, b) => Number(a.seq) - Number(b.seq))
    .map((x) => ({ key: x.url_key, document: x.document, credits: x.credits, attempts: x.attempts, failingMs: x.failing_ms, lastError: x.last_error, hidden: !!x.hidden }));
}

export interface EnrichedPage {
  body: unknown;
  /** The page's credits and its formats' credits together. */
  credits: number;
  webhook?: EventWebhook | null;
  /** Change tracking: the page's version, recorded only when this statement stores the document. */
  versions?: VersionWrite[];
}

/**
 * Ends a pending page with its enriched document, in one statement: the pending row is deleted,
 * the document stored (its seq is its completion order), the URL marked done, the credits
 * charged once (key page:<job>:<url key>, as for every crawl page) and the `page` event appended
 * (with its webhook delivery). Nothing happens when the pending row is gone (another attempt
 * ended it, or the job ended): true only when this call stored the document. Commits
 * asynchronously like finishPage, for the same reason; a lost commit leaves the page pending
 * and leased, so it is done again when its lease ends.
 */
export async function finishLlmPage(db: Db, jobId: string, key: string, page: EnrichedPage): Promise<boolean> {
  const res = await db.execute<{ stored: number }>(sql`
    WITH ${pageJobCte(sql`${jobId}`)}, pending AS (
      DELETE FROM crawl_llm_pages WHERE job_id = ${jobId} AND url_key = ${key} RETURNING url_key
    ), doc AS (
      INSERT INTO crawl_documents (job_id, url_key, document, credits)
      SELECT ${jobId}::uuid, pending.url_key, ${JSON.stringify(storable(page.body))}::jsonb, ${page.credits}::int FROM pending
      ON CONFLICT DO NOTHING
      RETURNING seq, credits
    ), done AS (
      UPDATE crawl_urls SET status = 'done', done_at = now(), lease_owner = NULL, lease_until = NULL
      WHERE job_id = ${jobId} AND url_key = ${key} AND EXISTS (SELECT 1 FROM pending)
    ), ${pageStoredCtes(jobId, key, page.webhook, page.body)}${pageVersionCtes(page.versions ?? [], sql`EXISTS (SELECT 1 FROM doc)`)}
    SELECT (SELECT count(*) FROM doc)::int AS stored, set_config('synchronous_commit', 'off', true) AS async_commit`);
  return (res.rows[0]?.stored ?? 0) > 0;
}

/**
 * A pending page whose model step failed for good: it becomes a failed page with its error
 * (listed by GET …/errors, counted in `failed`), and its pending row goes. False when it was no
 * longer pending.
 */
export async function failLlmPage(db: Db, jobId: string, key: string, error: string): Promise<boolean> {
  const res = await db.execute<{ n: number }>(sql`
    WITH pending AS (
      DELETE FROM crawl_llm_pages WHERE job_id = ${jobId} AND url_key = ${key} RETURNING url_key
    ), failed AS (
      UPDATE crawl_urls SET status = 'failed', error = ${storableText(error)}, done_at = now(), lease_owner = NULL, lease_until = NULL
      WHERE job_id = ${jobId} AND url_key = ${key} AND EXISTS (SELECT 1 FROM pending)
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM failed)::int AS n`);
  return (res.rows[0]?.n ?? 0) > 0;
}

/**
 * Gives a leased page back, claimable again after `delayMs` (the back-off after a retryable
 * failure, or the end of the token window). `error` is remembered as its last failure (and
 * the first one starts the patience clock);
 * `countAttempt: false` undoes the claim's attempt (the model was never asked: a token limit).
 */
export async function deferLlmPage(db: Db, jobId: string, key: string, owner: string, delayMs: number, o: { error?: string; countAttempt: boolean }): Promise<void> {
  await db.execute(sql`
    UPDATE crawl_llm_pages SET lease_owner = NULL, lease_until = now() + make_interval(secs => ${Math.max(0, delayMs) / 1000}),
      attempts = attempts - ${o.countAttempt ? 0 : 1}, last_error = coalesce(${o.error === undefined ? null : storableText(o.error)}, last_error),
      failing_since = CASE WHEN ${o.error !== undefined}::bool THEN coalesce(failing_since, now()) ELSE failing_since END
    WHERE job_id = ${jobId} AND url_key = ${key} AND lease_owner = ${owner}`);
}

export interface LlmBacklog {
  /** Pages waiting for their model step (leased or not). */
  pending: number;
  /** Of them, claimable now. */
  ready: number;
  /** Ms until the next one becomes claimable (a lease or back-off ending), when none is ready. */
  nextReadyMs: number | null;
}

/** What LLM work a job has left. */
export async function llmBacklog(db: Db, jobId: string): Promise<LlmBacklog> {
  const r = await db.execute<{ pending: number; ready: number; next_ms: number | null }>(sql`
    SELECT count(*)::int AS pending,
           count(*) FILTER (WHERE lease_until IS NULL OR lease_until < now())::int AS ready,
           greatest(0, (EXTRACT(EPOCH FROM min(lease_until) FILTER (WHERE lease_until >= now()) - now()) * 1000))::int AS next_ms
    FROM crawl_llm_pages WHERE job_id = ${jobId}`);
  const row = r.rows[0]!;
  return { pending: row.pending, ready: row.ready, nextReadyMs: row.ready > 0 ? 0 : row.next_ms };
}
