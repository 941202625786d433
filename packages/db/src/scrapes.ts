import { and, eq, sql } from 'drizzle-orm';
import type { Db } from './client';
import { pageCache, scrapeJobs } from './schema/index';
import { chargeCtes } from './ledger';
import { SCRAPE_DONE_CHANNEL } from './scrape-done';
import { storable } from './text';
import { searchIndexCte } from './search-index';
import { pageVersionCtes, type VersionWrite } from './page-versions';

export async function insertScrapeJob(db: Db, row: { id: string; teamId: string; url: string | null; options: unknown }) {
  await db.insert(scrapeJobs).values(row);
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

export async function failScrapeJob(db: Db, id: string, error: unknown) {
  await db
    .update(scrapeJobs)
    .set({ status: 'failed', error: storable(error), completedAt: new Date() })
    .where(and(eq(scrapeJobs.id, id), eq(scrapeJobs.status, 'pending')));
}

/**
 * A completed row for a scrape answered straight from the cache, so GET /v2/scrape/{id} works
 * for it too, and its charge, in one statement. `keepRow` false (zero data retention): the
 * charge only.
 */
export async function insertCompletedScrape(db: Db, row: { id: string; teamId: string; url: string | null; options: unknown; document: unknown; creditsUsed: number; keepRow?: boolean }) {
  await db.execute(sql`
    WITH scrape AS (
      INSERT INTO ${scrapeJobs} (id, team_id, url, options, status, document, credits_used, created_at, completed_at)
      SELECT ${row.id}::uuid, ${row.teamId}::uuid, ${row.url}::text, ${JSON.stringify(row.options)}::jsonb, 'completed', ${JSON.stringify(storable(row.document))}::jsonb, ${row.creditsUsed}::int, now(), now()
      WHERE ${row.keepRow !== false}::bool
    ), ${chargeCtes(sql`SELECT ${row.teamId}::uuid, ${row.id}::uuid, 'scrape', ${row.creditsUsed}::int, ${scrapeCreditKey(row.id)}::text`)}
    ${searchIndexCte(sql`SELECT ${row.teamId}::uuid AS team_id WHERE ${row.keepRow !== false && row.url !== null}::bool`, row.document)}
    SELECT 1`);
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

/** A cached page whose age lies in [minAgeMs, maxAgeMs]; maxAgeMs undefined means no upper bound. */
export async function findCachedPage(db: Db, cacheKey: string, window: { maxAgeMs?: number; minAgeMs?: number }): Promise<CachedPage | null> {
  const conds = [eq(pageCache.cacheKey, cacheKey)];
  if (window.maxAgeMs !== undefined) conds.push(sql`${pageCache.fetchedAt} >= now() - make_interval(secs => ${window.maxAgeMs / 1000})`);
  if (window.minAgeMs) conds.push(sql`${pageCache.fetchedAt} <= now() - make_interval(secs => ${window.minAgeMs / 1000})`);
  const [row] = await db
    .select({
      url: pageCache.url, finalUrl: pageCache.finalUrl, statusCode: pageCache.statusCode, contentType: pageCache.contentType,
      charset: pageCache.charset, body: pageCache.body, engine: pageCache.engine, fetchedAt: pageCache.fetchedAt,
    })
    .from(pageCache)
    .where(and(...conds));
  return row ?? null;
}

/** One upsert statement (one round trip): pages are cached on every scrape and crawled page. */
export async function storeCachedPage(db: Db, cacheKey: string, page: Omit<CachedPage, 'fetchedAt'>) {
  const now = new Date();
  await db
    .insert(pageCache)
    .values({ cacheKey, ...page, fetchedAt: now })
    .onConflictDoUpdate({ target: pageCache.cacheKey, set: { ...page, fetchedAt: now } });
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
