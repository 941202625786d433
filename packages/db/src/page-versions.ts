import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { storable, storableText } from './text';

/**
 * Page versions for change tracking (schema/changes.ts; rules in the README): reads of what an
 * observation compares with, and its writes — as CTEs for the statement that stores the page
 * (`pageVersionCtes`), or alone (`recordPageVersions`). Every write is idempotent on the
 * observation's `sourceKey`: a retried activity records its version once and its sighting once.
 */

export interface PageVersion {
  id: number;
  status: 'ok' | 'removed';
  statusCode: number | null;
  markdownHash: string | null;
  /** Set when the markdown is kept (page_contents); null under zero data retention. */
  contentHash: string | null;
  bodyHash: string | null;
  etag: string | null;
  lastModified: string | null;
  json: unknown;
  jsonKey: string | null;
  sourceKey: string;
  lastSource: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
  prevSeenAt: Date | null;
  checkStatus: 'ok' | 'removed' | 'failed';
}

/** One page of an observation: its URL key, and the key the observation records itself under. */
export interface PageRef {
  urlKey: string;
  sourceKey: string;
}

/**
 * What an observation of a page compares with. `baseline`: the latest version recorded by
 * another observation. `own`: the version this observation already recorded (a retried
 * activity), which it must not compare with.
 */
export interface PageHistory {
  baseline: PageVersion | null;
  own: PageVersion | null;
}

type Row = {
  url_key: string; id: string; status: 'ok' | 'removed'; status_code: number | null; markdown_hash: string | null; content_hash: string | null;
  body_hash: string | null; etag: string | null; last_modified: string | null; json: unknown; json_key: string | null; source_key: string;
  last_source: string; first_seen_at: string | Date; last_seen_at: string | Date; prev_seen_at: string | Date | null; check_status: PageVersion['checkStatus'];
};

const toVersion = (r: Row): PageVersion => ({
  id: Number(r.id), status: r.status, statusCode: r.status_code, markdownHash: r.markdown_hash, contentHash: r.content_hash, bodyHash: r.body_hash,
  etag: r.etag, lastModified: r.last_modified, json: r.json, jsonKey: r.json_key, sourceKey: r.source_key, lastSource: r.last_source,
  firstSeenAt: new Date(r.first_seen_at), lastSeenAt: new Date(r.last_seen_at), prevSeenAt: r.prev_seen_at ? new Date(r.prev_seen_at) : null, checkStatus: r.check_status,
});

/**
 * The histories of a team's pages under one tag, in one query: the two latest versions of
 * each page (index page_versions_page_idx, read backwards), no markdown. A page never seen is
 * absent from the map.
 */
export async function pageHistories(db: Db, q: { teamId: string; tag: string; pages: PageRef[] }): Promise<Map<string, PageHistory>> {
  const all = await pageHistoriesOf(db, q.pages.map((p) => ({ teamId: q.teamId, tag: q.tag, urlKey: p.urlKey, sourceKey: p.sourceKey })));
  const out = new Map<string, PageHistory>();
  for (const p of q.pages) {
    const h = all.get(historyKey(q.teamId, q.tag, p.urlKey));
    if (h) out.set(p.urlKey, h);
  }
  return out;
}

/** The key of a page's history in pageHistoriesOf's answer. */
export const historyKey = (teamId: string, tag: string, urlKey: string) => `${teamId}|${tag}|${urlKey}`;

/**
 * pageHistories across many (team, tag) histories in one query — a monitor batch holds pages
 * of many monitors, each with its own tag. Keyed by historyKey.
 */
export async function pageHistoriesOf(db: Db, refs: { teamId: string; tag: string; urlKey: string; sourceKey: string }[]): Promise<Map<string, PageHistory>> {
  const out = new Map<string, PageHistory>();
  if (!refs.length) return out;
  const key = (r: { teamId: string; tag: string; urlKey: string }) => historyKey(r.teamId, r.tag, r.urlKey);
  const unique = [...new Map(refs.map((r) => [key(r), r])).values()];
  const res = await db.execute<Row & { team_id: string; tag: string }>(sql`
    SELECT k.team_id, k.tag, k.url_key, v.id, v.status, v.status_code, v.markdown_hash, v.content_hash, v.body_hash, v.etag, v.last_modified, v.json, v.json_key,
           v.source_key, v.last_source, v.first_seen_at, v.last_seen_at, v.prev_seen_at, v.check_status
    FROM unnest(${sql.param(unique.map((r) => r.teamId))}::uuid[], ${sql.param(unique.map((r) => r.tag))}::text[], ${sql.param(unique.map((r) => r.urlKey))}::text[]) AS k(team_id, tag, url_key)
    CROSS JOIN LATERAL (
      SELECT * FROM page_versions WHERE team_id = k.team_id AND tag = k.tag AND url_key = k.url_key ORDER BY id DESC LIMIT 2
    ) v`);
  const rows = new Map<string, PageVersion[]>();
  for (const r of res.rows) {
    const k = historyKey(r.team_id, r.tag, r.url_key);
    rows.set(k, [...(rows.get(k) ?? []), toVersion(r)].sort((x, y) => y.id - x.id));
  }
  for (const r of refs) {
    const [first, second] = rows.get(key(r)) ?? [];
    if (!first) continue;
    out.set(key(r), first.sourceKey === r.sourceKey ? { own: first, baseline: second ?? null } : { own: null, baseline: first });
  }
  return out;
}

/** Kept markdowns by hash (a team's page_contents); hashes without content (zero data retention, pruned) are absent. */
export async function pageContents(db: Db, teamId: string, hashes: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(hashes)];
  if (!unique.length) return new Map();
  const res = await db.execute<{ hash: string; markdown: string }>(sql`
    SELECT hash, markdown FROM page_contents WHERE team_id = ${teamId} AND hash = ANY(${sql.param(unique)}::text[])`);
  return new Map(res.rows.map((r) => [r.hash, r.markdown]));
}

/** A new version of a page: its content changed, it appeared, went away (removed) or came back. */
export interface NewVersion {
  kind: 'version';
  teamId: string;
  urlKey: string;
  site: string;
  tag: string;
  /** null under zero data retention. */
  url: string | null;
  sourceKey: string;
  status: 'ok' | 'removed';
  statusCode: number | null;
  markdownHash: string | null;
  /** The normalized markdown to keep (stored once per team and hash); null keeps the hash only. */
  markdown: string | null;
  bodyHash: string | null;
  etag: string | null;
  lastModified: string | null;
  json: unknown;
  jsonKey: string | null;
}

/** The page was found as its latest version has it: that version's sighting moves forward. */
export interface SeenVersion {
  kind: 'seen';
  teamId: string;
  versionId: number;
  sourceKey: string;
  checkStatus: 'ok' | 'removed';
  statusCode: number | null;
  bodyHash: string | null;
  etag: string | null;
  lastModified: string | null;
  /** json mode: the values extracted now, when the version has none under this key yet. */
  json?: unknown;
  jsonKey?: string | null;
}

/**
 * The fetch failed (5xx, block page, timeout): the version stays; its row notes the failure.
 * Its sighting does not move (last_source, last_seen_at): nothing was seen.
 */
export interface FailedSighting {
  kind: 'failed';
  teamId: string;
  versionId: number;
  sourceKey: string;
  error: string;
}

export type VersionWrite = NewVersion | SeenVersion | FailedSighting;

const arr = <T>(xs: T[]) => sql.param(xs);
const jsonText = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(storable(v)));

/**
 * The writes as CTEs (with their leading comma) for the statement that stores the page, each
 * applied only when `gate` (a boolean SQL expression, e.g. `EXISTS (SELECT 1 FROM doc)`) holds,
 * so the version is recorded exactly when the page is. Empty for no writes. At most one write
 * per page and observation (a statement cannot update a row twice).
 */
export function pageVersionCtes(writes: VersionWrite[], gate: SQL = sql`TRUE`): SQL {
  const versions = writes.filter((w): w is NewVersion => w.kind === 'version');
  const seen = writes.filter((w): w is SeenVersion => w.kind === 'seen');
  const failed = writes.filter((w): w is FailedSighting => w.kind === 'failed');
  const parts: SQL[] = [];
  const kept = versions.filter((v) => v.markdown !== null && v.markdownHash !== null);
  if (kept.length) {
    parts.push(sql`pv_contents AS (
      INSERT INTO page_contents (team_id, hash, markdown)
      SELECT t.team, t.hash, t.md FROM unnest(${arr(kept.map((v) => v.teamId))}::uuid[], ${arr(kept.map((v) => v.markdownHash))}::text[],
        ${arr(kept.map((v) => storableText(v.markdown!)))}::text[]) AS t(team, hash, md)
      WHERE ${gate}
      ON CONFLICT DO NOTHING)`);
  }
  if (versions.length) {
    const col = <K extends keyof NewVersion>(k: K) => arr(versions.map((v) => v[k]));
    parts.push(sql`pv_versions AS (
      INSERT INTO page_versions (team_id, url_key, site, tag, url, source_key, last_source, status, status_code, markdown_hash, content_hash,
                                 body_hash, etag, last_modified, json, json_key, check_status)
      SELECT t.team, t.key, t.site, t.tag, t.url, t.src, t.src, t.status, t.code, t.mh, t.ch, t.bh, t.et, t.lm, t.js::jsonb, t.jk, t.status
      FROM unnest(${col('teamId')}::uuid[], ${col('urlKey')}::text[], ${col('site')}::text[], ${col('tag')}::text[], ${col('url')}::text[],
                  ${col('sourceKey')}::text[], ${col('status')}::text[], ${col('statusCode')}::int[], ${col('markdownHash')}::text[],
                  ${arr(versions.map((v) => (v.markdown !== null ? v.markdownHash : null)))}::text[], ${col('bodyHash')}::text[], ${col('etag')}::text[],
                  ${col('lastModified')}::text[], ${arr(versions.map((v) => jsonText(v.json)))}::text[], ${col('jsonKey')}::text[])
        AS t(team, key, site, tag, url, src, status, code, mh, ch, bh, et, lm, js, jk)
      WHERE ${gate}
      ON CONFLICT (team_id, source_key) DO NOTHING)`);
  }
  if (seen.length) {
    const col = <K extends keyof SeenVersion>(k: K) => arr(seen.map((v) => v[k] ?? null));
    // A retried observation (last_source is its own key) leaves the times as its first attempt set them.
    parts.push(sql`pv_seen AS (
      UPDATE page_versions v SET
        prev_seen_at = CASE WHEN v.last_source = t.src THEN v.prev_seen_at ELSE v.last_seen_at END,
        last_seen_at = CASE WHEN v.last_source = t.src THEN v.last_seen_at ELSE now() END,
        last_source = t.src, check_status = t.cs, status_code = coalesce(t.code, v.status_code),
        body_hash = coalesce(t.bh, v.body_hash), etag = coalesce(t.et, v.etag), last_modified = coalesce(t.lm, v.last_modified),
        json = CASE WHEN t.jk IS NULL THEN v.json ELSE t.js::jsonb END, json_key = coalesce(t.jk, v.json_key), last_error = NULL
      FROM unnest(${col('versionId')}::bigint[], ${col('teamId')}::uuid[], ${col('sourceKey')}::text[], ${col('checkStatus')}::text[],
                  ${col('statusCode')}::int[], ${col('bodyHash')}::text[], ${col('etag')}::text[], ${col('lastModified')}::text[],
                  ${arr(seen.map((v) => jsonText(v.json)))}::text[], ${col('jsonKey')}::text[]) AS t(id, team, src, cs, code, bh, et, lm, js, jk)
      WHERE v.id = t.id AND v.team_id = t.team AND ${gate})`);
  }
  if (failed.length) {
    parts.push(sql`pv_failed AS (
      UPDATE page_versions v SET check_status = 'failed', last_error = t.err, failed_at = now()
      FROM unnest(${arr(failed.map((f) => f.versionId))}::bigint[], ${arr(failed.map((f) => f.teamId))}::uuid[],
                  ${arr(failed.map((f) => storableText(f.error).slice(0, 2_000)))}::text[]) AS t(id, team, err)
      WHERE v.id = t.id AND v.team_id = t.team AND ${gate})`);
  }
  return parts.length ? sql`, ${sql.join(parts, sql`, `)}` : sql``;
}

/** The writes on their own, in one statement (a monitor check's pages, tests). */
export async function recordPageVersions(db: Db, writes: VersionWrite[]): Promise<void> {
  if (!writes.length) return;
  await db.execute(sql`WITH nothing AS (SELECT 1)${pageVersionCtes(writes)} SELECT 1`);
}

/**
 * Pages of one site a team tracks under a tag whose latest version has content and a URL
 * (not removed, not zero data retention): what a crawl with change tracking knows from earlier
 * crawls (visibility `hidden` when no page links to them now). At most `limit`, by URL key.
 */
export async function knownSitePages(db: Db, q: { teamId: string; tag: string; site: string; limit: number }): Promise<{ urlKey: string; url: string }[]> {
  const res = await db.execute<{ url_key: string; url: string }>(sql`
    SELECT url_key, url FROM (
      SELECT DISTINCT ON (url_key) url_key, url, status FROM page_versions
      WHERE team_id = ${q.teamId} AND tag = ${q.tag} AND site = ${q.site}
      ORDER BY url_key, id DESC
    ) latest
    WHERE status = 'ok' AND url IS NOT NULL
    ORDER BY url_key LIMIT ${q.limit}`);
  return res.rows.map((r) => ({ urlKey: r.url_key, url: r.url }));
}
