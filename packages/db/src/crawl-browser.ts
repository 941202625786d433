import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import type { ClaimedUrl } from './frontier';
import { pickOnce } from './pick';

/**
 * Crawl and batch pages the browser engine renders. A fetch batch's page handler hands a page
 * over when the scrape options need the browser or its fetched HTML looks script-rendered
 * (`handToBrowser`: leased → browser); a browser page activity on wds-browser then claims it
 * (`claimBrowserPages`: browser → rendering, with a lease) and ends it like any page, with
 * finishPage or failPage (rendering → done | llm | failed). Two statuses instead of one, so the
 * claim reads index-ordered rows in both cases: the waiting pages (`browser`, by seq) and the
 * few leased ones (`rendering`, where a retried activity finds its own and a dead one's expire).
 * Writes stay idempotent per (job, URL key): a page rendered twice is stored once.
 */

/**
 * Hands a page leased to a fetch batch over to the browser engine. False when it was not
 * leased any more (the job ended, or another batch ended it after this lease ran out).
 */
export async function handToBrowser(db: Db, jobId: string, key: string): Promise<boolean> {
  const r = await db.execute(sql`
    UPDATE crawl_urls SET status = 'browser', lease_owner = NULL, lease_until = NULL
    WHERE job_id = ${jobId} AND url_key = ${key} AND status = 'leased'`);
  return (r.rowCount ?? 0) > 0;
}

type Row = { url: string; url_key: string; depth: number; external: boolean; discovery_only: boolean; page_id: string; hidden: boolean; attempts: number; seq: string };

/**
 * Leases up to `n` browser pages to `owner` (an activity id, stable across its retries): first
 * (with `retakeOwn`, an attempt's first claim) the renders its earlier attempts held and renders
 * whose lease ended (their activity died for good), then waiting pages in frontier order. SKIP
 * LOCKED: concurrent claims never wait for each other. No page-limit accounting: a page was
 * counted when a fetch batch first claimed it.
 */
export async function claimBrowserPages(db: Db, jobId: string, owner: string, n: number, leaseMs: number, opts: { retakeOwn: boolean }): Promise<ClaimedUrl[]> {
  const mine = opts.retakeOwn ? sql`lease_owner = ${owner} OR ` : sql``;
  const lease = async (pick: SQL, limit: number) =>
    (
      await db.execute<Row>(sql`
        UPDATE crawl_urls c SET status = 'rendering', lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = c.attempts + 1
        WHERE c.job_id = ${jobId} AND c.url_key = ANY(${pickOnce(sql`${pick} LIMIT ${limit} FOR UPDATE SKIP LOCKED`)})
        RETURNING c.url, c.url_key, c.depth, c.external, c.discovery_only, c.page_id, c.hidden, c.attempts, c.seq`)
    ).rows;
  const rows = await lease(
    sql`SELECT url_key FROM crawl_urls WHERE job_id = ${jobId} AND status = 'rendering' AND (${mine}lease_until < now())
        ORDER BY (lease_owner = ${owner}) DESC, seq`,
    n,
  );
  if (rows.length < n) rows.push(...(await lease(sql`SELECT url_key FROM crawl_urls WHERE job_id = ${jobId} AND status = 'browser' ORDER BY seq`, n - rows.length)));
  // RETURNING follows the physical order: frontier order (seq) is restored here.
  return rows
    .sort((a, b) => Number(a.seq) - Number(b.seq))
    .map((r) => ({ url: r.url, key: r.url_key, depth: r.depth, external: r.external, discoveryOnly: r.discovery_only, pageId: r.page_id, hidden: r.hidden, attempts: r.attempts }));
}

/** Whether pages of the job wait for a browser page activity (one finishing render then starts the next). */
export async function browserPagesWaiting(db: Db, jobId: string): Promise<boolean> {
  const r = await db.execute<{ waiting: boolean }>(sql`SELECT EXISTS (SELECT 1 FROM crawl_urls WHERE job_id = ${jobId} AND status = 'browser') AS waiting`);
  return !!r.rows[0]?.waiting;
}

/**
 * Script-rendered pages of one origin a job must see — and no static HTML page — before it sends
 * that origin's further pages straight to the browser engine. Few, so that a JavaScript site
 * stops paying an HTTP fetch per page early; more than one, so that one app shell on a static
 * site (a search page, a dashboard) does not switch the whole site.
 */
export const ORIGIN_RENDERED_PAGES = 5;

/** What a job has learned about how an origin's pages render (crawl_origin_engines). */
export type OriginEngine = {
  rendered: number;
  static: boolean;
};

/** Whether an origin's pages go to the browser without an HTTP fetch first. */
export const browserFirst = (o: OriginEngine) => !o.static && o.rendered >= ORIGIN_RENDERED_PAGES;

export async function loadOriginEngine(db: Db, jobId: string, origin: string): Promise<OriginEngine> {
  const r = await db.execute<OriginEngine>(sql`SELECT rendered, static FROM crawl_origin_engines WHERE job_id = ${jobId} AND origin = ${origin}`);
  return r.rows[0] ?? { rendered: 0, static: false };
}

/**
 * Counts a page of the origin the HTTP engine found script-rendered (a static origin stays as it
 * is). Returns what the job now knows, other workers' pages included. A retried page may count
 * twice: the count only decides how soon the origin switches.
 */
export async function noteRenderedPage(db: Db, jobId: string, origin: string): Promise<OriginEngine> {
  const r = await db.execute<OriginEngine>(sql`
    INSERT INTO crawl_origin_engines (job_id, origin, rendered) VALUES (${jobId}, ${origin}, 1)
    ON CONFLICT (job_id, origin) DO UPDATE SET rendered = crawl_origin_engines.rendered + (CASE WHEN crawl_origin_engines.static THEN 0 ELSE 1 END)
    RETURNING rendered, static`);
  return r.rows[0]!;
}

/** Marks the origin as serving static HTML: it stays HTTP-first for the rest of the job. */
export async function noteStaticPage(db: Db, jobId: string, origin: string): Promise<OriginEngine> {
  const r = await db.execute<OriginEngine>(sql`
    INSERT INTO crawl_origin_engines (job_id, origin, static) VALUES (${jobId}, ${origin}, true)
    ON CONFLICT (job_id, origin) DO UPDATE SET static = true
    RETURNING rendered, static`);
  return r.rows[0]!;
}
