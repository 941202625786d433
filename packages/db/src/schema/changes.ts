import { bigserial, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { teams } from './teams';

/**
 * Change tracking (the `changeTracking` format, monitors): what a team last saw of a page, per
 * (team, URL key, tag). See src/page-versions.ts and the package README for the rules.
 *
 * `page_contents` holds each markdown once per team, addressed by the hash of its normalized
 * text: every version with that text references the same row. Zero-data-retention versions keep
 * the hash and no content row.
 */
export const pageContents = pgTable(
  'page_contents',
  {
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    /** sha256 (hex) of the normalized markdown (packages/changes normalizeMarkdown). */
    hash: text('hash').notNull(),
    markdown: text('markdown').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.hash] })],
);

/**
 * One row per distinct version of a page (its content changed, or it went away / came back).
 * An observation that finds the page unchanged writes no row: it moves the latest row's
 * `last_seen_at` (and remembers itself in `last_source`, so a retried observation is recognised).
 */
export const pageVersions = pgTable(
  'page_versions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    urlKey: text('url_key').notNull(),
    /** The request's `tag`; '' when none. Each tag is a separate history. */
    tag: text('tag').notNull().default(''),
    /** The URL key's host part (host without `www.`, with a non-default port): a crawl finds its site's known pages by it. */
    site: text('site').notNull(),
    /** The page's URL; null under zero data retention. */
    url: text('url'),
    /** `ok` (a page with content) or `removed` (it answered 404/410). */
    status: text('status').$type<'ok' | 'removed'>().notNull(),
    statusCode: integer('status_code'),
    /** Hash of the normalized markdown (null for removed). */
    markdownHash: text('markdown_hash'),
    /** Same hash when the markdown is kept in page_contents; null under zero data retention. */
    contentHash: text('content_hash'),
    /** sha256 of the fetched body, for the cheap "identical bytes" check before any conversion. */
    bodyHash: text('body_hash'),
    etag: text('etag'),
    lastModified: text('last_modified'),
    /** json mode: the values extracted from this version, with the key of the schema + prompt used. */
    json: jsonb('json'),
    jsonKey: text('json_key'),
    /** The observation (scrape, crawl page, monitor check page) that created the row. */
    sourceKey: text('source_key').notNull(),
    /** The latest observation that saw this version, and when; `prev_seen_at` is the one before. */
    lastSource: text('last_source').notNull(),
    firstSeenAt: timestamp('first_seen_at', { withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
    prevSeenAt: timestamp('prev_seen_at', { withTimezone: true }),
    /** The last observation's outcome: a failed fetch (5xx, block page, timeout) never replaces the version. */
    checkStatus: text('check_status').$type<'ok' | 'removed' | 'failed'>().notNull().default('ok'),
    lastError: text('last_error'),
    failedAt: timestamp('failed_at', { withTimezone: true }),
  },
  // No index on the seen times: an unchanged observation updates only unindexed columns, so its
  // update can stay on the row's page (HOT) and writes no index entry.
  (t) => [
    uniqueIndex('page_versions_source_idx').on(t.teamId, t.sourceKey),
    index('page_versions_page_idx').on(t.teamId, t.tag, t.urlKey, t.id),
    index('page_versions_site_idx').on(t.teamId, t.tag, t.site),
    /** Pruning finds contents no version references any more. */
    index('page_versions_content_idx').on(t.teamId, t.contentHash),
    foreignKey({ columns: [t.teamId, t.contentHash], foreignColumns: [pageContents.teamId, pageContents.hash], name: 'page_versions_content_fk' }),
  ],
);
