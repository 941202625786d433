import { and, asc, eq, gt, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { crawlDocuments, crawlJobs, crawlLlmPages, crawlRobots, crawlUrls, type CrawlUrlStatus } from './schema/index';
import { storable, storableText } from './text';
import { eventCtes, type EventWebhook } from './events';
import { chargeCtes, boundedKey } from './ledger';
import { pickOnce } from './pick';
import { searchIndexCte } from './search-index';

/** Frontier, documents and counters of crawl and batch jobs. Every write is idempotent per (job, URL key). */

export interface NewCrawlJob {
  id: string;
  teamId: string;
  kind: 'crawl' | 'batch';
  url: string | null;
  options: unknown;
  pageLimit: number;
  zeroDataRetention: boolean;
  idempotencyKey?: string | null;
}

/**
 * Inserts a job and its seed URLs (a batch's list) in one transaction, so a job never exists
 * without its frontier. Its workflow is started after the commit; a job whose start never
 * happens is failed by the API (start refused) or by the workers' sweeper (API died first).
 */
export async function insertCrawlJob(db: Db, job: NewCrawlJob, seeds: FrontierEntry[] = []) {
  await db.transaction(async (tx) => {
    await tx.insert(crawlJobs).values(job);
    if (seeds.length) await tx.execute(frontierInsert(job.id, seeds));
  });
}

/**
 * Fails a job whose workflow is not running it: its start failed, the API died before starting
 * it, or the workflow ended without ending the job. Its idempotency key is released, so a retried
 * request starts a fresh job. False when the job had already ended.
 */
export async function failStrandedJob(db: Db, jobId: string, error: string): Promise<boolean> {
  const rows = await db
    .update(crawlJobs)
    .set({ status: 'failed', error, completedAt: new Date(), idempotencyKey: null })
    .where(and(eq(crawlJobs.id, jobId), eq(crawlJobs.status, 'scraping')))
    .returning({ id: crawlJobs.id });
  return rows.length > 0;
}

/** Running jobs created more than `minAgeMs` ago, oldest first (candidates for the stranded-job sweep). */
export async function runningJobsOlderThan(db: Db, minAgeMs: number, limit: number): Promise<{ id: string; kind: 'crawl' | 'batch' | 'extract' }[]> {
  return db
    .select({ id: crawlJobs.id, kind: crawlJobs.kind })
    .from(crawlJobs)
    .where(and(eq(crawlJobs.status, 'scraping'), sql`${crawlJobs.createdAt} < now() - make_interval(secs => ${minAgeMs / 1000})`))
    .orderBy(asc(crawlJobs.createdAt))
    .limit(limit);
}

export async function findJobByIdempotencyKey(db: Db, teamId: string, key: string) {
  const [row] = await db
    .select({ id: crawlJobs.id })
    .from(crawlJobs)
    .where(and(eq(crawlJobs.teamId, teamId), eq(crawlJobs.idempotencyKey, key)));
  return row?.id ?? null;
}

export async function loadCrawlJob(db: Db, id: string) {
  const [row] = await db.select().from(crawlJobs).where(eq(crawlJobs.id, id));
  return row ?? null;
}

export async function loadTeamCrawlJob(db: Db, teamId: string, id: string, kind: 'crawl' | 'batch') {
  const [row] = await db
    .select()
    .from(crawlJobs)
    .where(and(eq(crawlJobs.id, id), eq(crawlJobs.teamId, teamId), eq(crawlJobs.kind, kind)));
  return row ?? null;
}

export async function jobStatus(db: Db, id: string) {
  const [row] = await db.select({ status: crawlJobs.status }).from(crawlJobs).where(eq(crawlJobs.id, id));
  return row?.status ?? null;
}

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
function frontierInsert(jobId: string, entries: FrontierEntry[], returning = false) {
  const seen = new Set<string>();
  const unique = entries.filter((e) => (seen.has(e.key) ? false : (seen.add(e.key), true)));
  return sql`
    INSERT INTO crawl_urls (job_id, url_key, url, depth, external, discovery_only)
    SELECT ${jobId}, t.k, t.u, t.d, t.e, t.o
    FROM unnest(${sql.param(unique.map((e) => e.key))}::text[], ${sql.param(unique.map((e) => e.url))}::text[],
                ${sql.param(unique.map((e) => e.depth))}::int[], ${sql.param(unique.map((e) => e.external))}::bool[],
                ${sql.param(unique.map((e) => !!e.discoveryOnly))}::bool[]) AS t(k, u, d, e, o)
    ON CONFLICT DO NOTHING${returning ? sql` RETURNING 1` : sql``}`;
}

export interface ClaimedUrl {
  url: string;
  key: string;
  depth: number;
  external: boolean;
  discoveryOnly: boolean;
  pageId: string;
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
  type Row = { url: string; url_key: string; depth: number; external: boolean; discovery_only: boolean; page_id: string; seq: string };
  // RETURNING follows the physical order: frontier order (seq) is restored here.
  const bySeq = (a: Row, b: Row) => Number(a.seq) - Number(b.seq);
  return db.transaction(async (tx) => {
    await tx.execute(sql`SET LOCAL synchronous_commit = off`);
    const [job] = (await tx.execute<{ room: number }>(sql`SELECT page_limit - enqueued AS room FROM crawl_jobs WHERE id = ${jobId} FOR NO KEY UPDATE`)).rows;
    if (!job) return [];
    const mine = opts.retakeOwn ? sql`lease_owner = ${owner} OR ` : sql``;
    /** Leases the picked URLs to `owner`, in frontier order. */
    const lease = async (pick: SQL) =>
      (
        await tx.execute<Row>(sql`
          UPDATE crawl_urls c SET status = 'leased', lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = c.attempts + 1
          WHERE c.job_id = ${jobId} AND c.url_key = ANY(${pickOnce(pick)})
          RETURNING c.url, c.url_key, c.depth, c.external, c.discovery_only, c.page_id, c.seq`)
      ).rows.sort(bySeq);
    const rows = await lease(sql`
      SELECT url_key FROM crawl_urls
      WHERE job_id = ${jobId} AND status = 'leased' AND (${mine}lease_until < now())
      ORDER BY (lease_owner = ${owner}) DESC, seq LIMIT ${n} FOR UPDATE SKIP LOCKED`);
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
    return rows.map((r) => ({ url: r.url, key: r.url_key, depth: r.depth, external: r.external, discoveryOnly: r.discovery_only, pageId: r.page_id }));
  });
}

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
  };
}

/**
 * Ends a scraped page in one statement, so it is atomic without a transaction and costs one
 * round trip: its links enter the frontier (idempotent per key), its document is stored once,
 * the URL is marked done, and — only if this call stored the document — the page's credits are
 * charged to the ledger (key page:<job>:<url key>), a `page` event is appended (payload: url key
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
/**
 * What storing a page's document sets off, after a `doc` CTE (the inserted crawl_documents row:
 * seq, credits) and a `job` CTE (team_id, kind, keeps_no_data): its charge, its `page` event
 * (and webhook) and its search index row. One definition for every statement that stores a
 * page — the fetch's (`finishPage`) and the model step's (`finishLlmPage`) — so a page is billed,
 * announced and indexed the same way whichever step finished it.
 */
export function pageStoredCtes(jobId: string, key: string, webhook: EventWebhook | null | undefined, body: unknown): SQL {
  return sql`${chargeCtes(sql`SELECT job.team_id, ${jobId}::uuid, job.kind, doc.credits, ${boundedKey('page', jobId, key)}::text FROM doc, job`)},
    ${eventCtes({
      jobId,
      type: 'page',
      key: boundedKey('page', key),
      payload: sql`jsonb_build_object('urlKey', ${key}::text, 'docSeq', doc.seq)`,
      src: sql`doc`,
      webhook,
    })}${searchIndexCte(sql`SELECT job.team_id FROM doc, job WHERE NOT job.keeps_no_data`, body)}`;
}

/** A job whose pages must not outlive it (zero data retention, lockdown scrape options): never indexed for search. */
export const KEEPS_NO_DATA = sql.raw(`(zero_data_retention OR coalesce((options #>> '{scrapeOptions,zeroDataRetention}')::boolean, false)
  OR coalesce((options ->> 'zeroDataRetention')::boolean, false) OR coalesce((options #>> '{scrapeOptions,lockdown}')::boolean, false)
  OR coalesce((options ->> 'lockdown')::boolean, false))`);

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
    WITH job AS (
      SELECT team_id, kind, ${KEEPS_NO_DATA} AS keeps_no_data FROM crawl_jobs WHERE id = ${jobId}
    ), links AS (
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
        AND EXISTS (SELECT 1 FROM crawl_jobs WHERE id = ${jobId} AND status = 'scraping')
      ON CONFLICT DO NOTHING
      RETURNING 1
    ), done AS (
      UPDATE crawl_urls SET done_at = now(), lease_owner = NULL, lease_until = NULL,
        status = CASE WHEN EXISTS (SELECT 1 FROM draft) OR EXISTS (SELECT 1 FROM crawl_llm_pages WHERE job_id = ${jobId} AND url_key = ${key}) THEN 'llm' ELSE 'done' END
      WHERE job_id = ${jobId} AND url_key = ${key}
    ), ${pageStoredCtes(jobId, key, d?.webhook, pending ? undefined : d?.body)}
    SELECT (SELECT count(*) FROM doc)::int + (SELECT count(*) FROM draft)::int AS stored,${countLinks ? sql` (SELECT count(*) FROM links)::int AS links_added,` : sql``}
      set_config('synchronous_commit', 'off', true) AS async_commit`);
  return { stored: (res.rows[0]?.stored ?? 0) > 0, linksAdded: res.rows[0]?.links_added ?? 0 };
}

/** A URL not yet fetched or rendered: what a page failure or a cancelled job may still end. */
const UNFINISHED: CrawlUrlStatus[] = ['queued', 'leased', 'browser', 'rendering'];

/** A page that could not be scraped (or was refused by robots.txt). */
export async function failPage(db: Db, jobId: string, key: string, status: 'failed' | 'robots', error: string | null): Promise<void> {
  await db
    .update(crawlUrls)
    .set({ status, error: error === null ? null : storableText(error), doneAt: new Date(), leaseOwner: null, leaseUntil: null })
    .where(and(eq(crawlUrls.jobId, jobId), eq(crawlUrls.urlKey, key), inArray(crawlUrls.status, UNFINISHED)));
}

/** Counters of a running job, counted from its frontier and documents. */
export async function liveCounters(db: Db, jobId: string): Promise<{ total: number; completed: number; failed: number; creditsUsed: number }> {
  const res = await db.execute<{ total: number; completed: number; failed: number; credits: number }>(sql`
    SELECT
      (SELECT least(count(*), (SELECT page_limit FROM crawl_jobs WHERE id = ${jobId}))::int
         FROM crawl_urls WHERE job_id = ${jobId} AND NOT discovery_only AND status NOT IN ('robots', 'cancelled')) AS total,
      (SELECT count(*)::int FROM crawl_urls WHERE job_id = ${jobId} AND status = 'failed') AS failed,
      d.completed, d.credits
    FROM (SELECT count(*)::int AS completed, coalesce(sum(credits), 0)::int AS credits FROM crawl_documents WHERE job_id = ${jobId}) d`);
  const r = res.rows[0]!;
  return { total: Math.max(r.total, r.completed), completed: r.completed, failed: r.failed, creditsUsed: r.credits };
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

/** Ends a job unless it already ended (a cancel written by the API wins over a late completion). */
export async function finishJob(db: Db, jobId: string, status: 'completed' | 'failed' | 'cancelled', error?: string): Promise<{ status: string; changed: boolean }> {
  const c = await liveCounters(db, jobId);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(crawlJobs)
      .set({ status, error: error ?? null, completedAt: new Date(), completed: c.completed, failed: c.failed, creditsUsed: c.creditsUsed })
      .where(and(eq(crawlJobs.id, jobId), eq(crawlJobs.status, 'scraping')))
      .returning({ status: crawlJobs.status });
    const final = row?.status ?? (await tx.select({ s: crawlJobs.status }).from(crawlJobs).where(eq(crawlJobs.id, jobId)))[0]?.s ?? status;
    if (final === 'cancelled') {
      await tx
        .update(crawlUrls)
        .set({ status: 'cancelled', leaseOwner: null, leaseUntil: null })
        .where(and(eq(crawlUrls.jobId, jobId), inArray(crawlUrls.status, [...UNFINISHED, 'llm'])));
    }
    // Pages still waiting for their model step are never shown once the job has ended (a
    // completed job has none: its workflow waits for them).
    if (final !== 'scraping') await tx.delete(crawlLlmPages).where(eq(crawlLlmPages.jobId, jobId));
    // A job the API cancelled: its final counters are written now, once the work has stopped.
    if (!row) await tx.update(crawlJobs).set({ completedAt: sql`coalesce(${crawlJobs.completedAt}, now())`, completed: c.completed, failed: c.failed, creditsUsed: c.creditsUsed }).where(eq(crawlJobs.id, jobId));
    return { status: final, changed: !!row };
  });
}

/** Marks a job cancelled (the API does this before cancelling the workflow). False when it had already ended. */
export async function markJobCancelled(db: Db, jobId: string): Promise<boolean> {
  const rows = await db
    .update(crawlJobs)
    .set({ status: 'cancelled' })
    .where(and(eq(crawlJobs.id, jobId), eq(crawlJobs.status, 'scraping')))
    .returning({ id: crawlJobs.id });
  return rows.length > 0;
}

/** Documents in completion order from `skip`, stopping before `maxBytes` of JSON (at least one). */
export async function pageOfDocuments(db: Db, jobId: string, skip: number, maxBytes: number): Promise<{ docs: unknown[]; more: boolean }> {
  const docs: unknown[] = [];
  let bytes = 0;
  let afterSeq: number | null = null;
  let offset = skip;
  for (;;) {
    const rows: { seq: number; document: unknown }[] = await db
      .select({ seq: crawlDocuments.seq, document: crawlDocuments.document })
      .from(crawlDocuments)
      .where(afterSeq === null ? eq(crawlDocuments.jobId, jobId) : and(eq(crawlDocuments.jobId, jobId), gt(crawlDocuments.seq, afterSeq)))
      .orderBy(asc(crawlDocuments.seq))
      .offset(afterSeq === null ? offset : 0)
      .limit(200);
    if (!rows.length) return { docs, more: false };
    for (const r of rows) {
      const size = JSON.stringify(r.document).length;
      if (docs.length && bytes + size > maxBytes) return { docs, more: true };
      docs.push(r.document);
      bytes += size;
    }
    afterSeq = rows[rows.length - 1]!.seq;
    offset = 0;
  }
}

/**
 * Sequence numbers (no bodies) of a job's documents after `afterSeq`, with their age: the
 * WebSocket stream's bookkeeping (see DocumentCursor in the API).
 */
export async function documentSeqsAfter(db: Db, jobId: string, afterSeq: number, limit: number): Promise<{ seq: number; ageMs: number }[]> {
  const res = await db.execute<{ seq: string; age_ms: number }>(sql`
    SELECT seq, (EXTRACT(EPOCH FROM now() - created_at) * 1000)::int AS age_ms
    FROM crawl_documents WHERE job_id = ${jobId} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`);
  return res.rows.map((r) => ({ seq: Number(r.seq), ageMs: r.age_ms }));
}

/** The document stored for a URL key (a page event's webhook body), or null. */
export async function documentByKey(db: Db, jobId: string, urlKey: string): Promise<unknown | null> {
  const [row] = await db
    .select({ document: crawlDocuments.document })
    .from(crawlDocuments)
    .where(and(eq(crawlDocuments.jobId, jobId), eq(crawlDocuments.urlKey, urlKey)));
  return row?.document ?? null;
}

/** A job's documents with these sequence numbers, in sequence order. */
export async function documentsBySeq(db: Db, jobId: string, seqs: number[]): Promise<{ seq: number; document: unknown }[]> {
  if (!seqs.length) return [];
  return db
    .select({ seq: crawlDocuments.seq, document: crawlDocuments.document })
    .from(crawlDocuments)
    .where(and(eq(crawlDocuments.jobId, jobId), inArray(crawlDocuments.seq, seqs)))
    .orderBy(asc(crawlDocuments.seq));
}

export async function jobErrors(db: Db, jobId: string) {
  const rows = await db
    .select({ id: crawlUrls.pageId, url: crawlUrls.url, error: crawlUrls.error, status: crawlUrls.status, doneAt: crawlUrls.doneAt })
    .from(crawlUrls)
    .where(and(eq(crawlUrls.jobId, jobId), inArray(crawlUrls.status, ['failed', 'robots'])))
    .orderBy(asc(crawlUrls.seq));
  return {
    errors: rows.filter((r) => r.status === 'failed').map((r) => ({ id: r.id, url: r.url, error: r.error ?? 'Unknown error', timestamp: r.doneAt?.toISOString() ?? null })),
    robotsBlocked: rows.filter((r) => r.status === 'robots').map((r) => r.url),
  };
}

export async function activeCrawls(db: Db, teamId: string) {
  return db
    .select({ id: crawlJobs.id, teamId: crawlJobs.teamId, url: crawlJobs.url, options: crawlJobs.options })
    .from(crawlJobs)
    .where(and(eq(crawlJobs.teamId, teamId), eq(crawlJobs.kind, 'crawl'), eq(crawlJobs.status, 'scraping')))
    .orderBy(asc(crawlJobs.createdAt));
}

export async function loadRobots(db: Db, jobId: string, origin: string): Promise<{ body: string | null } | null> {
  const [row] = await db.select({ body: crawlRobots.body }).from(crawlRobots).where(and(eq(crawlRobots.jobId, jobId), eq(crawlRobots.origin, origin)));
  return row ?? null;
}

export async function storeRobots(db: Db, jobId: string, origin: string, body: string | null) {
  await db.insert(crawlRobots).values({ jobId, origin, body: body === null ? null : storableText(body) }).onConflictDoNothing();
}
