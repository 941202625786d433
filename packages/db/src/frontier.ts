import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { crawlJobs, crawlRobots, crawlUrls, type CrawlUrlStatus } from './schema/index';
import { storableText } from './text';
import { pickOnce } from './pick';

/**
 * The frontier of crawl, batch and extract jobs: URLs added idempotently per (job, URL key),
 * leased to activities (claims with leases taken over when they expire), failed, counted; and
 * the robots.txt each job fetched once per origin.
 */

export interface FrontierEntry {
  url: string;
  key: string;
  depth: number;
  external: boolean;
  discoveryOnly?: boolean;
}

/**
 * Adds URLs to the frontier (idempotent per URL key): seeds and batch lists; a crawled page's
 * links go in with finishPage. No lock and no limit here, so adding never serialises on the job
 * row; the page limit is enforced when URLs are first claimed (claimUrls).
 */
export async function enqueueUrls(db: Db, jobId: string, entries: FrontierEntry[]): Promise<number> {
  if (!entries.length) return 0;
  const inserted = await db.execute(frontierInsert(jobId, entries));
  return inserted.rowCount ?? 0;
}

/**
 * The INSERT adding entries to a job's frontier, idempotent per URL key (also a CTE of finishPage,
 * where `returning` lets the statement count the URLs that were new).
 */
export function frontierInsert(jobId: string, entries: FrontierEntry[], returning = false) {
  const c = frontierColumns(entries);
  return frontierInsertOf(sql`${jobId}`, (k) => sql`${sql.param(c[k])}`, returning);
}

/** The columns frontierInsertOf reads, one array each, keys made distinct (one statement cannot insert a key twice). */
export function frontierColumns(entries: FrontierEntry[]) {
  const seen = new Set<string>();
  const unique = entries.filter((e) => (seen.has(e.key) ? false : (seen.add(e.key), true)));
  return { key: unique.map((e) => e.key), url: unique.map((e) => e.url), depth: unique.map((e) => e.depth), external: unique.map((e) => e.external), discoveryOnly: unique.map((e) => !!e.discoveryOnly) };
}

/** frontierInsert with each column given as an SQL array parameter (values, or placeholders of a prepared statement). */
export function frontierInsertOf(jobId: SQL, col: (c: keyof ReturnType<typeof frontierColumns>) => SQL, returning = false) {
  return sql`
    INSERT INTO crawl_urls (job_id, url_key, url, depth, external, discovery_only)
    SELECT ${jobId}::uuid, t.k, t.u, t.d, t.e, t.o
    FROM unnest(${col('key')}::text[], ${col('url')}::text[], ${col('depth')}::int[], ${col('external')}::bool[], ${col('discoveryOnly')}::bool[]) AS t(k, u, d, e, o)
    ON CONFLICT DO NOTHING${returning ? sql` RETURNING 1` : sql``}`;
}

/**
 * Change tracking in a crawl: URLs known from earlier crawls of the site that this crawl has not
 * reached through links, added once its linked frontier is exhausted, marked `hidden` (a URL
 * already in the frontier keeps its row: it was linked). Returns how many were added.
 */
export async function enqueueRememberedUrls(db: Db, jobId: string, entries: { url: string; key: string }[]): Promise<number> {
  if (!entries.length) return 0;
  const res = await db.execute(sql`
    INSERT INTO crawl_urls (job_id, url_key, url, depth, external, hidden)
    SELECT ${jobId}, t.k, t.u, 1, false, true FROM unnest(${sql.param(entries.map((e) => e.key))}::text[], ${sql.param(entries.map((e) => e.url))}::text[]) AS t(k, u)
    ON CONFLICT DO NOTHING`);
  return res.rowCount ?? 0;
}

export interface ClaimedUrl {
  url: string;
  key: string;
  depth: number;
  external: boolean;
  discoveryOnly: boolean;
  pageId: string;
  /** Reached only from memory of earlier crawls (change tracking's visibility `hidden`). */
  hidden: boolean;
  /** Claims of this URL so far, this one included (retries after a dead worker, backoffs). */
  attempts: number;
}

/**
 * Leases up to `n` URLs to `owner` (an activity id, stable across its retries). The first claim
 * of an attempt (`retakeOwn`) takes back the leases its earlier attempts held, so work held by a
 * killed worker resumes at once; later claims must not, as those URLs are in flight right now.
 * Leases of owners that never come back are taken over when they expire. Only a URL's first
 * claim consumes the job's page limit (`enqueued` counts them).
 *
 * Lock order: the job row first, then URL rows (taken with SKIP LOCKED, so never waited for).
 * The job row is locked FOR NO KEY UPDATE, which does not conflict with the KEY SHARE locks that
 * inserts of documents and URLs take through their foreign keys, so storing pages never waits
 * for a claim and the two can never deadlock.
 */
export async function claimUrls(db: Db, jobId: string, owner: string, n: number, leaseMs: number, opts: { retakeOwn: boolean }): Promise<ClaimedUrl[]> {
  type Row = { url: string; url_key: string; depth: number; external: boolean; discovery_only: boolean; page_id: string; hidden: boolean; attempts: number; seq: string };
  // RETURNING follows the physical order: frontier order (seq) is restored here.
  const bySeq = (a: Row, b: Row) => Number(a.seq) - Number(b.seq);
  return db.transaction(async (tx) => {
    await tx.execute(sql`SET LOCAL synchronous_commit = off`);
    const [job] = (await tx.execute<{ room: number }>(sql`SELECT page_limit - enqueued AS room FROM crawl_jobs WHERE id = ${jobId} FOR NO KEY UPDATE`)).rows;
    if (!job) return [];
    /** Leases the picked URLs to `owner`, in frontier order. */
    const lease = async (pick: SQL) =>
      (
        await tx.execute<Row>(sql`
          UPDATE crawl_urls c SET status = 'leased', lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = c.attempts + 1
          WHERE c.job_id = ${jobId} AND c.url_key = ANY(${pickOnce(pick)})
          RETURNING c.url, c.url_key, c.depth, c.external, c.discovery_only, c.page_id, c.hidden, c.attempts, c.seq`)
      ).rows.sort(bySeq);
    // A retried attempt takes back every URL its earlier attempts still lease, however many (their
    // slots and buffer could hold more than one claim's worth): left leased, they would wait for
    // their lease to end. Then leases that ended, up to n in all.
    const rows = opts.retakeOwn
      ? await lease(sql`SELECT url_key FROM crawl_urls WHERE job_id = ${jobId} AND status = 'leased' AND lease_owner = ${owner} ORDER BY seq FOR UPDATE SKIP LOCKED`)
      : [];
    if (rows.length < n) {
      rows.push(
        ...(await lease(sql`
          SELECT url_key FROM crawl_urls
          WHERE job_id = ${jobId} AND status = 'leased' AND lease_until < now()
          ORDER BY seq LIMIT ${n - rows.length} FOR UPDATE SKIP LOCKED`)),
      );
    }
    const take = Math.min(n - rows.length, Math.max(0, job.room));
    if (take > 0) {
      const fresh = await lease(sql`
        SELECT url_key FROM crawl_urls WHERE job_id = ${jobId} AND status = 'queued'
        ORDER BY seq LIMIT ${take} FOR UPDATE SKIP LOCKED`);
      if (fresh.length) {
        await tx.update(crawlJobs).set({ enqueued: sql`${crawlJobs.enqueued} + ${fresh.length}` }).where(eq(crawlJobs.id, jobId));
        rows.push(...fresh);
      }
    }
    return rows.map((r) => ({ url: r.url, key: r.url_key, depth: r.depth, external: r.external, discoveryOnly: r.discovery_only, pageId: r.page_id, hidden: r.hidden, attempts: r.attempts }));
  });
}

/**
 * Whether another batch of the job is fetching pages right now (URLs leased to an owner other
 * than `owner`, lease not ended) while the job still has room: such pages may add links, so a
 * batch that found nothing to claim can wait for them instead of ending (see the batch runner).
 */
export async function othersFetching(db: Db, jobId: string, owner: string): Promise<boolean> {
  const res = await db.execute<{ busy: boolean }>(sql`
    SELECT EXISTS (
      SELECT 1 FROM crawl_urls WHERE job_id = ${jobId} AND status = 'leased' AND lease_until > now() AND lease_owner IS DISTINCT FROM ${owner} AND lease_owner IS DISTINCT FROM ${BACKOFF_OWNER}
    ) AND coalesce((SELECT page_limit - enqueued FROM crawl_jobs WHERE id = ${jobId}), 0) > 0 AS busy`);
  return res.rows[0]?.busy === true;
}

/**
 * The lease owner of pages whose site is backing off (429/503): nobody holds them, and when the
 * lease ends any batch takes them again (claimUrls and claimBrowserPages take ended leases).
 */
export const BACKOFF_OWNER = 'backoff';

/**
 * A leased page (or browser page) whose site asked to slow down: given back until `retryInMs`
 * from now, with why (shown by GET …/errors while it waits); it keeps its status, so the job's
 * counts and the workflow's wait (the next lease's end) see it as leased.
 */
export async function deferPage(db: Db, jobId: string, key: string, retryInMs: number, reason: string): Promise<void> {
  await db.execute(sql`
    UPDATE crawl_urls SET lease_owner = ${BACKOFF_OWNER}, lease_until = now() + make_interval(secs => ${Math.max(0, retryInMs) / 1000}), error = ${storableText(reason)}
    WHERE job_id = ${jobId} AND url_key = ${key} AND status IN ('leased', 'rendering')`);
}

/** A URL not yet fetched or rendered: what a page failure or a cancelled job may still end. */
export const UNFINISHED_URL: CrawlUrlStatus[] = ['queued', 'leased', 'browser', 'rendering'];

/** A page that could not be scraped (or was refused by robots.txt). */
export async function failPage(db: Db, jobId: string, key: string, status: 'failed' | 'robots', error: string | null): Promise<void> {
  await db
    .update(crawlUrls)
    .set({ status, error: error === null ? null : storableText(error), doneAt: new Date(), leaseOwner: null, leaseUntil: null })
    .where(and(eq(crawlUrls.jobId, jobId), eq(crawlUrls.urlKey, key), inArray(crawlUrls.status, UNFINISHED_URL)));
}

/** Pages handed to the browser engine and not ended yet (crawl-browser.ts). */
export interface BrowserBacklog {
  /** Waiting for a browser page activity, or rendering. */
  pending: number;
  /** Of them, claimable now (waiting, or their render's lease ended). */
  ready: number;
  /** Ms until the next render lease ends, when none is ready. */
  nextReadyMs: number | null;
}

export interface FrontierCounts {
  queued: number;
  leased: number;
  nextLeaseExpiryMs: number | null;
  /** Only when the job has browser pages left. */
  browser?: BrowserBacklog;
}

/** What is left to do: queued URLs while the page limit has room, leased ones, and pages with the browser engine. */
export async function frontierCounts(db: Db, jobId: string): Promise<FrontierCounts> {
  const res = await db.execute<{ queued: number; leased: number; next_ms: number | null; room: number; browser: number; browser_ready: number; render_next_ms: number | null }>(sql`
    SELECT count(*) FILTER (WHERE status = 'queued')::int AS queued,
           count(*) FILTER (WHERE status = 'leased')::int AS leased,
           (EXTRACT(EPOCH FROM min(lease_until) FILTER (WHERE status = 'leased') - now()) * 1000)::int AS next_ms,
           count(*) FILTER (WHERE status IN ('browser', 'rendering'))::int AS browser,
           count(*) FILTER (WHERE status = 'browser' OR (status = 'rendering' AND lease_until < now()))::int AS browser_ready,
           greatest(0, EXTRACT(EPOCH FROM min(lease_until) FILTER (WHERE status = 'rendering') - now()) * 1000)::int AS render_next_ms,
           (SELECT page_limit - enqueued FROM crawl_jobs WHERE id = ${jobId}) AS room
    FROM crawl_urls WHERE job_id = ${jobId} AND status IN ('queued', 'leased', 'browser', 'rendering')`);
  const r = res.rows[0]!;
  const counts: FrontierCounts = { queued: r.room > 0 ? r.queued : 0, leased: r.leased, nextLeaseExpiryMs: r.next_ms };
  if (r.browser > 0) counts.browser = { pending: r.browser, ready: r.browser_ready, nextReadyMs: r.browser_ready > 0 ? 0 : r.render_next_ms };
  return counts;
}

export async function loadRobots(db: Db, jobId: string, origin: string): Promise<{ body: string | null } | null> {
  const [row] = await db.select({ body: crawlRobots.body }).from(crawlRobots).where(and(eq(crawlRobots.jobId, jobId), eq(crawlRobots.origin, origin)));
  return row ?? null;
}

export async function storeRobots(db: Db, jobId: string, origin: string, body: string | null) {
  await db.insert(crawlRobots).values({ jobId, origin, body: body === null ? null : storableText(body) }).onConflictDoNothing();
}
