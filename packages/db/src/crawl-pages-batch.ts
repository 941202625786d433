import { sql } from 'drizzle-orm';
import type { Db } from './client';
import { preparedStatement } from './prepared';
import { storable } from './text';
import { chargeCtes } from './ledger';
import { eventRowsCtes, type EventWebhook } from './events';
import { frontierColumns, frontierInsertOf, type FrontierEntry } from './frontier';
import { searchBatchColumns, searchIndexBatchCte } from './search-index';
import { pageChargeKeys, pageEventKey, pageJobCte } from './crawl-pages';
import { cacheRowColumns, cacheRowsUpsert, type CacheEntry } from './scrapes';

/** A fetched page of a batch write: its links, its document unless it is discovery-only, and its page cache row if the fetch left it to this write. */
export interface BatchedPage {
  key: string;
  links: FrontierEntry[];
  document?: { body: unknown; credits: number };
  cache?: CacheEntry;
}

/**
 * finishPage for several pages of one job in one statement (the fetch batch's page writer,
 * activities/src/crawl/page-writer.ts): per page exactly what finishPage does — links into the
 * frontier, the document stored once per (job, URL key), the URL done, and for each document this
 * call stored its charge (same keys), its `page` event (numbered in document order from one bump
 * of the job's event head) with its webhook delivery, and its search index row; and the page
 * cache rows the pages carry (cacheRowsUpsert, storeCacheEntry's upsert, saving each page a statement of its own).
 * Pages here have no model step and no change tracking (those go through finishPage). Returns the URL keys whose
 * document this call stored. Keys must be distinct. Commits asynchronously, as finishPage does
 * (see there): a lost commit leaves the URLs leased, so they are claimed and stored again.
 *
 * Per page the single statement costs Postgres a parse and plan of ~a dozen CTEs and the job's
 * event head row a lock round; here both are paid once per group. The statement's text never
 * changes (every variable part is an array parameter), so it is built once and runs as a named
 * prepared statement: each pooled connection parses it once, and the worker does not rebuild it.
 */
export async function finishPages(db: Db, jobId: string, pages: BatchedPage[], webhook?: EventWebhook | null): Promise<Set<string>> {
  if (!pages.length) return new Set();
  const keys = pages.map((p) => p.key);
  const charge = pages.map((p) => pageChargeKeys(jobId, p.key));
  const links = frontierColumns(pages.flatMap((p) => p.links));
  const search = searchBatchColumns(pages.flatMap((p) => (p.document ? [{ key: p.key, document: p.document.body }] : [])));
  const values: Record<string, unknown> = {
    job: jobId,
    keys,
    credits: pages.map((p) => p.document?.credits ?? 0),
    chargeKeys: charge.map((c) => c.plain),
    zdrChargeKeys: charge.map((c) => c.zdr),
    eventKeys: keys.map(pageEventKey),
    // One jsonb array, aligned with the keys (null for discovery-only pages): Postgres parses it once.
    docs: `[${pages.map((p) => (p.document ? JSON.stringify(storable(p.document.body)) : 'null')).join(',')}]`,
    hookKind: webhook?.jobKind ?? null,
    hookUrl: webhook?.url ?? null,
    hookOrigin: webhook ? new URL(webhook.url).origin : null,
    ...Object.fromEntries(Object.entries(links).map(([c, v]) => [`link_${c}`, v])),
    ...Object.fromEntries(Object.entries(search).map(([c, v]) => [`search_${c}`, v])),
  };
  const res = await finishPagesStatement(db, { ...values, ...cacheRowColumns(pages.flatMap((p) => (p.cache ? [p.cache] : []))) });
  return new Set(res.rows[0]?.stored ?? []);
}

/** The statement, every value a placeholder (finishPages names them). */
const finishPagesStatement = preparedStatement<{ stored: string[] }>(
  ($) => sql`
    WITH ${pageJobCte($('job'))}, links AS (
      ${frontierInsertOf($('job'), (c) => $(`link_${c}`))}
    ), page AS (
      SELECT p.*, b.document FROM unnest(${$('keys')}::text[], ${$('credits')}::int[], ${$('chargeKeys')}::text[], ${$('zdrChargeKeys')}::text[], ${$('eventKeys')}::text[])
        WITH ORDINALITY AS p(k, credits, charge_key, zdr_charge_key, event_key, ord)
      JOIN jsonb_array_elements(${$('docs')}::jsonb) WITH ORDINALITY AS b(document, ord) USING (ord)
    ), doc AS (
      INSERT INTO crawl_documents (job_id, url_key, document, credits)
      SELECT ${$('job')}::uuid, page.k, page.document, page.credits FROM page WHERE jsonb_typeof(page.document) <> 'null' ORDER BY page.ord
      ON CONFLICT DO NOTHING
      RETURNING url_key, seq, credits
    ), done AS (
      UPDATE crawl_urls u SET done_at = now(), lease_owner = NULL, lease_until = NULL,
        status = CASE WHEN EXISTS (SELECT 1 FROM crawl_llm_pages l WHERE l.job_id = ${$('job')}::uuid AND l.url_key = u.url_key) THEN 'llm' ELSE 'done' END
      WHERE u.job_id = ${$('job')}::uuid AND u.url_key = ANY(${$('keys')}::text[])
    ), stored AS (
      SELECT doc.url_key, doc.seq, doc.credits, page.charge_key, page.zdr_charge_key, page.event_key FROM doc JOIN page ON page.k = doc.url_key
    ), ${chargeCtes(sql`SELECT job.team_id, ${$('job')}::uuid, job.kind, stored.credits, CASE WHEN job.keeps_no_data THEN stored.zdr_charge_key ELSE stored.charge_key END FROM stored, job`)},
    ${eventRowsCtes({
      jobId: $('job'),
      type: sql`'page'`,
      rows: sql`SELECT stored.event_key AS key, jsonb_build_object('urlKey', stored.url_key, 'docSeq', stored.seq) AS payload, stored.seq AS ord FROM stored`,
      hook: { kind: sql`${$('hookKind')}::text`, url: sql`${$('hookUrl')}::text`, origin: sql`${$('hookOrigin')}::text` },
    })}${searchIndexBatchCte(sql`SELECT job.team_id, job.shareable FROM job WHERE NOT job.keeps_no_data`, (c) => $(`search_${c}`))}
    , cached AS (${cacheRowsUpsert($)})
    SELECT coalesce((SELECT array_agg(url_key) FROM doc), '{}') AS stored, set_config('synchronous_commit', 'off', true) AS async_commit`,
);
