import { sql } from 'drizzle-orm';
import type { Db } from './client';
import { UNFINISHED_URL } from './frontier';

/**
 * Claims a crawl page's fingerprints (crawl_fingerprints) or finds the page it repeats: the page
 * its `<link rel="canonical">` names (`canonicalKey`, another URL key of the crawl) once that page
 * is stored, else the holder of one of its fingerprints. With neither, the page takes the
 * fingerprints nobody holds and null comes back: it is stored as usual. Otherwise its URL is ended as `duplicate` of the holder (no document, no
 * charge, no event) and the holder's URL key comes back. Idempotent per page: a retried page finds
 * its own fingerprints and is not its own duplicate. Two pages claiming one fingerprint at once:
 * the one whose insert lost sees the winner in a second statement and gives back what it took.
 */
export async function claimFingerprints(db: Db, jobId: string, key: string, page: { fingerprints: string[]; canonicalKey?: string | null }): Promise<string | null> {
  const fps = [...new Set(page.fingerprints)];
  const canonical = page.canonicalKey && page.canonicalKey !== key ? page.canonicalKey : null;
  if (!fps.length && !canonical) return null;
  const r = await db.execute<{ owner: string | null; inserted: number }>(sql`
    WITH fp AS (SELECT unnest(${sql.param(fps)}::text[]) AS f),
    owner AS (
      SELECT url_key FROM (
        (SELECT d.url_key, 0 AS pref FROM crawl_documents d WHERE d.job_id = ${jobId} AND d.url_key = ${canonical}::text)
        UNION ALL
        (SELECT c.url_key, 1 FROM crawl_fingerprints c JOIN fp ON c.fingerprint = fp.f WHERE c.job_id = ${jobId} AND c.url_key <> ${key})
      ) o ORDER BY pref, url_key LIMIT 1
    ), ins AS (
      INSERT INTO crawl_fingerprints (job_id, fingerprint, url_key)
      SELECT ${jobId}, fp.f, ${key} FROM fp WHERE NOT EXISTS (SELECT 1 FROM owner)
      ON CONFLICT DO NOTHING RETURNING 1
    ), mark AS (${markDuplicate(jobId, key, sql`(SELECT url_key FROM owner)`)})
    SELECT (SELECT url_key FROM owner) AS owner, (SELECT count(*) FROM ins)::int AS inserted`);
  const row = r.rows[0]!;
  if (row.owner || row.inserted === fps.length) return row.owner;
  // Some fingerprint was taken meanwhile, or is this page's own from an earlier attempt.
  const again = await db.execute<{ owner: string | null }>(sql`
    WITH owner AS (
      SELECT url_key FROM crawl_fingerprints WHERE job_id = ${jobId} AND fingerprint = ANY(${sql.param(fps)}::text[]) AND url_key <> ${key}
      ORDER BY url_key LIMIT 1
    ), giveback AS (
      DELETE FROM crawl_fingerprints WHERE job_id = ${jobId} AND url_key = ${key} AND fingerprint = ANY(${sql.param(fps)}::text[]) AND EXISTS (SELECT 1 FROM owner)
    ), mark AS (${markDuplicate(jobId, key, sql`(SELECT url_key FROM owner)`)})
    SELECT (SELECT url_key FROM owner) AS owner`);
  return again.rows[0]?.owner ?? null;
}

const markDuplicate = (jobId: string, key: string, owner: ReturnType<typeof sql>) => sql`
  UPDATE crawl_urls SET status = 'duplicate', duplicate_of = ${owner}, done_at = now(), lease_owner = NULL, lease_until = NULL
  WHERE job_id = ${jobId} AND url_key = ${key} AND ${owner} IS NOT NULL AND status = ANY(${sql.param(UNFINISHED_URL)}::text[])`;
