import { sql } from 'drizzle-orm';
import type { Db } from './client';

export interface PruneSettings {
  /** A version replaced by a newer one is deleted once the newer one is this old (WDS_CHANGE_TRACKING_RETENTION_DAYS). */
  retentionMs: number;
  /** A page whose latest version nobody has seen for this long is forgotten (WDS_CHANGE_TRACKING_FORGET_DAYS); ≥ retentionMs. */
  forgetMs: number;
  /** Rows per statement, so a pass never holds many locks or a long transaction. */
  batch?: number;
}

export interface PruneResult {
  versions: number;
  contents: number;
}

const secs = (ms: number) => sql`make_interval(secs => ${ms / 1000})`;

/**
 * Old page versions and the markdown only they referenced, in batches until nothing is left:
 * superseded versions whose successor is older than the retention, then pages not seen for the
 * forget period (their versions go one by one as each becomes the latest), then contents no
 * version references (an hour old at least: a content row is written just before the version
 * that references it). The content foreign key makes the last step safe against a version
 * being written meanwhile: whichever statement comes second fails, and is retried (the storing
 * statement by its activity, this one on the next pass).
 */
export async function prunePageVersions(db: Db, s: PruneSettings): Promise<PruneResult> {
  const batch = s.batch ?? 5_000;
  const out: PruneResult = { versions: 0, contents: 0 };
  const count = async (q: ReturnType<typeof sql>) => (await db.execute(q)).rowCount ?? 0;

  out.versions += await loopSum(() =>
    count(sql`DELETE FROM page_versions WHERE id IN (
      SELECT v.id FROM page_versions v
      WHERE EXISTS (SELECT 1 FROM page_versions n WHERE n.team_id = v.team_id AND n.tag = v.tag AND n.url_key = v.url_key AND n.id > v.id
                      AND n.first_seen_at < now() - ${secs(s.retentionMs)})
      LIMIT ${batch})`),
  );
  out.versions += await loopSum(() =>
    count(sql`DELETE FROM page_versions WHERE id IN (
      SELECT v.id FROM page_versions v
      WHERE v.last_seen_at < now() - ${secs(Math.max(s.forgetMs, s.retentionMs))}
        AND NOT EXISTS (SELECT 1 FROM page_versions n WHERE n.team_id = v.team_id AND n.tag = v.tag AND n.url_key = v.url_key AND n.id > v.id)
      LIMIT ${batch})`),
  );
  out.contents += await loopSum(() =>
    count(sql`DELETE FROM page_contents WHERE (team_id, hash) IN (
      SELECT c.team_id, c.hash FROM page_contents c
      WHERE c.created_at < now() - interval '1 hour'
        AND NOT EXISTS (SELECT 1 FROM page_versions v WHERE v.team_id = c.team_id AND v.content_hash = c.hash)
      LIMIT ${batch})`),
  );
  return out;

  /** Runs a batched delete until a batch comes back short; the rows deleted in all. */
  async function loopSum(stmt: () => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await stmt();
      total += n;
      if (n < batch) return total;
    }
  }
}
