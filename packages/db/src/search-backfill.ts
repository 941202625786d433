import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { KEEPS_NO_DATA } from './crawl-pages';
import { indexStoredPages, sharedIndexAllows } from './search-index';

/**
 * The backfill of the own search index: pages stored before the index existed (migration 0009),
 * or while indexing was off (WDS_SEARCH_INDEX=false), are indexed from where they are stored —
 * completed scrapes (scrape_jobs) and crawl, batch and extract pages (crawl_documents) — by the
 * same rules as at store time: never a page of a job that keeps no data (zero data retention,
 * lockdown), nor one answered 4xx/5xx, and a copy replaces an indexed row only when at least as
 * fresh (its stored time). Batched: each batch is one transaction that indexes the rows and moves
 * the source's cursor (`search_backfill`), so it is resumable (a stop loses at most the batch in
 * flight, which is redone) and idempotent (indexing a page again changes nothing). A second
 * runner skips a source another one holds. Pages stored after a source's `cutoff` (when its
 * backfill began) were indexed when stored.
 */

interface Source {
  /** The next batch after `cursor` (null: from the start), rows stored before `cutoff`, in key order. */
  batch(cursor: string[] | null, cutoff: Date, limit: number): SQL;
}

/** What searchEntryOf reads of a document (its markdown and metadata), not the rest (html, rawHtml, …). */
const INDEXED = (doc: SQL) => sql`jsonb_build_object('markdown', ${doc} -> 'markdown', 'metadata', ${doc} -> 'metadata')`;

const SOURCES: Record<string, Source> = {
  scrapes: {
    batch: (cursor, cutoff, limit) => sql`
      SELECT ARRAY[s.id::text] AS key, s.team_id, ${INDEXED(sql`s.document`)} AS document, coalesce(s.completed_at, s.created_at) AS stored_at,
        ${sharedIndexAllows(sql`s.options`)} AS shareable
      FROM scrape_jobs s
      WHERE s.status = 'completed' AND s.url IS NOT NULL AND s.document IS NOT NULL AND s.created_at < ${cutoff.toISOString()}::timestamptz
        ${cursor ? sql`AND s.id > ${cursor[0]}::uuid` : sql``}
      ORDER BY s.id LIMIT ${limit}`,
  },
  crawl_pages: {
    batch: (cursor, cutoff, limit) => sql`
      SELECT ARRAY[d.job_id::text, d.url_key] AS key, j.team_id, ${INDEXED(sql`d.document`)} AS document, d.created_at AS stored_at,
        ${sharedIndexAllows(sql`j.options`)} AS shareable
      FROM crawl_documents d JOIN jobs j ON j.id = d.job_id
      WHERE d.created_at < ${cutoff.toISOString()}::timestamptz AND NOT ${KEEPS_NO_DATA}
        ${cursor ? sql`AND (d.job_id, d.url_key) > (${cursor[0]}::uuid, ${cursor[1]}::text)` : sql``}
      ORDER BY d.job_id, d.url_key LIMIT ${limit}`,
  },
};

export interface BackfillBatch {
  source: string;
  /** Source rows read (stored pages looked at). */
  rows: number;
  /** Index rows written. */
  indexed: number;
  finished: boolean;
}

/**
 * One batch of one source, in one transaction. null when another runner holds the source.
 * A source whose batch comes back short is finished.
 */
export async function backfillSearchBatch(db: Db, source: string, limit: number): Promise<BackfillBatch | null> {
  const src = SOURCES[source];
  if (!src) throw new Error(`unknown backfill source ${source}`);
  await db.execute(sql`INSERT INTO search_backfill (source) VALUES (${source}) ON CONFLICT (source) DO NOTHING`);
  return db.transaction(async (tx) => {
    const [state] = (
      await tx.execute<{ cutoff: Date | string; cursor: string[] | null; finished_at: Date | null }>(sql`
        SELECT cutoff, cursor, finished_at FROM search_backfill WHERE source = ${source} FOR UPDATE SKIP LOCKED`)
    ).rows;
    if (!state) return null;
    if (state.finished_at) return { source, rows: 0, indexed: 0, finished: true };
    const rows = (await tx.execute<{ key: string[]; team_id: string; document: unknown; stored_at: Date | string; shareable: boolean }>(src.batch(state.cursor, new Date(state.cutoff), limit))).rows;
    const indexed = await indexStoredPages(tx, rows.map((r) => ({ teamId: r.team_id, document: r.document, storedAt: new Date(r.stored_at), shareable: r.shareable })));
    const finished = rows.length < limit;
    const cursor = rows.length ? rows[rows.length - 1]!.key : state.cursor;
    await tx.execute(sql`
      UPDATE search_backfill SET cursor = ${cursor ? JSON.stringify(cursor) : null}::jsonb, rows = rows + ${rows.length},
        finished_at = ${finished ? sql`now()` : sql`NULL`}
      WHERE source = ${source}`);
    return { source, rows: rows.length, indexed, finished };
  });
}

export interface BackfillOptions {
  /** Source rows per batch (default 100). */
  batchSize?: number;
  /** Pause between batches, so a backfill beside live traffic leaves Postgres room (default 0). */
  pauseMs?: number;
  signal?: AbortSignal;
  onBatch?(b: BackfillBatch): void;
}

/**
 * Runs the backfill until every source is finished (or held by another runner, or `signal`
 * aborts). Returns what this call did and whether everything is finished.
 */
export async function backfillSearchIndex(db: Db, o: BackfillOptions = {}): Promise<{ rows: number; indexed: number; finished: boolean }> {
  let rows = 0;
  let indexed = 0;
  let finished = true;
  for (const source of Object.keys(SOURCES)) {
    for (;;) {
      if (o.signal?.aborted) return { rows, indexed, finished: false };
      const b = await backfillSearchBatch(db, source, o.batchSize ?? 100);
      if (!b) {
        finished = false;
        break;
      }
      rows += b.rows;
      indexed += b.indexed;
      if (b.rows) o.onBatch?.(b);
      if (b.finished) break;
      if (o.pauseMs) await new Promise((r) => setTimeout(r, o.pauseMs));
    }
  }
  return { rows, indexed, finished };
}

/** Whether every source's backfill is finished (a worker start skips the backfill then). */
export async function searchBackfillFinished(db: Db): Promise<boolean> {
  const r = await db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM search_backfill WHERE finished_at IS NOT NULL AND source = ANY(${sql.param(Object.keys(SOURCES))}::text[])`);
  return r.rows[0]!.n === Object.keys(SOURCES).length;
}

/** Forgets the progress: the next backfill indexes every page stored until it begins (after turning indexing on again). */
export async function resetSearchBackfill(db: Db): Promise<void> {
  await db.execute(sql`DELETE FROM search_backfill`);
}
