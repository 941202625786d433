import { and, asc, eq, gt, inArray, sql } from 'drizzle-orm';
import type { Db } from './client';
import { crawlDocuments, crawlJobs, crawlRobots, crawlUrls, webhookOutbox } from './schema/index';
import type { WebhookEventRow } from './webhooks';

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

export async function insertCrawlJob(db: Db, job: NewCrawlJob) {
  await db.insert(crawlJobs).values(job);
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
 * Adds URLs to the frontier, at most up to the job's page limit. The job row is locked first,
 * so concurrent enqueuers are serialised and the limit can never be exceeded; the inserts run
 * as separate statements after the lock so they see every URL committed before it.
 */
export async function enqueueUrls(db: Db, jobId: string, entries: FrontierEntry[]): Promise<number> {
  if (!entries.length) return 0;
  return db.transaction(async (tx) => {
    const [job] = await tx.execute<{ room: number }>(sql`SELECT page_limit - enqueued AS room FROM crawl_jobs WHERE id = ${jobId} AND status = 'scraping' FOR UPDATE`).then((r) => r.rows);
    if (!job || job.room <= 0) return 0;
    const seen = new Set<string>();
    const unique = entries.filter((e) => (seen.has(e.key) ? false : (seen.add(e.key), true)));
    const inserted = await tx.execute(sql`
      INSERT INTO crawl_urls (job_id, url_key, url, depth, external, discovery_only)
      SELECT ${jobId}, t.k, t.u, t.d, t.e, t.o
      FROM unnest(${sql.param(unique.map((e) => e.key))}::text[], ${sql.param(unique.map((e) => e.url))}::text[],
                  ${sql.param(unique.map((e) => e.depth))}::int[], ${sql.param(unique.map((e) => e.external))}::bool[],
                  ${sql.param(unique.map((e) => !!e.discoveryOnly))}::bool[]) WITH ORDINALITY AS t(k, u, d, e, o, ord)
      WHERE NOT EXISTS (SELECT 1 FROM crawl_urls c WHERE c.job_id = ${jobId} AND c.url_key = t.k)
      ORDER BY t.ord
      LIMIT ${job.room}
      ON CONFLICT DO NOTHING`);
    const n = inserted.rowCount ?? 0;
    if (n) await tx.update(crawlJobs).set({ enqueued: sql`${crawlJobs.enqueued} + ${n}` }).where(eq(crawlJobs.id, jobId));
    return n;
  });
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
 * Leases up to `n` URLs to `owner` (an activity id, stable across its retries). A retried
 * attempt first takes back its own leases, so work held by a killed worker resumes at once;
 * leases of owners that never come back are taken over when they expire.
 */
export async function claimUrls(db: Db, jobId: string, owner: string, n: number, leaseMs: number): Promise<ClaimedUrl[]> {
  const res = await db.execute<{ url: string; url_key: string; depth: number; external: boolean; discovery_only: boolean; page_id: string }>(sql`
    UPDATE crawl_urls c SET status = 'leased', lease_owner = ${owner},
      lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = c.attempts + 1
    FROM (
      SELECT url_key FROM crawl_urls
      WHERE job_id = ${jobId} AND (status = 'queued' OR (status = 'leased' AND (lease_owner = ${owner} OR lease_until < now())))
      ORDER BY (lease_owner IS NOT DISTINCT FROM ${owner}) DESC, seq
      LIMIT ${n}
      FOR UPDATE SKIP LOCKED
    ) pick
    WHERE c.job_id = ${jobId} AND c.url_key = pick.url_key
    RETURNING c.url, c.url_key, c.depth, c.external, c.discovery_only, c.page_id`);
  return res.rows.map((r) => ({ url: r.url, key: r.url_key, depth: r.depth, external: r.external, discoveryOnly: r.discovery_only, pageId: r.page_id }));
}

/**
 * Stores a page's document once; counters move and the page's webhook event is queued only
 * when this call stored it, all in one transaction (a worker dying halfway leaves no half).
 */
export async function completePage(db: Db, jobId: string, key: string, document: unknown, credits: number, event?: WebhookEventRow): Promise<boolean> {
  return db.transaction(async (tx) => {
    const ins = await tx.insert(crawlDocuments).values({ jobId, urlKey: key, document }).onConflictDoNothing().returning({ seq: crawlDocuments.seq });
    await tx
      .update(crawlUrls)
      .set({ status: 'done', doneAt: new Date(), leaseOwner: null, leaseUntil: null })
      .where(and(eq(crawlUrls.jobId, jobId), eq(crawlUrls.urlKey, key)));
    if (!ins.length) return false;
    await tx
      .update(crawlJobs)
      .set({ completed: sql`${crawlJobs.completed} + 1`, creditsUsed: sql`${crawlJobs.creditsUsed} + ${credits}` })
      .where(eq(crawlJobs.id, jobId));
    if (event) await tx.insert(webhookOutbox).values({ ...event, headers: event.headers ?? null });
    return true;
  });
}

/** A discovery-only page: fetched for its links, no document. */
export async function finishDiscoveryPage(db: Db, jobId: string, key: string): Promise<void> {
  await db
    .update(crawlUrls)
    .set({ status: 'done', doneAt: new Date(), leaseOwner: null, leaseUntil: null })
    .where(and(eq(crawlUrls.jobId, jobId), eq(crawlUrls.urlKey, key)));
}

/** A page that could not be scraped (or was refused by robots.txt); counted once. */
export async function failPage(db: Db, jobId: string, key: string, status: 'failed' | 'robots', error: string | null): Promise<void> {
  await db.transaction(async (tx) => {
    const changed = await tx
      .update(crawlUrls)
      .set({ status, error, doneAt: new Date(), leaseOwner: null, leaseUntil: null })
      .where(and(eq(crawlUrls.jobId, jobId), eq(crawlUrls.urlKey, key), inArray(crawlUrls.status, ['queued', 'leased'])))
      .returning({ k: crawlUrls.urlKey });
    if (changed.length && status === 'failed') {
      await tx.update(crawlJobs).set({ failed: sql`${crawlJobs.failed} + 1` }).where(eq(crawlJobs.id, jobId));
    }
  });
}

export async function frontierCounts(db: Db, jobId: string): Promise<{ queued: number; leased: number; nextLeaseExpiryMs: number | null }> {
  const res = await db.execute<{ queued: number; leased: number; next_ms: number | null }>(sql`
    SELECT count(*) FILTER (WHERE status = 'queued')::int AS queued,
           count(*) FILTER (WHERE status = 'leased')::int AS leased,
           (EXTRACT(EPOCH FROM min(lease_until) FILTER (WHERE status = 'leased') - now()) * 1000)::int AS next_ms
    FROM crawl_urls WHERE job_id = ${jobId} AND status IN ('queued', 'leased')`);
  const r = res.rows[0]!;
  return { queued: r.queued, leased: r.leased, nextLeaseExpiryMs: r.next_ms };
}

/** Ends a job unless it already ended (a cancel written by the API wins over a late completion). */
export async function finishJob(db: Db, jobId: string, status: 'completed' | 'failed' | 'cancelled', error?: string): Promise<{ status: string; changed: boolean }> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(crawlJobs)
      .set({ status, error: error ?? null, completedAt: new Date() })
      .where(and(eq(crawlJobs.id, jobId), eq(crawlJobs.status, 'scraping')))
      .returning({ status: crawlJobs.status });
    const final = row?.status ?? (await tx.select({ s: crawlJobs.status }).from(crawlJobs).where(eq(crawlJobs.id, jobId)))[0]?.s ?? status;
    if (final === 'cancelled') {
      await tx
        .update(crawlUrls)
        .set({ status: 'cancelled', leaseOwner: null, leaseUntil: null })
        .where(and(eq(crawlUrls.jobId, jobId), inArray(crawlUrls.status, ['queued', 'leased'])));
    }
    if (!row) await tx.update(crawlJobs).set({ completedAt: sql`coalesce(${crawlJobs.completedAt}, now())` }).where(eq(crawlJobs.id, jobId));
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

/** Documents stored after `afterSeq` (the WebSocket stream). */
export async function documentsAfter(db: Db, jobId: string, afterSeq: number, limit: number) {
  return db
    .select({ seq: crawlDocuments.seq, document: crawlDocuments.document })
    .from(crawlDocuments)
    .where(and(eq(crawlDocuments.jobId, jobId), gt(crawlDocuments.seq, afterSeq)))
    .orderBy(asc(crawlDocuments.seq))
    .limit(limit);
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
  await db.insert(crawlRobots).values({ jobId, origin, body }).onConflictDoNothing();
}
