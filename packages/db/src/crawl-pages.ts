import { createHash } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { storable } from './text';
import { eventCtes, type EventWebhook } from './events';
import { chargeCtes, boundedKey } from './ledger';
import { frontierInsert, type FrontierEntry } from './frontier';
import { searchIndexCte, sharedIndexAllows } from './search-index';
import { pageVersionCtes, type VersionWrite } from './page-versions';

/** Storing a fetched page of a crawl or batch job: one statement per page, idempotent per (job, URL key). */

/** What a scraped page leaves behind: the links it adds to the frontier, and its document (none for discovery-only pages). */
export interface FinishedPage {
  links: FrontierEntry[];
  document?: {
    body: unknown;
    credits: number;
    /** The job's webhook, when it subscribes to page events: the page event is delivered there. */
    webhook?: EventWebhook | null;
    /**
     * The request asks for model-made formats: the document waits in crawl_llm_pages for its
     * model step (crawl-llm.ts), unseen and unbilled until that step stores it; the URL becomes
     * `llm`. No charge and no event here.
     */
    pendingLlm?: boolean;
    /** Change tracking: the page's version, recorded only when this statement stores the document. */
    versions?: VersionWrite[];
  };
}

/**
 * A stored page's ledger keys: `plain` for jobs that keep data; `zdr` for those that do not (the
 * charge outlives a zero-data-retention job's pages, so its key names the page by a hash of its URL key).
 */
export function pageChargeKeys(jobId: string, key: string): { plain: string; zdr: string } {
  return { plain: boundedKey('page', jobId, key), zdr: `page:${jobId}:sha256:${createHash('sha256').update(key).digest('hex')}` };
}

/** A stored page's `page` event key (unique per job). */
export const pageEventKey = (key: string): string => boundedKey('page', key);

/**
 * What storing a page's document sets off, after a `doc` CTE (the inserted crawl_documents row:
 * seq, credits) and a `job` CTE (team_id, kind, keeps_no_data): its charge, its `page` event
 * (and webhook) and its search index row. One definition for every statement that stores a
 * page — the fetch's (`finishPage`) and the model step's (`finishLlmPage`) — so a page is billed,
 * announced and indexed the same way whichever step finished it.
 */
export function pageStoredCtes(jobId: string, key: string, webhook: EventWebhook | null | undefined, body: unknown): SQL {
  const keys = pageChargeKeys(jobId, key);
  const chargeKey = sql`CASE WHEN job.keeps_no_data THEN ${keys.zdr}::text ELSE ${keys.plain}::text END`;
  return sql`${chargeCtes(sql`SELECT job.team_id, ${jobId}::uuid, job.kind, doc.credits, ${chargeKey} FROM doc, job`)},
    ${eventCtes({
      jobId,
      type: 'page',
      key: pageEventKey(key),
      payload: sql`jsonb_build_object('urlKey', ${key}::text, 'docSeq', doc.seq)`,
      src: sql`doc`,
      webhook,
    })}${searchIndexCte(sql`SELECT job.team_id, job.shareable FROM doc, job WHERE NOT job.keeps_no_data`, body)}`;
}

/** A job whose pages must not outlive it (zero data retention, lockdown scrape options): never indexed for search. */
export const KEEPS_NO_DATA = sql.raw(`(zero_data_retention OR coalesce((options #>> '{scrapeOptions,zeroDataRetention}')::boolean, false)
  OR coalesce((options ->> 'zeroDataRetention')::boolean, false) OR coalesce((options #>> '{scrapeOptions,lockdown}')::boolean, false)
  OR coalesce((options ->> 'lockdown')::boolean, false))`);

/**
 * The `job` CTE of every statement that stores a page (pageStoredCtes reads it): the job's team,
 * kind, whether its pages must keep no data, and whether a shared search index may show them to
 * other teams (not when they were fetched with the team's headers, profile or actions).
 */
export const pageJobCte = (jobId: SQL) =>
  sql`job AS (SELECT team_id, kind, ${KEEPS_NO_DATA} AS keeps_no_data, ${sharedIndexAllows(sql`options`)} AS shareable FROM jobs WHERE id = ${jobId})`;

/**
 * Ends a scraped page in one statement, so it is atomic without a transaction and costs one
 * round trip: its links enter the frontier (idempotent per key), its document is stored once,
 * the URL is marked done, and — only if this call stored the document — the page's credits are
 * charged to the ledger (key page:<job>:<url key>, for zero data retention a hash of the URL key), a `page` event is appended (payload: url key
 * and document seq) and, with a webhook, its delivery is queued. Links go in with the page:
 * once a URL is done it is never retried, so its links must never be lost after it. True when
 * this call stored the document (or, with `pendingLlm`, its draft: then nothing is billed or
 * announced until the model step ends it, see crawl-llm.ts).
 *
 * The statement commits asynchronously (set_config … true lasts until its commit): the page
 * event takes the job's event head row and holds it until the commit, so waiting for the WAL
 * flush there would make a crawl's pages commit one flush after another (measured on this
 * 2-core host with fsync on, 20 concurrent pages: ~300 pages/s flushed vs ~900 async, the old
 * statement without ledger and events ~900–1,600). What a Postgres crash can lose is the last
 * few hundred milliseconds of pages, and a lost page is redone: its URL is still leased to the
 * activity, so it is claimed again when the lease ends (as when a worker dies), and its charge
 * and events are written again with it (a receiver may see that page's webhook twice).
 */
export async function finishPage(db: Db, jobId: string, key: string, page: FinishedPage): Promise<boolean> {
  return (await storePage(db, jobId, key, page)).stored;
}

/**
 * finishPage, also counting the links that were new to the frontier: a browser page tells the
 * crawl loop whether its rendered DOM gave the fetch window anything to claim.
 */
export async function finishPageCountingLinks(db: Db, jobId: string, key: string, page: FinishedPage): Promise<{ stored: boolean; linksAdded: number }> {
  return storePage(db, jobId, key, page, true);
}

async function storePage(db: Db, jobId: string, key: string, page: FinishedPage, countLinks = false): Promise<{ stored: boolean; linksAdded: number }> {
  const d = page.document;
  const pending = !!d?.pendingLlm;
  const body = d ? JSON.stringify(storable(d.body)) : null;
  const res = await db.execute<{ stored: number; links_added?: number }>(sql`
    WITH ${pageJobCte(sql`${jobId}`)}, links AS (
      ${frontierInsert(jobId, page.links, countLinks)}
    ), doc AS (
      INSERT INTO crawl_documents (job_id, url_key, document, credits)
      SELECT ${jobId}::uuid, ${key}::text, ${pending ? null : body}::jsonb, ${d?.credits ?? 0}::int
      WHERE ${!!d && !pending}::bool
      ON CONFLICT DO NOTHING
      RETURNING seq, credits
    ), draft AS (
      INSERT INTO crawl_llm_pages (job_id, url_key, document, credits)
      SELECT ${jobId}::uuid, ${key}::text, ${pending ? body : null}::jsonb, ${d?.credits ?? 0}::int
      WHERE ${pending}::bool AND NOT EXISTS (SELECT 1 FROM crawl_documents WHERE job_id = ${jobId}::uuid AND url_key = ${key}::text)
        AND EXISTS (SELECT 1 FROM jobs WHERE id = ${jobId} AND status IN ('queued', 'running'))
      ON CONFLICT DO NOTHING
      RETURNING 1
    ), done AS (
      UPDATE crawl_urls SET done_at = now(), lease_owner = NULL, lease_until = NULL,
        status = CASE WHEN EXISTS (SELECT 1 FROM draft) OR EXISTS (SELECT 1 FROM crawl_llm_pages WHERE job_id = ${jobId} AND url_key = ${key}) THEN 'llm' ELSE 'done' END
      WHERE job_id = ${jobId} AND url_key = ${key}
    ), ${pageStoredCtes(jobId, key, d?.webhook, pending ? undefined : d?.body)}${pageVersionCtes(pending ? [] : (d?.versions ?? []), sql`EXISTS (SELECT 1 FROM doc)`)}
    SELECT (SELECT count(*) FROM doc)::int + (SELECT count(*) FROM draft)::int AS stored,${countLinks ? sql` (SELECT count(*) FROM links)::int AS links_added,` : sql``}
      set_config('synchronous_commit', 'off', true) AS async_commit`);
  return { stored: (res.rows[0]?.stored ?? 0) > 0, linksAdded: res.rows[0]?.links_added ?? 0 };
}
