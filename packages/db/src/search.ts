import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { SEARCH_CONFIGS } from './search-index';

/**
 * The read side of the own search index (`search_pages`, written by search-index.ts).
 *
 * Matching: the query is parsed with `websearch_to_tsquery` (quoted phrases, `or`, `-word`) once per
 * text-search configuration a page can have, since the query's language is not known, and a page
 * matches when its full vector (`tsv`) matches any of those parses (their OR: one indexable
 * condition on the GIN index). A query word can thus match an inflected form in each language.
 *
 * Ranking reads only the small `tsv_rank` (title A, headings B, description C, the body's start D,
 * kept in the row): ts_rank, plus 1 when the whole query matches within the title, so a title match
 * comes before body matches (matches deeper in the body rank by freshness among themselves). Ranking every match of a frequent word
 * would read every matching row; instead the candidates are at most CANDIDATES pages matching in
 * `tsv_rank` (its own GIN index: where a match counts most) and, only when fewer than RERANK pages
 * match there, CANDIDATES more matching anywhere. For queries with fewer matches than that the
 * ranking is exact; for very frequent terms it ranks a bounded subset (every result still matches).
 * Skipping the anywhere scan once RERANK pages match where it counts: that scan built the bitmap of
 * every page matching anywhere (tens of thousands for common words at 100,000 pages, about half
 * of such a query's time), for candidates that rank below those pages (ts_rank reads tsv_rank)
 * and so almost never reach the top 10 (0.6% of top-10 results changed on the bench's queries).
 */
const CANDIDATES = 1000;

/**
 * Whose pages a query reads: the team's own, and with `shared` (an index the operator shares,
 * WDS_SEARCH_SHARED_INDEX) also other teams' rows that may be shared — never a page another team
 * fetched with its own headers, browser profile or actions (search_pages.shareable).
 */
export interface IndexReader {
  teamId: string;
  shared?: boolean;
}

const readable = (r: IndexReader) => (r.shared ? sql`(p.team_id = ${r.teamId}::uuid OR p.shareable)` : sql`p.team_id = ${r.teamId}::uuid`);

export interface IndexQuery extends IndexReader {
  query: string;
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

/**
 * The parses of the query, one per configuration this server has (`qs`), and their OR (`anyq.tq`;
 * empty parses, all stop words, left out). `loose` is the OR without word order (phrases as AND),
 * which the GIN index answers without reading any row.
 */
const parsed = (query: string) => sql`
  qs AS MATERIALIZED (
    SELECT c.oid::regconfig AS cfg, websearch_to_tsquery(c.oid::regconfig, ${query}::text) AS tq
    FROM pg_ts_config c WHERE c.cfgnamespace = 'pg_catalog'::regnamespace AND c.cfgname = ANY(${sql.param([...SEARCH_CONFIGS])}::text[])
  ), anyq AS (
    SELECT tq, regexp_replace(tq::text, '<[0-9]*->', '&', 'g')::tsquery AS loose
    FROM (SELECT string_agg(DISTINCT '(' || tq::text || ')', ' | ')::tsquery AS tq FROM qs WHERE numnode(tq) > 0) a
  )`;

/**
 * The OR of the parses lets a word match its inflections in every language, but it would let an
 * exclusion slip: a page excluded by its own language's parse can match another language's, whose
 * stem of the excluded word differs. A query with an exclusion therefore also has to match the
 * parse of the page's own configuration (the full vector is read for it anyway: NOT is checked
 * on the row, not in the index).
 */
const hasExclusion = (query: string) => /(^|\s)-\S/.test(query);
/**
 * Checked on the best candidates only (`best`), not on every candidate: it reads the row's full,
 * TOASTed vector, and the exclusion's other-language slips it catches are rare, so checking the
 * RERANK best costs ~20 times fewer reads than checking up to 2,000 candidates (exclusion queries'
 * p95 at 100,000 pages: 263 ms before).
 */
const ownParse = sql`EXISTS (SELECT 1 FROM search_pages o WHERE o.team_id = pre.team_id AND o.url_key = pre.url_key AND o.tsv @@ (SELECT qs.tq FROM qs WHERE qs.cfg = o.config))`;

/** What a candidate carries: enough to rank and order it without reading its row again. */
const CAND_COLS = sql`p.team_id, p.url_key, p.stored_at, coalesce(p.published_at, p.stored_at) AS page_time, p.config, p.title, ts_rank(p.tsv_rank, anyq.tq) AS rank`;

/**
 * Candidate pages: matching where it counts (tsv_rank), then anywhere (tsv), each bounded, ranked
 * as they are read; one row per URL (the freshest copy: a shared index holds a page once per team).
 * A phrase is checked against word positions, which means reading the row's full vector: pages
 * anywhere are then first narrowed to PHRASE_SAMPLE pages having all the words (from the index
 * alone), so a phrase of two very common words costs a bounded number of reads; its matches beyond
 * that sample are found only when they are in the title, headings, description or the body's start.
 */
const PHRASE_SAMPLE = 2000;

/** How many of the best candidates are re-ranked (see `best`); also the count of matches in `tsv_rank` beyond which body-only matches are not looked for. */
const RERANK = 100;

const candidates = (conds: SQL[], phrase: boolean, byDate: boolean) => {
  const where = conds.length ? sql` AND ${sql.join(conds, sql` AND `)}` : sql``;
  // Body-only matches are looked for only when fewer than RERANK pages match where it counts (by
  // relevance they rank below those); newest first, a body-only match may be the newest, so always.
  const gate = byDate ? sql`` : sql` AND (SELECT count(*) FROM ranked) < ${RERANK}`;
  const anywhere = phrase
    ? sql`SELECT ${CAND_COLS} FROM (SELECT p.* FROM search_pages p, anyq WHERE p.tsv @@ anyq.loose${where}${gate} LIMIT ${PHRASE_SAMPLE}) p, anyq
          WHERE p.tsv @@ anyq.tq LIMIT ${CANDIDATES}`
    : sql`SELECT ${CAND_COLS} FROM search_pages p, anyq WHERE p.tsv @@ anyq.tq${where}${gate} LIMIT ${CANDIDATES}`;
  return sql`
    ranked AS MATERIALIZED (SELECT ${CAND_COLS} FROM search_pages p, anyq WHERE p.tsv_rank @@ anyq.tq${where} LIMIT ${CANDIDATES}),
    cand AS (
      SELECT * FROM ranked
      UNION ALL
      (${anywhere})
    ), uniq AS (
      SELECT DISTINCT ON (url_key) * FROM cand ORDER BY url_key, stored_at DESC
    )`;
};

/**
 * The best `limit` of the candidates: by rank, then the RERANK best get +1 when the whole query
 * matches within the title (a title match before body matches even where ts_rank is close).
 */
const best = (limit: number, byDate: boolean, exclusion: boolean) => {
  const order = byDate ? sql`page_time DESC, score DESC` : sql`score DESC, page_time DESC`;
  return sql`
    pre AS (SELECT * FROM uniq ORDER BY ${byDate ? sql`page_time DESC, rank DESC` : sql`rank DESC, page_time DESC`} LIMIT ${Math.max(RERANK, limit)}),
    top AS (
      SELECT pre.*, pre.rank + CASE WHEN to_tsvector(pre.config, pre.title) @@ anyq.tq THEN 1 ELSE 0 END AS score
      FROM pre, anyq ${exclusion ? sql`WHERE ${ownParse}` : sql``} ORDER BY ${order} LIMIT ${limit}
    )`;
};

/** websearch_to_tsquery makes a phrase of quoted words (and of words joined by hyphens and other punctuation). */
const hasPhrase = (query: string) => /"|\S[-_.\/@:]\S/.test(query);

export async function searchIndex(db: Db, q: IndexQuery): Promise<IndexHit[]> {
  const conds: SQL[] = [readable(q)];
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

  const res = await db.execute<{
    url: string; title: string; description: string; snippet: string | null; host: string; content_type: string | null;
    image_url: string | null; published_at: string | Date | null; stored_at: string | Date; score: number;
  }>(sql`
    WITH ${parsed(q.query)}, ${candidates(conds, hasPhrase(q.query), !!q.sortByDate)}, ${best(q.limit, !!q.sortByDate, hasExclusion(q.query))}
    SELECT p.url, p.title, p.description, p.host, p.content_type, p.image_url, p.published_at, p.stored_at, top.score,
           CASE WHEN p.body = '' THEN NULL ELSE ts_headline(p.config, left(p.body, 20000), anyq.tq, ${HEADLINE}) END AS snippet
    FROM top JOIN search_pages p ON p.team_id = top.team_id AND p.url_key = top.url_key, anyq
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
  q: IndexReader & { hosts: string[]; subdomainsOf?: string | null; query: string; limit: number },
): Promise<{ url: string; title: string; score: number }[]> {
  const site = q.subdomainsOf ? sql` OR p.host = ${q.subdomainsOf} OR right(p.host, ${q.subdomainsOf.length + 1}) = ${`.${q.subdomainsOf}`}` : sql``;
  const conds = [sql`(p.host = ANY(${sql.param(q.hosts)}::text[])${site})`, readable(q)];
  const res = await db.execute<{ url: string; title: string; score: number }>(sql`
    WITH ${parsed(q.query)}, ${candidates(conds, hasPhrase(q.query), false)}, ${best(q.limit, false, hasExclusion(q.query))}
    SELECT p.url, p.title, top.score FROM top JOIN search_pages p ON p.team_id = top.team_id AND p.url_key = top.url_key
    ORDER BY top.score DESC, p.url_key`);
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
