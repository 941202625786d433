import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants as zlibConstants } from 'node:zlib';
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { preparedStatement } from './prepared';
import { pageCache, scrapeJobs } from './schema/index';
import { chargeCtes } from './ledger';
import { SCRAPE_DONE_CHANNEL } from './scrape-done';
import { storable } from './text';
import { searchIndexCte, sharedIndexAllows } from './search-index';
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
      WHERE id = ${id} RETURNING id, team_id, url, ${sharedIndexAllows(sql`options`)} AS shareable
    ), ${chargeCtes(sql`SELECT team_id, id, 'scrape', ${creditsUsed}::int, ${scrapeCreditKey(id)}::text FROM done`)}
    ${searchIndexCte(sql`SELECT team_id, shareable FROM done WHERE url IS NOT NULL`, document)}${pageVersionCtes(versions, sql`EXISTS (SELECT 1 FROM done)`)}
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
  const index = hitSearchIndexCte(row.teamId, row.document, row.keepRow !== false && row.url !== null, row.options);
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
    const [row] = await db.select({ ...head, body: pageCache.body, bodyEncoding: pageCache.bodyEncoding }).from(pageCache).where(and(...conds));
    return row ? withDecodedBody(row) : null;
  }
  const [row] = (
    await findWithOutputs(db, {
      key: cacheKey,
      maxAgeS: window.maxAgeMs === undefined ? null : window.maxAgeMs / 1000,
      minAgeS: window.minAgeMs ? window.minAgeMs / 1000 : null,
      variant: want.variant,
      formats: want.formats,
      needBody: !!want.needBody,
    })
  ).rows;
  return row ? withDecodedBody(row) : null;
}

/** A cache row as read, its body (when read) as fetched and its encoding column dropped. */
async function withDecodedBody<R extends { body: Buffer | null; bodyEncoding: string | null }>(row: R): Promise<Omit<R, 'bodyEncoding'>> {
  const { bodyEncoding, ...page } = row;
  return { ...page, body: page.body && (await decodeCachedBody(page.body, bodyEncoding)) };
}

/**
 * Bodies from this size up are stored compressed (`body_encoding` 'br'): brotli at quality 1, run
 * on libuv's thread pool, costs ~0.7 ms for a 184 kB page (../shared/bench/main-content) and
 * shrinks it 4.7x, where Postgres's pglz cost ~2.4 ms of its CPU per page written and shrank it
 * 3.3x (migration 0028). Smaller bodies are not worth a codec.
 */
const COMPRESS_FROM_BYTES = 1024;
const brotli = promisify(brotliCompress);
const unbrotli = promisify(brotliDecompress);

async function encodeBody(body: Buffer): Promise<{ body: Buffer; encoding: 'br' | null }> {
  if (body.length < COMPRESS_FROM_BYTES) return { body, encoding: null };
  const packed = await brotli(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 1, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: body.length } });
  return { body: packed, encoding: 'br' };
}

/** A page_cache body as fetched, from the stored bytes and their `body_encoding`. */
export async function decodeCachedBody(body: Buffer, encoding: string | null): Promise<Buffer> {
  if (encoding === null) return body;
  if (encoding === 'br') return unbrotli(body);
  throw new Error(`page_cache: unknown body encoding ${encoding}`);
}

/**
 * Which of `keys` have a cache entry fetched within the last `maxAgeMs`, in one statement: a crawl
 * asks for the URLs of each claim, so that its pages with no entry skip their own lookup.
 */
export async function freshCacheKeys(db: Db, keys: string[], maxAgeMs: number): Promise<Set<string>> {
  if (!keys.length) return new Set();
  const { rows } = await freshKeys(db, { keys, maxAgeS: maxAgeMs / 1000 });
  return new Set(rows.map((r) => r.key));
}

const freshKeys = preparedStatement<{ key: string }>(
  ($) => sql`
    SELECT cache_key AS key FROM page_cache
    WHERE cache_key = ANY(${$('keys')}::text[]) AND fetched_at >= now() - make_interval(secs => ${$('maxAgeS')}::float8)`,
);

/** findCachedPage with `want`: crawls ask it for every page, so it is a prepared statement. */
const findWithOutputs = preparedStatement<CachedPageRead & { bodyEncoding: string | null }>(
  ($) => sql`
    SELECT url, final_url AS "finalUrl", status_code AS "statusCode", content_type AS "contentType", charset, engine, fetched_at AS "fetchedAt",
      outputs -> ${$('variant')}::text AS outputs, body_encoding AS "bodyEncoding",
      CASE WHEN ${$('needBody')}::bool OR NOT coalesce((outputs -> ${$('variant')}::text) ?& ${$('formats')}::text[], false) THEN body END AS body
    FROM page_cache
    WHERE cache_key = ${$('key')}::text
      AND (${$('maxAgeS')}::float8 IS NULL OR fetched_at >= now() - make_interval(secs => ${$('maxAgeS')}::float8))
      AND (${$('minAgeS')}::float8 IS NULL OR fetched_at <= now() - make_interval(secs => ${$('minAgeS')}::float8))`,
);

/** A page to cache, with what converting it produced for the request's options (`variant`), if anything. */
export type PageToCache = Omit<CachedPage, 'fetchedAt'> & { outputs?: { variant: string; formats: StoredOutputs } };

/**
 * A page as the cache stores it: built by cacheEntryOf, written by storeCacheEntry or with a
 * crawl's page group (finishPages). `body` holds the stored bytes (encoded as `bodyEncoding` says).
 */
export interface CacheEntry extends CachedPage {
  key: string;
  bodyEncoding: 'br' | null;
  /** jsonb text: { [variant]: formats }, or null. */
  outputs: string | null;
}

/**
 * The cache row of a page (its body compressed here, off the event loop). A new body replaces the
 * outputs of the old one: `outputs` (what converting this body produced, for the request's
 * options) or none.
 */
export async function cacheEntryOf(cacheKey: string, page: PageToCache): Promise<CacheEntry> {
  const { outputs } = page;
  const body = await encodeBody(page.body);
  return {
    key: cacheKey,
    url: page.url,
    finalUrl: page.finalUrl,
    statusCode: page.statusCode,
    contentType: page.contentType,
    charset: page.charset ?? null,
    body: body.body,
    bodyEncoding: body.encoding,
    engine: page.engine,
    fetchedAt: new Date(),
    outputs: outputs ? JSON.stringify({ [outputs.variant]: storable(outputs.formats) }) : null,
  };
}

/** One upsert statement (one round trip): pages are cached on every scrape (a crawl's pages mostly go with their page group: finishPages). */
export async function storeCachedPage(db: Db, cacheKey: string, page: PageToCache) {
  await storeCacheEntry(db, await cacheEntryOf(cacheKey, page));
}

export async function storeCacheEntry(db: Db, entry: CacheEntry) {
  await storeCached(db, cacheRowColumns([entry]));
}

/**
 * Prepared: pages are cached by the thousand. A cache entry is never worth a WAL flush (a crash that
 * loses the last moments' entries only makes those pages miss again), so it commits
 * asynchronously, as finishPage does; the upsert always returns its row, which carries set_config.
 */
const storeCached = preparedStatement(($) => sql`${cacheRowsUpsert($)} RETURNING set_config('synchronous_commit', 'off', true)`);

/**
 * The one way cache rows are written, for the rows cacheRowColumns lays out as parameters: a single
 * page's (storeCacheEntry) or a crawl page group's (finishPages, as a CTE). A new copy replaces the
 * whole row: body, encoding and outputs together. Rows go in key order (concurrent writers lock
 * shared rows in the same order).
 */
export function cacheRowsUpsert($: (name: string) => SQL): SQL {
  return sql`
    INSERT INTO page_cache (cache_key, url, final_url, status_code, content_type, charset, body, body_encoding, engine, fetched_at, outputs)
    SELECT e.k, e.u, e.f, e.s, e.ct, e.cs, substring(${$('cacheBodies')}::bytea FROM e.off FOR e.len), e.enc, e.eng, e.at, nullif(o.v, 'null'::jsonb)
    FROM unnest(${$('cacheKeys')}::text[], ${$('cacheUrls')}::text[], ${$('cacheFinalUrls')}::text[], ${$('cacheStatus')}::int[], ${$('cacheTypes')}::text[],
        ${$('cacheCharsets')}::text[], ${$('cacheEncodings')}::text[], ${$('cacheEngines')}::text[], ${$('cacheAt')}::timestamptz[], ${$('cacheOffsets')}::int[], ${$('cacheLengths')}::int[])
      WITH ORDINALITY AS e(k, u, f, s, ct, cs, enc, eng, at, off, len, ord)
    JOIN jsonb_array_elements(${$('cacheOutputs')}::jsonb) WITH ORDINALITY AS o(v, ord) USING (ord)
    ORDER BY e.k
    ON CONFLICT (cache_key) DO UPDATE SET url = excluded.url, final_url = excluded.final_url, status_code = excluded.status_code,
      content_type = excluded.content_type, charset = excluded.charset, body = excluded.body, body_encoding = excluded.body_encoding, engine = excluded.engine,
      fetched_at = excluded.fetched_at, outputs = excluded.outputs`;
}

/**
 * Cache rows as cacheRowsUpsert's parameters: one row per key (an upsert cannot touch a row twice:
 * the last entry wins, as with one statement per entry), in key order. The bodies travel as one
 * binary parameter, sliced by offset and length: a bytea[] would go as hex text.
 */
export function cacheRowColumns(entries: CacheEntry[]): Record<string, unknown> {
  const rows = [...new Map(entries.map((e) => [e.key, e])).values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  let off = 1;
  const offsets = rows.map((r) => {
    const at = off;
    off += r.body.length;
    return at;
  });
  return {
    cacheKeys: rows.map((r) => r.key),
    cacheUrls: rows.map((r) => r.url),
    cacheFinalUrls: rows.map((r) => r.finalUrl),
    cacheStatus: rows.map((r) => r.statusCode),
    cacheTypes: rows.map((r) => r.contentType),
    cacheCharsets: rows.map((r) => r.charset),
    cacheEncodings: rows.map((r) => r.bodyEncoding),
    cacheEngines: rows.map((r) => r.engine),
    cacheAt: rows.map((r) => r.fetchedAt.toISOString()),
    cacheOffsets: offsets,
    cacheLengths: rows.map((r) => r.body.length),
    cacheBodies: Buffer.concat(rows.map((r) => r.body)),
    cacheOutputs: `[${rows.map((r) => r.outputs ?? 'null').join(',')}]`,
  };
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
