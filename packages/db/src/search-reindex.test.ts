import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { ensureTeam } from './index';
import { completeScrapeJob, insertScrapeJob } from './scrapes';
import { insertCrawlJob } from './crawl-jobs';
import { claimUrls, enqueueUrls } from './frontier';
import { finishPages } from './crawl-pages-batch';
import { searchIndex } from './search';

// A page stored again (re-crawl, monitor check, new scrape) updates the team's index row in place:
// with the same text only its plain columns move (no vector computed again), with other text the
// row is rewritten; a copy older than the row changes nothing either way.
let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 5 });
  await migrateDb(h);
});
after(() => h?.close());

const doc = (url: string, text: string, o: { title?: string; cachedAt?: string; published?: string } = {}) => ({
  markdown: `# Heading\n\n${text}`,
  metadata: {
    url,
    sourceURL: url,
    statusCode: 200,
    title: o.title ?? 'Reindex page',
    language: 'en',
    ...(o.published ? { publishedTime: o.published } : {}),
    ...(o.cachedAt ? { cacheState: 'hit', cachedAt: o.cachedAt } : {}),
  },
});

async function store(teamId: string, document: ReturnType<typeof doc>) {
  const id = randomUUID();
  await insertScrapeJob(h.db, { id, teamId, url: document.metadata.url, options: {} });
  await completeScrapeJob(h.db, id, document, 1);
}

type Row = {
  title: string;
  body: string;
  stored_at: Date;
  published_at: Date | null;
  content_hash: string | null;
};
const rowOf = async (teamId: string) => {
  const rows = (await h.db.execute<Row>(sql`SELECT title, body, stored_at, published_at, content_hash FROM search_pages WHERE team_id = ${teamId}`)).rows;
  assert.equal(rows.length, 1, 'one row per team and page');
  return rows[0]!;
};
/** Marks a row's title and vectors (as if written from other text), leaving its hash. */
const MARK = sql`title = 'Marked zanzibarite', tsv = tsv || to_tsvector('simple', 'zanzibarite'), tsv_rank = tsv_rank || to_tsvector('simple', 'zanzibarite')`;
const find = async (teamId: string, query: string) => (await searchIndex(h.db, { query, teamId, limit: 10, kind: 'web' })).length;

test('the same text stored again moves stored_at and the plain columns, and leaves the vectors as they were', async () => {
  const team = await ensureTeam(h.db, `reindex-same-${randomUUID()}`);
  const url = `https://reindex.test/${randomUUID()}`;
  await store(team, doc(url, 'Kettles boil water quickly.', { cachedAt: '2026-01-01T00:00:00.000Z' }));
  const first = await rowOf(team);
  assert.match(first.content_hash ?? '', /^[0-9a-f]{32}$/);
  // Mark the row's title and vectors (as if written from other text) without touching its hash:
  // a store that rewrote the text columns would bring the page's own title back.
  await h.db.execute(sql`UPDATE search_pages SET ${MARK} WHERE team_id = ${team}`);
  assert.equal(await find(team, 'zanzibarite'), 1);

  await store(team, doc(url, 'Kettles boil water quickly.', { cachedAt: '2026-02-01T00:00:00.000Z', published: '2026-01-15T00:00:00.000Z' }));
  const again = await rowOf(team);
  assert.equal(again.title, 'Marked zanzibarite', 'the text columns (and so the vectors) were not written again');
  assert.equal(await find(team, 'zanzibarite'), 1);
  assert.equal(new Date(again.stored_at).toISOString(), '2026-02-01T00:00:00.000Z', 'stored_at moves to the fresher copy');
  assert.equal(new Date(again.published_at!).toISOString(), '2026-01-15T00:00:00.000Z', 'plain columns follow the copy');

  // An older copy of the same text: nothing moves back.
  await store(team, doc(url, 'Kettles boil water quickly.', { cachedAt: '2025-12-01T00:00:00.000Z' }));
  assert.deepEqual(await rowOf(team), again);
});

test('other text rewrites the row (new words match, old ones no longer); an older copy of other text does not', async () => {
  const team = await ensureTeam(h.db, `reindex-changed-${randomUUID()}`);
  const url = `https://reindex.test/${randomUUID()}`;
  await store(team, doc(url, 'The quokkas graze at dusk.'));
  const first = await rowOf(team);
  assert.equal(await find(team, 'quokkas'), 1);

  await store(team, doc(url, 'The wombats burrow at night.'));
  const changed = await rowOf(team);
  assert.match(changed.body, /wombats burrow/);
  assert.notEqual(changed.content_hash, first.content_hash);
  assert.ok(new Date(changed.stored_at) >= new Date(first.stored_at));
  assert.equal(await find(team, 'wombats'), 1);
  assert.equal(await find(team, 'quokkas'), 0);

  await store(team, doc(url, 'The platypus swims.', { cachedAt: '2020-01-01T00:00:00.000Z' }));
  assert.deepEqual(await rowOf(team), changed, 'a stale copy never replaces the row');
  assert.equal(await find(team, 'platypus'), 0);
});

test('a row written before content hashes (null) is rewritten by its next copy, which sets the hash', async () => {
  const team = await ensureTeam(h.db, `reindex-legacy-${randomUUID()}`);
  const url = `https://reindex.test/${randomUUID()}`;
  await store(team, doc(url, 'Legacy lemurs leap.'));
  await h.db.execute(sql`UPDATE search_pages SET content_hash = NULL, title = 'Old title' WHERE team_id = ${team}`);
  await store(team, doc(url, 'Legacy lemurs leap.'));
  const row = await rowOf(team);
  assert.equal(row.title, 'Reindex page');
  assert.match(row.content_hash ?? '', /^[0-9a-f]{32}$/);
});

test('pages stored in groups (finishPages, a crawl\'s fetch batches) skip unchanged text and rewrite changed text the same way', async () => {
  const team = await ensureTeam(h.db, `reindex-batch-${randomUUID()}`);
  const url = `https://reindex.test/${randomUUID()}`;
  /** A new crawl of the team stores the page (and a sibling) in one group. */
  const crawl = async (text: string, cachedAt: string) => {
    const jobId = randomUUID();
    await insertCrawlJob(h.db, { id: jobId, teamId: team, kind: 'crawl', url, options: {}, pageLimit: 10, zeroDataRetention: false });
    const sibling = `${url}/sibling`;
    await enqueueUrls(h.db, jobId, [url, sibling].map((u) => ({ url: u, key: u, depth: 0, external: false })));
    assert.equal((await claimUrls(h.db, jobId, 'o', 2, 60_000, { retakeOwn: true })).length, 2);
    const stored = await finishPages(h.db, jobId, [url, sibling].map((u) => ({ key: u, links: [], document: { body: doc(u, u === url ? text : 'Sibling page.', { cachedAt }), credits: 1 } })));
    assert.equal(stored.size, 2);
  };
  const mainRow = async () => (await h.db.execute<Row>(sql`SELECT title, body, stored_at, published_at, content_hash FROM search_pages WHERE team_id = ${team} AND url = ${url}`)).rows[0]!;

  await crawl('Herons stand still.', '2026-01-01T00:00:00.000Z');
  await h.db.execute(sql`UPDATE search_pages SET ${MARK} WHERE team_id = ${team} AND url = ${url}`);
  await crawl('Herons stand still.', '2026-02-01T00:00:00.000Z');
  const same = await mainRow();
  assert.equal(same.title, 'Marked zanzibarite', 'unchanged text: the text columns (and so the vectors) were not written again');
  assert.equal(new Date(same.stored_at).toISOString(), '2026-02-01T00:00:00.000Z', 'stored_at moves to the fresher copy');

  await crawl('Egrets fly south.', '2026-03-01T00:00:00.000Z');
  const changed = await mainRow();
  assert.equal(changed.title, 'Reindex page', 'changed text rewrites the row');
  assert.equal(await find(team, 'egrets'), 1);
  assert.equal(await find(team, 'herons'), 0);
});

test('a copy of the same text that meets a row changed meanwhile (another writer) rewrites it, vectors included', async () => {
  const team = await ensureTeam(h.db, `reindex-race-${randomUUID()}`);
  const url = `https://reindex.test/${randomUUID()}`;
  await store(team, doc(url, 'Herons stand still.', { cachedAt: '2026-01-01T00:00:00.000Z' }));
  // Another writer changes the row and holds it: the next copy's probe still sees the committed
  // row with its own text (so it proposes no vectors), then waits for the row at its conflict.
  const other = await h.pool.connect();
  try {
    await other.query('BEGIN');
    await other.query(
      `UPDATE search_pages SET body = 'Cormorants dive.', content_hash = 'other', tsv = to_tsvector('simple', 'cormorants dive'),
         tsv_rank = to_tsvector('simple', 'cormorants dive') WHERE team_id = $1`,
      [team],
    );
    const copy = store(team, doc(url, 'Herons stand still.', { cachedAt: '2026-02-01T00:00:00.000Z' }));
    for (let waited = 0; ; waited += 20) {
      const r = await h.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
      if (r.rows[0].n > 0) break;
      assert.ok(waited < 10_000, 'the copy never waited for the row');
      await new Promise((r) => setTimeout(r, 20));
    }
    await other.query('COMMIT');
    await copy;
  } finally {
    other.release();
  }
  const row = await rowOf(team);
  assert.match(row.body, /Herons stand still/);
  assert.notEqual(row.content_hash, 'other');
  assert.equal(await find(team, 'herons'), 1, 'the vectors were computed for the text written');
  assert.equal(await find(team, 'cormorants'), 0);
  const v = await h.db.execute<{ tsv: boolean; rank: boolean }>(
    sql`SELECT tsv @@ to_tsquery('english', 'heron') AS tsv, tsv_rank @@ to_tsquery('english', 'heron') AS rank FROM search_pages WHERE team_id = ${team}`,
  );
  assert.deepEqual(v.rows[0], { tsv: true, rank: true }, 'both vectors');
});
