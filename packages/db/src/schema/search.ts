import { sql } from 'drizzle-orm';
import { bigint, boolean, customType, index, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { teams } from './teams';

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });
const regconfig = customType<{ data: string }>({ dataType: () => 'regconfig' });

/**
 * The service's own search index (POST /v2/search without a provider, /v2/map `search`): one row
 * per page and team, whatever stored the page (scrape, crawl, batch), written in the statement
 * that stores the page and replaced by a fresher copy. Zero-data-retention pages never get here.
 *
 * `tsv` and `tsv_rank` are computed by Postgres from the text columns with the page's text-search
 * configuration (`config`, from its language): title weighted A, headings B, description C, body D,
 * so a title match ranks above a body match. They were generated columns until migration 0027;
 * now the statement writing the row computes them (search-index.ts, `searchVectors`), only when
 * the text changed. `body` is the page's text (markdown without markup, capped),
 * kept for snippets.
 */
export const searchPages = pgTable(
  'search_pages',
  {
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    /** The page's identity: host without `www.`, path without trailing slash, sorted query (as crawl URL keys). */
    urlKey: text('url_key').notNull(),
    url: text('url').notNull(),
    /** Lower-cased host without `www.` (domain filters, map). */
    host: text('host').notNull(),
    title: text('title').notNull().default(''),
    description: text('description').notNull().default(''),
    headings: text('headings').notNull().default(''),
    body: text('body').notNull().default(''),
    /** BCP 47 tag from the page (`<html lang>`), null when it had none. */
    language: text('language'),
    config: regconfig('config').notNull().default(sql`'simple'::regconfig`),
    contentType: text('content_type'),
    /** og:image: what the images source answers with. */
    imageUrl: text('image_url'),
    /** article:published_time: articles answer the news source. */
    publishedAt: timestamp('published_at', { withTimezone: true }),
    /** When the indexed copy was fetched (a cache hit's original fetch): the freshest copy wins. */
    storedAt: timestamp('stored_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * Hash of what the vectors are computed from (config, title, description, headings, body): a copy
     * with the same hash only moves `stored_at` (and the other plain columns), so the vectors are not
     * computed and the GIN entries not written again. Null for rows written before it (rewritten once).
     */
    contentHash: text('content_hash'),
    /**
     * Whether an index the operator shares (WDS_SEARCH_SHARED_INDEX) may answer other teams with
     * this row: false when the copy was fetched with the team's own request headers (cookies,
     * authorization), a browser profile or actions (search-index.ts, `sharedIndexAllows`). The
     * team's own searches read every row of its own. False for rows written before migration 0029.
     */
    shareable: boolean('shareable').notNull().default(false),
    /** Everything the page says: what matches. */
    tsv: tsvector('tsv').notNull(),
    /**
     * What ranks: title, headings, description and the body's first 1,000 characters. Small enough
     * to stay in the row (the migration sets STORAGE MAIN; the full vector and the body are TOASTed
     * uncompressed, STORAGE EXTERNAL: migration 0023), so ranking
     * thousands of candidates reads no TOAST; its own GIN index finds the pages that match where it
     * counts first.
     */
    tsvRank: tsvector('tsv_rank').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.teamId, t.urlKey] }),
    index('search_pages_tsv_idx').using('gin', t.tsv),
    index('search_pages_tsv_rank_idx').using('gin', t.tsvRank),
    // url_key last: a probe by key (search-index.ts) that names the host finds one entry here as
    // in the primary key, whichever of the two the planner takes (with statistics that believe
    // the team small, it took this one and read all of the team's pages on the host).
    index('search_pages_team_host_idx').on(t.teamId, t.host, t.urlKey),
  ],
);

/**
 * Progress of the backfill (search-backfill.ts): pages stored before the index existed, or while
 * indexing was off, indexed in batches. One row per source table; each batch moves its keyset
 * cursor in the transaction that indexes it, so a stopped backfill resumes where it stopped.
 */
export const searchBackfill = pgTable('search_backfill', {
  /** `scrapes` (scrape_jobs) or `crawl_pages` (crawl_documents: crawl, batch and extract pages). */
  source: text('source').primaryKey(),
  /** Only pages stored before this are the backfill's: later ones were indexed when stored. */
  cutoff: timestamp('cutoff', { withTimezone: true }).notNull().defaultNow(),
  /** Key of the last row done (the source's key columns, as text); null = from the start. */
  cursor: jsonb('cursor').$type<string[]>(),
  /** Source rows read so far. */
  rows: bigint('rows', { mode: 'number' }).notNull().default(0),
  finishedAt: timestamp('finished_at', { withTimezone: true }),
});
