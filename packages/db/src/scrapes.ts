import { and, eq, sql } from 'drizzle-orm';
import type { Db } from './client';
import { pageCache, scrapeJobs } from './schema/index';
import { chargeCtes } from './ledger';
import { SCRAPE_DONE_CHANNEL } from './scrape-done';
import { storable } from './text';
import { searchIndexCte } from './search-index';
import { pageVersionCtes, type VersionWrite } from './page-versions';
import { hitSearchIndexCte } from './search-copies';

/** Idempotent per id (a retried activity that stores a scrape it starts keeps the first row). */
export async function insertScrapeJob(db: Db, row: { id: string; teamId: string; url: string | null; options: unknown }) {
  await db.insert(scrapeJobs).values(row).onConflictDoNothing();
}

export async function loadScrapeJob(db: Db, id: string) {
  const [row] = await db.select().from(scrapeJobs).where(eq(scrapeJobs.id, id));
  return row ?? null;
}

/** Team-scoped read: another team's id behaves exactly like a missing one. */
export async function loadTeamScrape(db: Db, teamId: string, id: string) {
  const [row] = await db
    .select({ status: scrapeJobs.status, document: scrapeJobs.document, error: scrapeJobs.error })
    .from(scrapeJobs)
    .where(and(eq(scrapeJobs.id, id), eq(scrapeJobs.teamId, teamId)));
  return row ?? null;
}

/**
 * Idempotent: a retried activity rewrites the same row, and its credits are charged to the
 * ledger once (key scrape:<id>), in the same statement, which also indexes the page for search
 * unless the scrape keeps no URL (zero data retention, lockdown), and records the page's change-tracking
 * version (`versions`, page-versions.ts). The waiting API hears of it on
 * SCRAPE_DONE_CHANNEL when the row commits (a NOTIFY in the same statement).
 */
export async function completeScrapeJob(db: Db, id: string, document: unknown, creditsUsed: number, versions: VersionWrite[] = []) {
  await db.execute(sql`
    WITH done AS (
      UPDATE ${scrapeJobs} SET status = 'completed', document = ${JSON.stringify(storable(document))}::jsonb, credits_used = ${creditsUsed}, completed_at = now(), error = NULL
      WHERE id = ${id} RETURNING id, team_id, url
    ), ${chargeCtes(sql`SELECT team_id, id, 'scrape', ${creditsUsed}::int, ${scrapeCreditKey(id)}::text FROM done`)}
    ${searchIndexCte(sql`SELECT team_id FROM done WHERE url IS NOT NULL`, document)}${pageVersionCtes(versions, sql`EXISTS (SELECT 1 FROM done)`)}
    SELECT pg_notify(${SCRAPE_DONE_CHANNEL}, done.id::text) FROM done`);
}

/** The ledger key of a scrape's charge (one per scrape id, whichever path completed it). */
export const scrapeCreditKey = (scrapeId: string) => `scrape:${scrapeId}`;

/** A pending scrape fails with its error record; the waiting API hears of it on SCRAPE_DONE_CHANNEL, as of a completion. */
export async function failScrapeJob(db: Db, id: string, error: unknown) {
  await db.execute(sql`
    WITH failed AS (
      UPDATE ${scrapeJobs} SET status = 'failed', error = ${JSON.stringify(storable(error))}::jsonb, completed_at = now()
      WHERE id = ${id} AND status = 'pending' RETURNING id
    )
    SELECT pg_notify(${SCRAPE_DONE_CHANNEL}, failed.id::text) FROM failed`);
}

/**
 * A completed row for a scrape answered straight from the cache, so GET /v2/scrape/{id} works
 * for it too, and its charge, in one statement. `keepRow` false (zero data retention): the
 * charge only.
 */
export async function insertCompletedScrape(db: Db, row: { id: string; teamId: string; url: string | null; options: unknown; document: unknown; creditsUsed: number; keepRow?: boolean }) {
  // Hits of a copy the team's index already holds skip indexing (search-copies.ts).
  const index = hitSearchIndexCte(row.teamId, row.document, row.keepRow !== false && row.url !== null);
  await db.execute(sql`
    WITH scrape AS (
      INSERT INTO ${scrapeJobs} (id, team_id, url, options, status, document, credits_used, created_at, completed_at)
      SELECT ${row.id}::uuid, ${row.teamId}::uuid, ${row.url}::text, ${JSON.stringify(row.options)}::jsonb, 'completed', ${JSON.stringify(storable(row.document))}::jsonb, ${row.creditsUsed}::int, now(), now()
      WHERE ${row.keepRow !== false}::bool
    ), ${chargeCtes(sql`SELECT ${row.teamId}::uuid, ${row.id}::uuid, 'scrape', ${row.creditsUsed}::int, ${scrapeCreditKey(row.id)}::text`)}
    ${index.cte}
    SELECT 1`);
  index.stored();
}

export interface CachedPage {
  url: string;
  finalUrl: string;
  statusCode: number;
  contentType: string;
  charset: string | null;
  body: Buffer;
  engine: string;
  fetchedAt: Date;
}

/** What converting a cached page produced, for one set of conversion options (@wds/documents PageOutputs). */
export type StoredOutputs = object;

/** A cache entry as read for a request: its body only when the stored outputs do not serve it. */
export interface CachedPageRead extends Omit<CachedPage, 'body'> {
  body: Buffer | null;
  /** The outputs stored for the request's conversion options, if any. */
  outputs: StoredOutputs | null;
}

/**
 * What the reader can be served from: the outputs of `variant`; when they lack one of `formats`,
 * or `needBody` (rawHtml), the body comes too (the caller converts it, or decodes it).
 */
export interface OutputsWanted {
  variant: string;
  formats: readonly string[];
  needBody?: boolean;
}

/**
 * A cached page whose age lies in [minAgeMs, maxAgeMs]; maxAgeMs undefined means no upper bound.
 * With `want`, the page's stored outputs for those options come along, and the body (the
 * largest column) only when they do not cover the request: a hit served from its outputs reads
 * neither the body nor other options' outputs.
 */
export async function findCachedPage(db: Db, cacheKey: string, window: { maxAgeMs?: number; minAgeMs?: number }): Promise<CachedPage | null>;
export async function findCachedPage(db: Db, cacheKey: string, window: { maxAgeMs?: number; minAgeMs?: number }, want: OutputsWanted): Promise<CachedPageRead | null>;
export async function findCachedPage(db: Db, cacheKey: string, window: { maxAgeMs?: number; minAgeMs?: number }, want?: OutputsWanted): Promise<CachedPage | CachedPageRead | null> {
  const conds = [eq(pageCache.cacheKey, cacheKey)];
  if (window.maxAgeMs !== undefined) conds.push(sql`${pageCache.fetchedAt} >= now() - make_interval(secs => ${window.maxAgeMs / 1000})`);
  if (window.minAgeMs) conds.push(sql`${pageCache.fetchedAt} <= now() - make_interval(secs => ${window.minAgeMs / 1000})`);
  const head = {
    url: pageCache.url, finalUrl: pageCache.finalUrl, statusCode: pageCache.statusCode, contentType: pageCache.contentType,
    charset: pageCache.charset, engine: pageCache.engine, fetchedAt: pageCache.fetchedAt,
  };
  if (!want) {
    const [row] = await db.select({ ...head, body: pageCache.body }).from(pageCache).where(and(...conds));
    return row ?? null;
  }
  const outputs = sql<StoredOutputs | null>`${pageCache.outputs} -> ${want.variant}::text`;
  const covered = sql`coalesce(${outputs} ?& ${`{${want.formats.join(',')}}`}::text[], false)`;
  const [row] = await db
    .select({
      ...head,
      outputs: outputs.mapWith((v) => (typeof v === 'string' ? (JSON.parse(v) as StoredOutputs) : (v as StoredOutputs | null))),
      body: sql<Buffer | null>`CASE WHEN ${!!want.needBody}::bool OR NOT ${covered} THEN ${pageCache.body} END`.mapWith(pageCache.body),
    })
    .from(pageCache)
    .where(and(...conds));
  return row ?? null;
}

/**
 * One upsert statement (one round trip): pages are cached on every scrape and crawled page.
 * A new body replaces the outputs of the old one: `outputs` (what converting this body produced,
 * for the request's options) or none.
 */
export async function storeCachedPage(db: Db, cacheKey: string, page: Omit<CachedPage, 'fetchedAt'> & { outputs?: { variant: string; formats: StoredOutputs } }) {
  const now = new Date();
  const { outputs, ...row } = page;
  const stored = outputs ? { [outputs.variant]: storable(outputs.formats) } : null;
  await db
    .insert(pageCache)
    .values({ cacheKey, ...row, fetchedAt: now, outputs: stored })
    .onConflictDoUpdate({ target: pageCache.cacheKey, set: { ...row, fetchedAt: now, outputs: stored } });
}

/**
 * Adds formats converted for a cache hit to the entry's outputs of those options, if the entry
 * still holds the body they came from (`fetchedAt`, as read): a page fetched again meanwhile
 * keeps its own outputs.
 */
export async function addCachedOutputs(db: Db, cacheKey: string, fetchedAt: Date, variant: string, formats: StoredOutputs) {
  await db.execute(sql`
    UPDATE ${pageCache}
    SET outputs = coalesce(outputs, '{}'::jsonb) || jsonb_build_object(${variant}::text, coalesce(outputs -> ${variant}::text, '{}'::jsonb) || ${JSON.stringify(storable(formats))}::jsonb)
    WHERE cache_key = ${cacheKey} AND date_trunc('milliseconds', fetched_at) = ${fetchedAt.toISOString()}::timestamptz`);
}

/** Zero data retention: the row goes once its document has been handed back. */
export async function deleteScrapeJob(db: Db, id: string) {
  await db.delete(scrapeJobs).where(eq(scrapeJobs.id, id));
}

/**
 * The page of a scrape whose model-made formats come next (wds-llm): stored without completing the
 * job, with its base credits, so the LLM step reads it by id and completes the job. Idempotent.
 */
export async function storeScrapeDraft(db: Db, id: string, document: unknown, creditsUsed: number) {
  await db
    .update(scrapeJobs)
    .set({ document: sql`${JSON.stringify(document)}::jsonb`, creditsUsed })
    .where(and(eq(scrapeJobs.id, id), eq(scrapeJobs.status, 'pending')));
}
