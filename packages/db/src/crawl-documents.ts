import { and, asc, eq, gt, inArray, sql } from 'drizzle-orm';
import type { Db } from './client';
import { crawlDocuments, crawlUrls } from './schema/index';
import { BACKOFF_OWNER } from './frontier';

/** Reading a crawl or batch job's results: documents by page, sequence or URL key, and its errors. */

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

/** Code of the errors entries of pages waiting for their site's backoff (not failed: they are retried). */
export const BACKOFF_ERROR_CODE = 'ORIGIN_BACKOFF';

/**
 * A job's failed pages, robots-blocked URLs and duplicate pages (a crawl's, when it has any), then the pages waiting for their site's backoff
 * (429/503; code ORIGIN_BACKOFF, the time they are retried from in the message): they leave the
 * list when they are retried.
 */
export async function jobErrors(db: Db, jobId: string) {
  const [rows, waiting] = await Promise.all([
    db
      .select({ id: crawlUrls.pageId, url: crawlUrls.url, error: crawlUrls.error, status: crawlUrls.status, doneAt: crawlUrls.doneAt, duplicateOf: crawlUrls.duplicateOf })
      .from(crawlUrls)
      .where(and(eq(crawlUrls.jobId, jobId), inArray(crawlUrls.status, ['failed', 'robots', 'duplicate'])))
      .orderBy(asc(crawlUrls.seq)),
    db
      .select({ id: crawlUrls.pageId, url: crawlUrls.url, error: crawlUrls.error, until: crawlUrls.leaseUntil })
      .from(crawlUrls)
      .where(and(eq(crawlUrls.jobId, jobId), inArray(crawlUrls.status, ['leased', 'rendering']), eq(crawlUrls.leaseOwner, BACKOFF_OWNER)))
      .orderBy(asc(crawlUrls.seq)),
  ]);
  const dups = rows.filter((r) => r.status === 'duplicate');
  return {
    errors: [
      ...rows.filter((r) => r.status === 'failed').map((r) => ({ id: r.id, url: r.url, error: r.error ?? 'Unknown error', timestamp: r.doneAt?.toISOString() ?? null })),
      ...waiting.map((r) => ({
        id: r.id,
        url: r.url,
        code: BACKOFF_ERROR_CODE,
        error: `Waiting, not failed: ${r.error ?? 'the site asked to slow down'}; retried from ${r.until?.toISOString() ?? 'now'}`,
        timestamp: null,
      })),
    ],
    robotsBlocked: rows.filter((r) => r.status === 'robots').map((r) => r.url),
    ...(dups.length ? { duplicates: await duplicatesOf(db, jobId, dups) } : {}),
  };
}

/** Duplicate pages of a crawl with the URL of the page each repeats (by its URL key). */
async function duplicatesOf(db: Db, jobId: string, dups: { url: string; duplicateOf: string | null }[]) {
  const keys = [...new Set(dups.flatMap((d) => (d.duplicateOf ? [d.duplicateOf] : [])))];
  const originals = keys.length
    ? await db.select({ key: crawlUrls.urlKey, url: crawlUrls.url }).from(crawlUrls).where(and(eq(crawlUrls.jobId, jobId), inArray(crawlUrls.urlKey, keys)))
    : [];
  const urlOf = new Map(originals.map((o) => [o.key, o.url]));
  return dups.map((d) => ({ url: d.url, duplicateOf: (d.duplicateOf && urlOf.get(d.duplicateOf)) ?? null }));
}
