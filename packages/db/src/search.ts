import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { SEARCH_CONFIGS } from './search-index';

/**
 * The read side of the own search index (`search_pages`, written by search-index.ts).
 *
 * Matching: the query is parsed with `websearch_to_tsquery` (quoted phrases, `or`, `-word`) once per
 * text-search configuration a page can have, since its language is not known; a page matches when
 * its tsvector matches the query parsed with the page's own configuration. The GIN index is used
 * through the OR of all those parses (one indexable condition), then each candidate is checked
 * against its own. Ranking: ts_rank over the weighted vector (title A, headings B, description C,
 * body D) plus a boost when the whole query matches within the title (1) or the title and
 * headings (0.5), so a title match comes before body matches.
 */

export interface IndexQuery {
  query: string;
  /** The team whose pages are searched; null searches every team's (an index the operator shares). */
  teamId: string | null;
  limit: number;
  /** web: every page; news: pages with a publication time; images: pages with an og:image. */
  kind: 'web' | 'news' | 'images';
  /** Only these hosts (and their subdomains). */
  includeHosts?: string[];
  /** Never these hosts (nor their subdomains). */
  excludeHosts?: string[];
  /** Categories: pages on any of these hosts (or subdomains), or PDFs when `pdf`. */
  categories?: { hosts: string[]; pdf: boolean } | null;
  /** Page time (publication, else fetch) within [since, until]. */
  since?: Date | null;
  until?: Date | null;
  /** Newest first instead of by relevance. */
  sortByDate?: boolean;
}

export interface IndexHit {
  url: string;
  title: string;
  /** The page's own description (meta description), '' when it has none. */
  description: string;
  /** The passage of the body that matches best (plain text), '' when the page has no body text. */
  snippet: string;
  host: string;
  contentType: string | null;
  imageUrl: string | null;
  publishedAt: Date | null;
  storedAt: Date;
  score: number;
}

const HEADLINE = 'MaxWords=35, MinWords=12, ShortWord=3, MaxFragments=2, FragmentDelimiter=" … ", StartSel="", StopSel="", HighlightAll=false';

/** `host` is one of `hosts` or a subdomain of one. */
const onHosts = (hosts: string[]) =>
  sql`EXISTS (SELECT 1 FROM unnest(${sql.param(hosts)}::text[]) d WHERE p.host = d OR right(p.host, length(d) + 1) = '.' || d)`;

/** The parses of the query, one per configuration this server has (empty parses, all stop words, left out). */
const parses = (query: string) => sql`
  qs AS (
    SELECT c.oid::regconfig AS cfg, websearch_to_tsquery(c.oid::regconfig, ${query}::text) AS tq
    FROM pg_ts_config c WHERE c.cfgnamespace = 'pg_catalog'::regnamespace AND c.cfgname = ANY(${sql.param([...SEARCH_CONFIGS])}::text[])
  ), anyq AS (
    SELECT string_agg(DISTINCT '(' || tq::text || ')', ' | ')::tsquery AS tq FROM qs WHERE numnode(tq) > 0
  )`;

const score = sql`(ts_rank(p.tsv, qs.tq)
  + CASE WHEN ts_filter(p.tsv, '{a}') @@ qs.tq THEN 1 WHEN ts_filter(p.tsv, '{a,b}') @@ qs.tq THEN 0.5 ELSE 0 END)`;

export async function searchIndex(db: Db, q: IndexQuery): Promise<IndexHit[]> {
  const conds: SQL[] = [sql`p.tsv @@ anyq.tq`, sql`p.tsv @@ qs.tq`];
  if (q.teamId) conds.push(sql`p.team_id = ${q.teamId}::uuid`);
  if (q.includeHosts?.length) conds.push(onHosts(q.includeHosts));
  if (q.excludeHosts?.length) conds.push(sql`NOT ${onHosts(q.excludeHosts)}`);
  if (q.categories) {
    const any: SQL[] = [];
    if (q.categories.hosts.length) any.push(onHosts(q.categories.hosts));
    if (q.categories.pdf) any.push(sql`(p.content_type ILIKE 'application/pdf%' OR p.url_key ~* '\\.pdf($|\\?)')`);
    conds.push(any.length ? sql`(${sql.join(any, sql` OR `)})` : sql`false`);
  }
  if (q.kind === 'news') conds.push(sql`p.published_at IS NOT NULL`);
  if (q.kind === 'images') conds.push(sql`p.image_url IS NOT NULL`);
  const when = sql`coalesce(p.published_at, p.stored_at)`;
  if (q.since) conds.push(sql`${when} >= ${q.since.toISOString()}::timestamptz`);
  if (q.until) conds.push(sql`${when} <= ${q.until.toISOString()}::timestamptz`);
  const order = q.sortByDate ? sql`h.page_time DESC, h.score DESC` : sql`h.score DESC, h.page_time DESC`;

  const matches = sql`
    SELECT p.team_id, p.url_key, p.stored_at, ${when} AS page_time, ${score} AS score, qs.tq
    FROM anyq, search_pages p JOIN qs ON qs.cfg = p.config
    WHERE ${sql.join(conds, sql` AND `)}`;
  // A shared index holds a page once per team that stored it: the freshest copy answers.
  const hits = q.teamId
    ? matches
    : sql`SELECT DISTINCT ON (m.url_key) m.* FROM (${matches}) m ORDER BY m.url_key, m.stored_at DESC`;

  const res = await db.execute<{
    url: string; title: string; description: string; snippet: string | null; host: string; content_type: string | null;
    image_url: string | null; published_at: string | Date | null; stored_at: string | Date; score: number;
  }>(sql`
    WITH ${parses(q.query)}, top AS (
      SELECT h.* FROM (${hits}) h ORDER BY ${order} LIMIT ${q.limit}
    )
    SELECT p.url, p.title, p.description, p.host, p.content_type, p.image_url, p.published_at, p.stored_at, top.score,
           CASE WHEN p.body = '' THEN NULL ELSE ts_headline(p.config, p.body, top.tq, ${HEADLINE}) END AS snippet
    FROM top JOIN search_pages p ON p.team_id = top.team_id AND p.url_key = top.url_key
    ORDER BY ${sql.raw(q.sortByDate ? 'top.page_time DESC, top.score DESC' : 'top.score DESC, top.page_time DESC')}`);
  return res.rows.map((r) => ({
    url: r.url,
    title: r.title,
    description: r.description,
    snippet: (r.snippet ?? '').replace(/\s+/g, ' ').trim(),
    host: r.host,
    contentType: r.content_type,
    imageUrl: r.image_url,
    publishedAt: r.published_at ? new Date(r.published_at) : null,
    storedAt: new Date(r.stored_at),
    score: Number(r.score),
  }));
}

/**
 * Pages of a site in the team's index that match `query`, best first (POST /v2/map `search`):
 * `hosts` exactly, or with `subdomainsOf` also every subdomain of that domain.
 */
export async function searchSitePages(
  db: Db,
  q: { teamId: string | null; hosts: string[]; subdomainsOf?: string | null; query: string; limit: number },
): Promise<{ url: string; title: string; score: number }[]> {
  const site = q.subdomainsOf ? sql` OR p.host = ${q.subdomainsOf} OR right(p.host, ${q.subdomainsOf.length + 1}) = ${`.${q.subdomainsOf}`}` : sql``;
  const team = q.teamId ? sql`AND p.team_id = ${q.teamId}::uuid` : sql``;
  const res = await db.execute<{ url: string; title: string; score: number }>(sql`
    WITH ${parses(q.query)}
    SELECT p.url, p.title, ${score} AS score
    FROM anyq, search_pages p JOIN qs ON qs.cfg = p.config
    WHERE p.tsv @@ anyq.tq AND p.tsv @@ qs.tq ${team} AND (p.host = ANY(${sql.param(q.hosts)}::text[])${site})
    ORDER BY score DESC, p.url_key LIMIT ${q.limit}`);
  // A shared index may hold a page once per team.
  const seen = new Set<string>();
  return res.rows.filter((r) => !seen.has(r.url) && seen.add(r.url)).map((r) => ({ url: r.url, title: r.title, score: Number(r.score) }));
}

/** Rows and bytes of the index (table, its TOAST and indexes): the search bench reports size per page. */
export async function searchIndexSize(db: Db): Promise<{ pages: number; bytes: number; tableBytes: number; indexBytes: number }> {
  const res = await db.execute<{ pages: string; total: string; idx: string }>(sql`
    SELECT (SELECT count(*) FROM search_pages) AS pages, pg_total_relation_size('search_pages') AS total, pg_indexes_size('search_pages') AS idx`);
  const r = res.rows[0]!;
  return { pages: Number(r.pages), bytes: Number(r.total), tableBytes: Number(r.total) - Number(r.idx), indexBytes: Number(r.idx) };
}
