import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { insertCrawlJob } from './crawl-jobs';
import { finishPage } from './crawl-pages';
import { claimUrls, enqueueUrls } from './frontier';
import { ensureTeam } from './index';
import { completeScrapeJob, insertScrapeJob } from './scrapes';
import { searchIndex } from './search';
import { backfillSearchBatch, backfillSearchIndex, resetSearchBackfill, searchBackfillFinished } from './search-backfill';
import { indexStoredPages, setSearchIndexing } from './search-index';

let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 10 });
  await migrateDb(h);
});
after(async () => {
  setSearchIndexing(true);
  await h?.close();
});

const doc = (url: string, title: string, text: string, statusCode = 200) => ({ markdown: `# ${title}\n\n${text}`, html: '<p>not indexed</p>', metadata: { url, sourceURL: url, title, statusCode, language: 'en' } });

async function scrape(teamId: string, url: string, title: string, text: string, statusCode = 200) {
  const id = randomUUID();
  await insertScrapeJob(h.db, { id, teamId, url, options: {} });
  await completeScrapeJob(h.db, id, doc(url, title, text, statusCode), 1);
}

async function crawl(teamId: string, pages: [string, string, string][], zeroDataRetention = false) {
  const id = randomUUID();
  await insertCrawlJob(h.db, { id, teamId, kind: 'crawl', url: pages[0]![0], options: {}, pageLimit: 100, zeroDataRetention });
  await enqueueUrls(h.db, id, pages.map(([url]) => ({ url, key: url.replace(/^https?:\/\//, ''), depth: 0, external: false })));
  for (const u of await claimUrls(h.db, id, 'fetch', pages.length, 60_000, { retakeOwn: true })) {
    const [url, title, text] = pages.find(([p]) => p.endsWith(u.key))!;
    await finishPage(h.db, id, u.key, { links: [], document: { body: doc(url, title, text), credits: 1 } });
  }
}

const find = async (teamId: string, query: string) => (await searchIndex(h.db, { query, teamId, limit: 10, kind: 'web' })).map((x) => x.url).sort();
const indexedRows = async () => Number((await h.db.execute<{ n: string }>(sql`SELECT count(*) AS n FROM search_pages`)).rows[0]!.n);

test('pages stored while indexing was off are indexed by the backfill, in batches, by the store-time rules; it resumes and is idempotent', async () => {
  const team = await ensureTeam(h.db, `backfill-${randomUUID()}`);
  const other = await ensureTeam(h.db, `backfill-${randomUUID()}`);
  // Stored as before migration 0009: nothing indexed.
  setSearchIndexing(false);
  await scrape(team, 'https://old.test/kettle', 'Kettle guide', 'How to descale a kettle.');
  await scrape(team, 'https://old.test/gone', 'Kettle gone', 'This kettle page answered 404.', 404);
  await scrape(other, 'https://other.test/kettle', 'Other kettle', 'Another team stored this kettle page.');
  await crawl(team, [
    ['https://docs.test/a', 'Teapot A', 'A kettle and a teapot.'],
    ['https://docs.test/b', 'Teapot B', 'Water for tea.'],
    ['https://docs.test/c', 'Teapot C', 'More kettle words.'],
  ]);
  await crawl(team, [['https://secret.test/zdr', 'Secret kettle', 'A kettle page of a zero-data-retention crawl.']], true);
  setSearchIndexing(true);
  assert.equal(await indexedRows(), 0);
  assert.deepEqual(await find(team, 'kettle'), []);

  // One batch of 2, then the rest: the cursor moved in between (a stop there loses nothing).
  const first = await backfillSearchBatch(h.db, 'scrapes', 2);
  assert.deepEqual({ ...first, indexed: undefined }, { source: 'scrapes', rows: 2, indexed: undefined, finished: false });
  assert.equal(await searchBackfillFinished(h.db), false);
  const batches: number[] = [];
  const rest = await backfillSearchIndex(h.db, { batchSize: 2, onBatch: (b) => batches.push(b.rows) });
  assert.equal(rest.finished, true);
  assert.equal(rest.rows, 1 + 3, 'the last scrape, then the three crawl pages (the ZDR job is not read)');
  assert.ok(batches.every((n) => n <= 2));
  assert.equal(await searchBackfillFinished(h.db), true);

  assert.deepEqual(await find(team, 'kettle'), ['https://docs.test/a', 'https://docs.test/c', 'https://old.test/kettle'], 'no 404 page, no ZDR page, no other team');
  assert.deepEqual(await find(other, 'kettle'), ['https://other.test/kettle']);
  const rows = await indexedRows();
  assert.equal(rows, 5);

  // Finished: a second run reads nothing; after a reset it reads everything again and writes the same rows.
  assert.deepEqual(await backfillSearchIndex(h.db), { rows: 0, indexed: 0, finished: true });
  await resetSearchBackfill(h.db);
  const again = await backfillSearchIndex(h.db, { batchSize: 100 });
  assert.equal(again.rows, 6);
  assert.equal(await indexedRows(), rows);
});

test('a backfilled copy never replaces a fresher one indexed since', async () => {
  const team = await ensureTeam(h.db, `backfill-${randomUUID()}`);
  setSearchIndexing(false);
  await scrape(team, 'https://fresh.test/p', 'Old title', 'Old words.');
  setSearchIndexing(true);
  // Stored again later (indexed when stored): the backfill's older copy must not come back.
  await indexStoredPages(h.db, [{ teamId: team, document: doc('https://fresh.test/p', 'New title', 'New words.'), storedAt: new Date(Date.now() + 60_000) }]);
  await resetSearchBackfill(h.db);
  await backfillSearchIndex(h.db);
  const [hit] = await searchIndex(h.db, { query: 'words', teamId: team, limit: 10, kind: 'web' });
  assert.equal(hit!.title, 'New title');
});

test('two runners at once: each source is backfilled by one of them, every page once', async () => {
  const team = await ensureTeam(h.db, `backfill-${randomUUID()}`);
  setSearchIndexing(false);
  for (let i = 0; i < 30; i++) await scrape(team, `https://many.test/${i}`, `Quokka ${i}`, 'quokka facts');
  setSearchIndexing(true);
  await resetSearchBackfill(h.db);
  const [a, b] = await Promise.all([backfillSearchIndex(h.db, { batchSize: 3 }), backfillSearchIndex(h.db, { batchSize: 3 })]);
  assert.ok(a.finished || b.finished);
  assert.equal(await searchBackfillFinished(h.db), true);
  assert.equal((await searchIndex(h.db, { query: 'quokka', teamId: team, limit: 50, kind: 'web' })).length, 30);
});
