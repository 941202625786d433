import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { claimUrls, enqueueUrls } from './frontier';
import { finishPage } from './crawl-pages';
import { finishPages, type BatchedPage } from './crawl-pages-batch';
import { insertCrawlJob } from './crawl-jobs';
import { appendJobEvent, jobEventsAfter } from './events';
import { jobCreditBalance, teamCreditBalance, teamLedgerTotals } from './ledger';
import { ensureTeam } from './index';
import { cacheEntryOf, findCachedPage, storeCachedPage } from './scrapes';

// finishPages (several pages of a job in one statement) against finishPage (one): the same rows,
// once each, whichever stored a page and however often either ran. Real Postgres; every check is
// on rows, none on timing.
let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 20 });
  await migrateDb(h);
});
after(() => h?.close());

async function newJob(zeroDataRetention = false) {
  const teamId = await ensureTeam(h.db, `pages-batch-${randomUUID()}`);
  const jobId = randomUUID();
  await insertCrawlJob(h.db, { id: jobId, teamId, kind: 'crawl', url: 'http://a.test/', options: {}, pageLimit: 1000, zeroDataRetention });
  await enqueueUrls(h.db, jobId, Array.from({ length: 40 }, (_, i) => ({ url: `http://a.test/${i}`, key: `a.test/${i}`, depth: 0, external: false })));
  const urls = await claimUrls(h.db, jobId, 'o', 40, 60_000, { retakeOwn: true });
  assert.equal(urls.length, 40);
  return { teamId, jobId, urls };
}

const doc = (i: number) => ({ markdown: `# Page ${i}\n\nwords of page ${i}`, metadata: { url: `http://a.test/${i}`, sourceURL: `http://a.test/${i}`, title: `Page ${i}`, statusCode: 200 } });
const credits = (i: number) => (i === 7 ? 3 : 1);

test('pages stored in groups and one by one, each racing its retry: every document, charge, page event and index row once, events gap-free', { timeout: 60_000 }, async () => {
  const { teamId, jobId } = await newJob();
  await appendJobEvent(h.db, { jobId, type: 'started', key: 'started' });
  const webhook = { url: 'http://hooks.test:8080/in', jobKind: 'crawl' as const };
  const page = (i: number): BatchedPage => ({
    key: `a.test/${i}`,
    // Page 0 finds two new URLs and one known one.
    links: i === 0 ? ['new/1', 'new/2', 'a.test/5'].map((k) => ({ url: `http://${k}`, key: k, depth: 1, external: false })) : [],
    document: { body: doc(i), credits: credits(i) },
  });
  // Pages 0–29 in three groups of 10, 30–39 one by one; every call twice at once (a retried activity racing itself).
  const groups = [0, 1, 2].map((g) => Array.from({ length: 10 }, (_, i) => page(g * 10 + i)));
  const [grouped, single] = await Promise.all([
    Promise.all(groups.flatMap((g) => [0, 1].map(() => finishPages(h.db, jobId, g, webhook)))),
    Promise.all(Array.from({ length: 10 }, (_, i) => 30 + i).flatMap((i) => [0, 1].map(() => finishPage(h.db, jobId, `a.test/${i}`, { links: [], document: { body: doc(i), credits: credits(i), webhook } })))),
  ]);
  // Each grouped key stored by exactly one of its two calls; each single page by one of its two.
  const storedKeys = grouped.flatMap((s) => [...s]);
  assert.equal(storedKeys.length, 30);
  assert.equal(new Set(storedKeys).size, 30);
  assert.equal(single.filter(Boolean).length, 10);
  // A replay of a whole group stores nothing more.
  assert.equal((await finishPages(h.db, jobId, groups[0]!, webhook)).size, 0);

  const events = await jobEventsAfter(h.db, jobId, 0, 100);
  assert.deepEqual(events.map((e) => e.seq), Array.from({ length: 41 }, (_, i) => i + 1), 'started + 40 pages, gap-free');
  const pageEvents = events.filter((e) => e.type === 'page');
  assert.equal(new Set(pageEvents.map((e) => e.payload.urlKey)).size, 40);
  const seqs = await h.pool.query('SELECT url_key, seq FROM crawl_documents WHERE job_id = $1', [jobId]);
  const docSeq = new Map(seqs.rows.map((r) => [r.url_key, Number(r.seq)]));
  assert.equal(docSeq.size, 40);
  for (const e of pageEvents) assert.equal(e.payload.docSeq, docSeq.get(e.payload.urlKey as string), `event of ${e.payload.urlKey} names its document`);
  const deliveries = await h.pool.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE job_id = $1', [jobId]);
  assert.equal(deliveries.rows[0].n, 40);

  assert.deepEqual(await jobCreditBalance(h.db, jobId), { used: 42, reserved: 0 });
  assert.deepEqual(await teamCreditBalance(h.db, teamId), await teamLedgerTotals(h.db, teamId));
  assert.deepEqual(await teamCreditBalance(h.db, teamId), { used: 42, reserved: 0 });
  const keys = await h.pool.query(`SELECT idempotency_key FROM credit_ledger WHERE job_id = $1 AND idempotency_key = $2`, [jobId, `page:${jobId}:a.test/3`]);
  assert.equal(keys.rowCount, 1, 'a grouped page is billed under the key finishPage uses');

  const urls = await h.pool.query('SELECT url_key, status FROM crawl_urls WHERE job_id = $1', [jobId]);
  const status = new Map(urls.rows.map((r) => [r.url_key, r.status]));
  assert.ok([...Array(40).keys()].every((i) => status.get(`a.test/${i}`) === 'done'));
  assert.equal(status.get('new/1'), 'queued');
  assert.equal(status.get('new/2'), 'queued');
  const indexed = await h.pool.query('SELECT count(*)::int AS n FROM search_pages WHERE team_id = $1', [teamId]);
  assert.equal(indexed.rows[0].n, 40);
});

test('a zero-data-retention job: grouped pages billed under hashed keys, never indexed; discovery-only pages store no document', { timeout: 60_000 }, async () => {
  const { teamId, jobId } = await newJob(true);
  const stored = await finishPages(h.db, jobId, [
    { key: 'a.test/1', links: [], document: { body: doc(1), credits: 1 } },
    { key: 'a.test/2', links: [{ url: 'http://a.test/deep', key: 'a.test/deep', depth: 1, external: false }] },
    { key: 'a.test/3', links: [], document: { body: doc(3), credits: 1 } },
  ]);
  assert.deepEqual([...stored].sort(), ['a.test/1', 'a.test/3']);
  const ledger = await h.pool.query('SELECT idempotency_key FROM credit_ledger WHERE job_id = $1', [jobId]);
  assert.equal(ledger.rowCount, 2);
  assert.ok(ledger.rows.every((r) => /^page:[0-9a-f-]+:sha256:[0-9a-f]{64}$/.test(r.idempotency_key)), 'no URL in a ZDR job\'s ledger keys');
  const indexed = await h.pool.query('SELECT count(*)::int AS n FROM search_pages WHERE team_id = $1', [teamId]);
  assert.equal(indexed.rows[0].n, 0);
  const urls = await h.pool.query(`SELECT url_key, status FROM crawl_urls WHERE job_id = $1 AND url_key IN ('a.test/2', 'a.test/deep')`, [jobId]);
  assert.deepEqual(Object.fromEntries(urls.rows.map((r) => [r.url_key, r.status])), { 'a.test/2': 'done', 'a.test/deep': 'queued' });
});

test('two pages of one group naming one index row (https, www.): one row written, no error', { timeout: 60_000 }, async () => {
  const { teamId, jobId } = await newJob();
  const stored = await finishPages(h.db, jobId, [
    { key: 'a.test/1', links: [], document: { body: doc(1), credits: 1 } },
    { key: 'a.test/2', links: [], document: { body: { ...doc(2), metadata: { ...doc(2).metadata, url: 'https://www.a.test/1' } }, credits: 1 } },
  ]);
  assert.equal(stored.size, 2);
  const indexed = await h.pool.query('SELECT url_key FROM search_pages WHERE team_id = $1', [teamId]);
  assert.deepEqual(indexed.rows.map((r) => r.url_key), ['a.test/1']);
});

test('page cache rows carried by a group are written with it: bodies byte for byte, outputs, the last row of a repeated key, and an existing row replaced', { timeout: 60_000 }, async () => {
  const { jobId } = await newJob();
  const run = randomUUID();
  const entry = (i: number, body: Buffer, outputs?: object) =>
    cacheEntryOf(`ck-${run}-${i}`, { url: `http://a.test/${i}`, finalUrl: `http://a.test/${i}?f`, statusCode: 200 + i, contentType: 'text/html', charset: i % 2 ? 'utf-8' : null, body, engine: 'http', outputs: outputs && { variant: 'v1', formats: outputs } });
  const big = (i: number) => Buffer.from(`<p>${`prose of page ${i}. `.repeat(300)}</p>`);
  // Bytes that are not UTF-8, a small body kept as fetched, compressed ones; key 4's first row is replaced within the group.
  const bodies = [Buffer.from([0xff, 0x00, 0xfe, 0x80]), big(1), Buffer.from('<p>tiny</p>'), big(3), Buffer.alloc(0)];
  // Key 3 holds an older copy already: the group's row replaces it, outputs included.
  await storeCachedPage(h.db, `ck-${run}-3`, { url: 'http://a.test/old', finalUrl: 'http://a.test/old', statusCode: 200, contentType: 'text/html', charset: null, body: Buffer.from('old'), engine: 'http', outputs: { variant: 'v0', formats: { markdown: 'old' } } });
  const cache = await Promise.all(bodies.map((b, i) => entry(i, b, i === 1 ? { markdown: 'page one' } : undefined)));
  // Two pages of the group name one cache row (key 4): the later page's row is the one kept.
  const repeat = await entry(4, big(40));
  const pages: BatchedPage[] = [...bodies.keys()].map((i) => ({ key: `a.test/${i}`, links: [], document: { body: doc(i), credits: 1 }, cache: cache[i] }));
  pages.push({ key: 'a.test/9', links: [], document: { body: doc(9), credits: 1 }, cache: repeat });
  pages.push({ key: 'a.test/10', links: [], document: { body: doc(10), credits: 1 } });
  assert.equal((await finishPages(h.db, jobId, pages)).size, 7);
  for (const [i, body] of bodies.entries()) {
    const got = await findCachedPage(h.db, `ck-${run}-${i}`, {});
    assert.ok(got, `row ${i}`);
    assert.ok(Buffer.compare(got.body, i === 4 ? big(40) : body) === 0, `body of row ${i}`);
    assert.deepEqual([got.url, got.finalUrl, got.statusCode, got.charset], [`http://a.test/${i}`, `http://a.test/${i}?f`, 200 + i, i % 2 ? 'utf-8' : null]);
  }
  assert.deepEqual((await findCachedPage(h.db, `ck-${run}-1`, {}, { variant: 'v1', formats: ['markdown'] }))?.outputs, { markdown: 'page one' });
  assert.equal((await findCachedPage(h.db, `ck-${run}-3`, {}, { variant: 'v0', formats: ['markdown'] }))?.outputs, null, 'the old copy\'s outputs went with it');
  const encodings = await h.pool.query(`SELECT cache_key, body_encoding FROM page_cache WHERE cache_key LIKE $1 ORDER BY cache_key`, [`ck-${run}-%`]);
  assert.deepEqual(encodings.rows.map((r) => r.body_encoding), [null, 'br', null, 'br', 'br']);
});
