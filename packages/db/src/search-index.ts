import { createHash } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { storableText } from './text';

/**
 * The write side of the own search index (`search_pages`). Pages are indexed by the statement
 * that stores them (finishPage, completeScrapeJob, insertCompletedScrape) through
 * `searchIndexCte`, so a page is searchable exactly when it is stored; the writing statement has
 * Postgres compute the vectors (`searchVectors`) when the text changed. What is indexed is derived
 * here from the stored document.
 */

/** BCP 47 primary language subtag → Postgres text-search configuration. */
const CONFIG_OF_LANGUAGE: Record<string, string> = {
  ar: 'arabic', hy: 'armenian', eu: 'basque', ca: 'catalan', da: 'danish', nl: 'dutch', en: 'english', et: 'estonian',
  fi: 'finnish', fr: 'french', de: 'german', el: 'greek', hi: 'hindi', hu: 'hungarian', id: 'indonesian', ga: 'irish',
  it: 'italian', lt: 'lithuanian', ne: 'nepali', no: 'norwegian', nb: 'norwegian', nn: 'norwegian', pt: 'portuguese',
  ro: 'romanian', ru: 'russian', sr: 'serbian', es: 'spanish', sv: 'swedish', ta: 'tamil', tr: 'turkish', yi: 'yiddish',
};

/**
 * Every configuration a page can be indexed with. A query is matched against each (see search.ts):
 * the query's language is unknown, the page's is not. Configurations this server lacks (estonian
 * before Postgres 17, armenian… before 16) fall back to `simple` when writing and are skipped when reading.
 */
export const SEARCH_CONFIGS: readonly string[] = [...new Set(Object.values(CONFIG_OF_LANGUAGE)), 'simple'];

/** The configuration for a page's language (`en-US`, `de`, `pt_BR`); `simple` (no stemming, no stop words) when unknown. */
export function searchConfigFor(language: unknown): string {
  const tag = typeof language === 'string' ? language : Array.isArray(language) && typeof language[0] === 'string' ? language[0] : '';
  const primary = tag.trim().toLowerCase().split(/[-_]/)[0] ?? '';
  return CONFIG_OF_LANGUAGE[primary] ?? 'simple';
}

/** Longest body text indexed per page: to_tsvector's cost and the tsvector's size grow with it (1 MB hard limit). */
export const MAX_INDEXED_CHARS = 100_000;

export interface SearchEntry {
  urlKey: string;
  url: string;
  host: string;
  title: string;
  description: string;
  headings: string;
  body: string;
  language: string | null;
  config: string;
  contentType: string | null;
  imageUrl: string | null;
  /** ISO time. */
  publishedAt: string | null;
  /** ISO time of the fetch that produced the copy (a cache hit's original fetch); null = now. */
  storedAt: string | null;
  /** Hash of what the vectors are computed from (config, title, description, headings, body). */
  contentHash: string;
}

/**
 * The index's identity of a page: the crawl frontier's rule (scheme and `www.` ignored, host lower-cased,
 * default port, fragment and trailing slash dropped, query parameters sorted), so a page crawled twice,
 * scraped and crawled, or reached through a redirect is one row.
 */
export function searchUrlKey(u: URL): string {
  const host = u.hostname.toLowerCase().replace(/^www\./, '');
  const defaultPort = u.port === '' || (u.protocol === 'http:' && u.port === '80') || (u.protocol === 'https:' && u.port === '443');
  let path = u.pathname || '/';
  if (path.length > 1 && path.endsWith('/')) path = path.replace(/\/+$/, '') || '/';
  let query = '';
  if (u.search.length > 1) {
    const params = [...u.searchParams.entries()].sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1));
    query = `?${new URLSearchParams(params).toString()}`;
  }
  return `${host}${defaultPort ? '' : `:${u.port}`}${path}${query}`;
}

const first = (v: unknown): string | null => (typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : null);
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * Markdown → the text that is indexed: headings apart (weighted above the body), links, images and
 * markup reduced to their words, and each distinct line of the body once. It runs on the worker's
 * main thread for every stored page, so it is a few passes of global expressions over the whole
 * text, each tried only when its marker occurs (bench/search-cost.ts times it).
 *
 * A line (a paragraph, list item or table row) that repeats an earlier one is left out: it adds no
 * word to match, and a phrase within it matches in its first copy, so only a "phrase" spanning two
 * paragraphs can be lost. What it saves is Postgres parsing the same text again (to_tsvector costs
 * ~0.1 ms per 1,000 characters on this host, most of indexing's cost) and storing it again.
 */
export function markdownToIndexText(markdown: string): { headings: string; body: string } {
  // Text is never longer than its markdown, and link-heavy markdown is a few times its text.
  const md = markdown.length > 3 * MAX_INDEXED_CHARS ? markdown.slice(0, 3 * MAX_INDEXED_CHARS) : markdown;
  const headings: string[] = [];
  const rest = md.includes('#') ? md.replace(HEADING, (_, text: string) => (headings.push(text), '')) : md;
  // Each rewrite of `plain` stays within a line, so a line's later exact copies can be dropped
  // before it as well as after: the result is the same, and text repeated line for line (footers,
  // cards, the crawl bench's pages) is rewritten once instead of once per copy.
  return { headings: plain(headings.join('\n')).slice(0, 10_000), body: uniqueLines(plain(uniqueLines(rest))).slice(0, MAX_INDEXED_CHARS) };
}

/** `[^\S\n]`: white space within a line; every rewrite stays within one line, as markdown's syntax does. */
const HEADING = /^[^\S\n]{0,3}#{1,6}[^\S\n]+(.*?)[^\S\n]*#*[^\S\n]*$/gm;
const IMAGE = /!\[([^\]\n]*)\]\([^)\n]*\)/g;
const LINK = /\[([^\]\n]*)\]\([^)\n]*\)/g;
const TAG = /<[^>\n]{1,200}>/g;
/** Quotes and list marks at a line's start, rules. */
const LINE_MARKUP = /^[^\S\n]*(?:(?:>[^\S\n]*)+|(?:[-*+]|\d+[.)])[^\S\n]+|-{3,}[^\S\n]*$)/gm;
/** Emphasis, code, strike-through and table marks anywhere. */
const INLINE_MARKUP = /[*`~|]+/g;
/**
 * Runs of spaces and other line-internal white space (V8 runs `[^\S\n]+` over a page ~5× slower;
 * rarer Unicode spaces are left as they are: the text-search parser and the snippets treat them as
 * spaces anyway).
 */
const SPACES = /[ \t\r\f\v\u00a0]{2,}|[\t\r\f\v\u00a0]/g;

/** Links and images to their text, tags and markup to spaces; lines trimmed, runs of spaces and empty lines dropped. */
function plain(text: string): string {
  let t = text;
  if (t.includes('](')) t = t.replace(IMAGE, '$1').replace(LINK, '$1');
  if (t.includes('<')) t = t.replace(TAG, ' ');
  return t.replace(LINE_MARKUP, ' ').replace(INLINE_MARKUP, ' ').replace(SPACES, ' ').replace(/ ?\n\s*/g, '\n').trim();
}

/** The text with each line's later copies left out. */
function uniqueLines(text: string): string {
  const lines = text.split('\n');
  const seen = new Set<string>();
  const out = lines.filter((line) => !seen.has(line) && !!seen.add(line));
  return out.length === lines.length ? text : out.join('\n');
}

/** Which index row a stored document would write, or null when it is not indexed (see searchEntryOf). */
export function searchTargetOf(document: unknown): { url: URL; urlKey: string; storedAt: string | null } | null {
  if (!document || typeof document !== 'object') return null;
  const m = (document as { metadata?: Record<string, unknown> }).metadata ?? {};
  const status = typeof m.statusCode === 'number' ? m.statusCode : 200;
  if (status >= 400) return null;
  const raw = first(m.url) ?? first(m.sourceURL);
  let u: URL;
  try {
    u = new URL(raw ?? '');
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  u.hash = '';
  const cachedAt = m.cacheState === 'hit' ? first(m.cachedAt) : null;
  return { url: u, urlKey: searchUrlKey(u), storedAt: cachedAt && !Number.isNaN(Date.parse(cachedAt)) ? new Date(cachedAt).toISOString() : null };
}

/**
 * What the index keeps of a stored document, or null when it is not indexed: pages the target
 * answered with an error (4xx/5xx), and documents without a URL.
 */
export function searchEntryOf(document: unknown): SearchEntry | null {
  const target = searchTargetOf(document);
  if (!target) return null;
  const { url: u } = target;
  const d = document as { markdown?: unknown; metadata?: Record<string, unknown> };
  const m = d.metadata ?? {};
  const { headings, body } = typeof d.markdown === 'string' ? markdownToIndexText(d.markdown) : { headings: '', body: '' };
  const language = first(m.language);
  const published = first(m.publishedTime);
  const publishedAt = published && !Number.isNaN(Date.parse(published)) ? new Date(published).toISOString() : null;
  const t = (s: string | null, max: number) => storableText(oneLine(s ?? '').slice(0, max));
  const text = {
    title: t(first(m.title) ?? first(m.ogTitle), 1_000),
    description: t(first(m.description) ?? first(m.ogDescription), 2_000),
    headings: storableText(headings),
    body: storableText(body),
    config: searchConfigFor(language),
  };
  return {
    urlKey: target.urlKey,
    url: u.href,
    host: u.hostname.toLowerCase().replace(/^www\./, ''),
    ...text,
    language: language ? language.slice(0, 35) : null,
    contentType: first(m.contentType),
    imageUrl: first(m.ogImage),
    publishedAt,
    storedAt: target.storedAt,
    contentHash: createHash('md5').update(`${text.config}\0${text.title}\0${text.description}\0${text.headings}\0`).update(text.body).digest('hex'),
  };
}

/**
 * Whether a page fetched with request `options` (a jsonb expression: a scrape's options, or a
 * crawl/batch job's, whose page options sit at the top or under `scrapeOptions`) may be shown to
 * other teams by an index the operator shares (WDS_SEARCH_SHARED_INDEX). Not when the request
 * sent the team's own `headers` (cookies, authorization: any, even empty), loaded a browser
 * `profile` (its cookies and storage), or ran `actions` (a click or a typed password may log in):
 * such a copy may show what only that team can see. It still enters the team's own index. One
 * rule for every statement that indexes a page (search_pages.shareable), read from the options
 * the job stored, so no writer can forget it.
 */
export function sharedIndexAllows(options: SQL): SQL {
  const personal = (o: SQL) => sql`(jsonb_typeof(${o} -> 'headers') = 'object' OR jsonb_typeof(${o} -> 'profile') = 'object'
    OR (jsonb_typeof(${o} -> 'actions') = 'array' AND ${o} -> 'actions' <> '[]'::jsonb))`;
  return sql`(NOT coalesce(${personal(sql`(${options})`)} OR ${personal(sql`((${options}) -> 'scrapeOptions')`)}, false))`;
}

let indexing = true;

/**
 * Turns indexing of stored pages on or off for this process (WDS_SEARCH_INDEX, read by each app's
 * env.ts; the search bench compares crawls both ways). Off, pages are stored exactly as before.
 */
export function setSearchIndexing(on: boolean): void {
  indexing = on;
}

export function searchIndexingEnabled(): boolean {
  return indexing;
}

/**
 * CTEs (with their leading comma) for the statement storing a page: index `document` for the team
 * that `source` yields (a query returning `team_id` and `shareable`, see sharedIndexAllows; no row =
 * not indexed, e.g. the page was not stored by this call, or the job keeps no data). Empty when indexing is off or the document is not
 * indexable, leaving the statement as it was.
 *
 * One upsert writes the row (searchUpsert): a new page is inserted; an indexed one is replaced by
 * a copy at least as fresh, and when the row already holds the same text (`content_hash`) only its
 * plain columns move (stored_at, URL, dates), keeping its text, vectors and GIN entries.
 */
export function searchIndexCte(source: SQL, document: unknown): SQL {
  if (!indexing) return sql``;
  const e = searchEntryOf(document);
  if (!e) return sql``;
  // The entry once (its text is sent once), joined to the team: every CTE below reads it.
  const entry = sql`SELECT s.team_id, ${e.urlKey}::text AS url_key, ${e.url}::text AS url, ${e.host}::text AS host, ${e.title}::text AS title,
      ${e.description}::text AS description, ${e.headings}::text AS headings, ${e.body}::text AS body, ${e.language}::text AS language,
      ${configOf(sql`${e.config}::text`)} AS config, ${e.contentType}::text AS content_type, ${e.imageUrl}::text AS image_url,
      ${e.publishedAt}::timestamptz AS published_at, coalesce(${e.storedAt}::timestamptz, now()) AS stored_at, ${e.contentHash}::text AS content_hash,
      s.shareable
    FROM (${source}) s`;
  return searchWriteCtes(entry);
}

/**
 * searchIndexCte's write for the rows of `entry` (a query with search_pages' columns, `team_id` …
 * `content_hash`, `shareable`, at most one row per team and URL key), with its leading comma: the CTEs
 * search_entry and search_index.
 */
function searchWriteCtes(entry: SQL): SQL {
  // Materialized: read once per row (`config` is a subquery, inlined it ran for each use).
  return sql`, search_entry AS MATERIALIZED (${entry}),
    search_index AS (${searchUpsert(sql`search_entry`)})`;
}

/** The columns of searchIndexBatchCte's rows, one array each: the page's frontier key, then its SearchEntry. */
const SEARCH_BATCH_COLUMNS = ['frontierKey', 'urlKey', 'url', 'host', 'title', 'description', 'headings', 'body', 'language', 'config', 'contentType', 'imageUrl', 'publishedAt', 'storedAt', 'contentHash'] as const;
export type SearchBatchColumn = (typeof SEARCH_BATCH_COLUMNS)[number];

/** The index rows of stored pages (by frontier key), one array per column; no rows when indexing is off. */
export function searchBatchColumns(pages: { key: string; document: unknown }[]): Record<SearchBatchColumn, unknown[]> {
  const list = indexing
    ? pages.flatMap((p) => {
        const e = searchEntryOf(p.document);
        return e ? [{ ...e, frontierKey: p.key }] : [];
      })
    : [];
  return Object.fromEntries(SEARCH_BATCH_COLUMNS.map((c) => [c, list.map((e) => e[c])])) as Record<SearchBatchColumn, unknown[]>;
}

/**
 * searchIndexCte for several pages of one job (finishPages), with its leading comma: the rows of
 * searchBatchColumns (given through `col`: values or a prepared statement's placeholders); a page
 * is indexed when the statement's `doc` CTE (the documents it stored: `url_key`) returns its key
 * and `team` (a query returning `team_id` and `shareable`) a row. Pages sharing an index key (http/https, `www.`)
 * write the freshest copy; new rows go in in key order. An unchanged page (same content hash)
 * moves only its plain columns, as with one page.
 */
export function searchIndexBatchCte(team: SQL, col: (c: SearchBatchColumn) => SQL): SQL {
  return searchWriteCtes(sql`SELECT DISTINCT ON (t.k) s.team_id, t.k AS url_key, t.u AS url, t.h AS host, t.ti AS title, t.de AS description, t.he AS headings,
      t.bo AS body, t.la AS language, ${configOf(sql`t.co`)} AS config, t.ct AS content_type, t.im AS image_url, t.pu::timestamptz AS published_at,
      coalesce(t.st::timestamptz, now()) AS stored_at, t.ch AS content_hash, s.shareable
    FROM unnest(${sql.join(SEARCH_BATCH_COLUMNS.map((c) => sql`${col(c)}::text[]`), sql`, `)})
      AS t(fk, k, u, h, ti, de, he, bo, la, co, ct, im, pu, st, ch)
    JOIN doc ON doc.url_key = t.fk, (${team}) s
    ORDER BY t.k, t.st DESC NULLS FIRST`);
}

/** The configuration named, or `simple` when this server does not have it. */
const configOf = (name: SQL) => sql`coalesce((SELECT c.oid FROM pg_ts_config c WHERE c.cfgname = ${name} AND c.cfgnamespace = 'pg_catalog'::regnamespace), 'simple'::regconfig::oid)::regconfig`;

/**
 * The vectors of a row's text (`r`: a row with config, title, headings, description and body):
 * `tsv` matches, `tsv_rank` ranks (the body's first 1,000 characters). Title weighs A, headings B,
 * description C, body D.
 */
function searchVectors(r: SQL): { tsv: SQL; rank: SQL } {
  const head = sql`setweight(to_tsvector(${r}.config, ${r}.title), 'A') || setweight(to_tsvector(${r}.config, ${r}.headings), 'B') || setweight(to_tsvector(${r}.config, ${r}.description), 'C')`;
  return { tsv: sql`${head} || setweight(to_tsvector(${r}.config, ${r}.body), 'D')`, rank: sql`${head} || setweight(to_tsvector(${r}.config, left(${r}.body, 1000)), 'D')` };
}

/**
 * The statement writing index rows from `rows` (a relation with search_pages' columns `team_id` …
 * `content_hash`, `shareable`, one row per team and URL key): insert, or replace a row with a copy at least as
 * fresh, so a late retry never brings back an older page. A copy of the same text (same
 * `content_hash`) moves only the plain columns; the row's text, vectors and GIN entries stay.
 *
 * An upsert, so every existing row is found through its conflict on the primary key. Updates
 * joined to search_pages were planned from the table's statistics, and on a table grown since its
 * last analyze (a fresh install's first crawls, before autovacuum's) the planner read all of the
 * team's rows per statement: O(pages) per crawled page group. The vectors are plain columns
 * (generated ones are computed for every proposed row, then again for the update): the proposed
 * row carries them unless a probe by key finds the team's row with this text, and then carries
 * empty ones (NOT NULL is checked before the conflict), which the update computes from the
 * proposal if that row's text changed meanwhile. Rows leave the index only with their team, whose
 * foreign key then refuses the proposed row, so empty stand-ins are never stored.
 */
function searchUpsert(rows: SQL): SQL {
  const v = searchVectors(sql`s`);
  const ex = searchVectors(sql`excluded`);
  const same = sql`p.content_hash IS NOT DISTINCT FROM excluded.content_hash`;
  const keep = (c: string) => sql`${sql.raw(c)} = CASE WHEN ${same} THEN p.${sql.raw(c)} ELSE excluded.${sql.raw(c)} END`;
  return sql`INSERT INTO search_pages AS p (team_id, url_key, url, host, title, description, headings, body, language, config, content_type, image_url, published_at, stored_at, content_hash, shareable, tsv, tsv_rank)
    SELECT s.team_id, s.url_key, s.url, s.host, s.title, s.description, s.headings, s.body, s.language, s.config, s.content_type, s.image_url,
      s.published_at, s.stored_at, s.content_hash, s.shareable, CASE WHEN k.unchanged THEN ''::tsvector ELSE ${v.tsv} END, CASE WHEN k.unchanged THEN ''::tsvector ELSE ${v.rank} END
    FROM ${rows} s,
      -- A probe by key: the host (a part of the URL key) lets either index that the planner may
      -- take find the row directly. OFFSET 0 keeps it per row (hashed, it would read the whole
      -- table), and once per row (pulled up, it would run for each use of k.unchanged).
      LATERAL (SELECT EXISTS (SELECT 1 FROM search_pages q WHERE q.team_id = s.team_id AND q.host = s.host AND q.url_key = s.url_key
        AND q.content_hash = s.content_hash OFFSET 0) AS unchanged OFFSET 0) k
    ORDER BY s.team_id, s.url_key
    ON CONFLICT (team_id, url_key) DO UPDATE SET url = excluded.url, host = excluded.host, language = excluded.language, content_type = excluded.content_type,
      image_url = excluded.image_url, published_at = excluded.published_at, stored_at = excluded.stored_at, content_hash = excluded.content_hash,
      -- The copy the row holds from now on decides (a fresher plain fetch makes it shareable, a fresher personal one not).
      shareable = excluded.shareable,
      ${keep('title')}, ${keep('description')}, ${keep('headings')}, ${keep('body')}, ${keep('config')},
      -- An empty proposal may be a stand-in (above): computed again, which costs nothing for empty text.
      tsv = CASE WHEN ${same} THEN p.tsv WHEN excluded.tsv = ''::tsvector THEN ${ex.tsv} ELSE excluded.tsv END,
      tsv_rank = CASE WHEN ${same} THEN p.tsv_rank WHEN excluded.tsv_rank = ''::tsvector THEN ${ex.rank} ELSE excluded.tsv_rank END
    WHERE p.stored_at < excluded.stored_at OR (NOT ${same} AND p.stored_at <= excluded.stored_at)`;
}

/**
 * Indexes documents of a team directly (benchmarks, tests): the same rows the storing statements
 * write. Returns how many rows were written.
 */
export async function indexDocuments(db: Db, teamId: string, documents: unknown[]): Promise<number> {
  return indexStoredPages(db, documents.map((document) => ({ teamId, document })));
}

/** A stored page to index: its team, its document, and when it was stored (default: its cache fetch time, else now). */
export interface StoredPage {
  teamId: string;
  document: unknown;
  storedAt?: Date | null;
  /** A shared index may show it to other teams (sharedIndexAllows of its request's options); default false. */
  shareable?: boolean;
}

/**
 * Indexes stored pages of any teams in one statement (the backfill, indexDocuments). Per team and
 * URL the freshest copy of the list is written (one statement cannot touch a row twice), and it
 * replaces an indexed row only when at least as fresh. Returns how many rows were written.
 */
export async function indexStoredPages(db: Pick<Db, 'execute'>, pages: StoredPage[]): Promise<number> {
  const byKey = new Map<string, SearchEntry & { teamId: string; shareable: boolean }>();
  for (const p of pages) {
    const e = searchEntryOf(p.document);
    if (!e) continue;
    const row = { ...e, teamId: p.teamId, storedAt: e.storedAt ?? p.storedAt?.toISOString() ?? null, shareable: p.shareable ?? false };
    const k = `${p.teamId} ${e.urlKey}`;
    const prior = byKey.get(k);
    if (!prior || (prior.storedAt ?? '') <= (row.storedAt ?? '')) byKey.set(k, row);
  }
  const list = [...byKey.values()];
  if (!list.length) return 0;
  const col = <K extends keyof (SearchEntry & { teamId: string; shareable: boolean })>(k: K) => sql.param(list.map((e) => e[k]));
  const res = await db.execute(
    searchUpsert(sql`(SELECT t.tm::uuid AS team_id, t.k AS url_key, t.u AS url, t.h AS host, t.ti AS title, t.de AS description, t.he AS headings, t.bo AS body,
        t.la AS language, ${configOf(sql`t.co`)} AS config, t.ct AS content_type, t.im AS image_url, t.pu::timestamptz AS published_at,
        coalesce(t.st::timestamptz, now()) AS stored_at, t.ch AS content_hash, t.sh AS shareable
      FROM unnest(${col('teamId')}::text[], ${col('urlKey')}::text[], ${col('url')}::text[], ${col('host')}::text[], ${col('title')}::text[], ${col('description')}::text[],
                  ${col('headings')}::text[], ${col('body')}::text[], ${col('language')}::text[], ${col('config')}::text[], ${col('contentType')}::text[],
                  ${col('imageUrl')}::text[], ${col('publishedAt')}::text[], ${col('storedAt')}::text[], ${col('contentHash')}::text[], ${col('shareable')}::boolean[])
        AS t(tm, k, u, h, ti, de, he, bo, la, co, ct, im, pu, st, ch, sh))`),
  );
  return res.rowCount ?? 0;
}
