import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { claimUrls, connectDb, enqueueUrls, ensureTeam, insertCrawlJob, jobCreditBalance, migrateDb, type DbHandle } from '@wds/db';
import { namespaceFor, stackDatabase, testInfra, until } from '@wds/test-utils';
import { createPageWriter, jobPageWriter, jobWritersHeld } from './page-writer';

// The fetch batch's page writer on a real Postgres: pages stored at once are all stored once, and
// a page that cannot be stored fails alone (its group is redone page by page).
let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 10 });
  await migrateDb(h);
});
after(() => h?.close());

async function newJob(n: number): Promise<string> {
  const teamId = await ensureTeam(h.db, `page-writer-${randomUUID()}`);
  const id = randomUUID();
  await insertCrawlJob(h.db, { id, teamId, kind: 'crawl', url: 'http://a.test/', options: {}, pageLimit: 100, zeroDataRetention: false });
  await enqueueUrls(h.db, id, Array.from({ length: n }, (_, i) => ({ url: `http://a.test/${i}`, key: `a.test/${i}`, depth: 0, external: false })));
  assert.equal((await claimUrls(h.db, id, 'o', n, 60_000, { retakeOwn: true })).length, n);
  return id;
}

const page = (i: number, credits = 1) => ({ key: `a.test/${i}`, links: [], document: { body: { markdown: `page ${i}`, metadata: { url: `http://a.test/${i}` } }, credits } });

test('30 pages handed over at once are each stored once; storing them again stores nothing', { timeout: 60_000 }, async () => {
  const jobId = await newJob(30);
  const writer = createPageWriter(h.db, jobId, null);
  const first = await Promise.all(Array.from({ length: 30 }, (_, i) => writer.store(page(i))));
  assert.ok(first.every(Boolean));
  const again = await Promise.all(Array.from({ length: 30 }, (_, i) => writer.store(page(i))));
  assert.ok(again.every((s) => !s));
  assert.deepEqual(await jobCreditBalance(h.db, jobId), { used: 30, reserved: 0 });
});

test('a page Postgres refuses fails alone: the pages grouped with it are stored', { timeout: 60_000 }, async () => {
  const jobId = await newJob(6);
  const writer = createPageWriter(h.db, jobId, null);
  // 2^40 credits does not fit the int column: the group's statement fails, then only that page's own.
  const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => writer.store(page(i, i === 4 ? 2 ** 40 : 1))));
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  assert.ok(results.every((r) => r.status === 'rejected' || r.value === true));
  const docs = await h.pool.query('SELECT url_key FROM crawl_documents WHERE job_id = $1 ORDER BY url_key', [jobId]);
  assert.deepEqual(docs.rows.map((r) => r.url_key), ['a.test/0', 'a.test/1', 'a.test/2', 'a.test/3', 'a.test/5']);
  assert.deepEqual(await jobCreditBalance(h.db, jobId), { used: 5, reserved: 0 });
});

test("a job's batches share its writer: pages handed over through two batches' handles are each stored once, and the writer is dropped when idle", { timeout: 60_000 }, async () => {
  const jobId = await newJob(40);
  const [a, b] = [jobPageWriter(h.db, jobId, null), jobPageWriter(h.db, jobId, null)];
  const stores = Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).store(page(i)));
  // Both handles' pages are queued on one writer while its first statement runs.
  assert.equal(jobWritersHeld(), 1);
  assert.ok((await Promise.all(stores)).every(Boolean));
  await until(() => jobWritersHeld() === 0, 'the idle writer is dropped');
  // A page handed over again, through either handle, is not stored twice.
  assert.deepEqual(await Promise.all([a.store(page(3)), b.store(page(4))]), [false, false]);
  assert.deepEqual(await jobCreditBalance(h.db, jobId), { used: 40, reserved: 0 });
  const docs = await h.pool.query('SELECT count(*)::int AS n FROM crawl_documents WHERE job_id = $1', [jobId]);
  assert.equal(docs.rows[0].n, 40);
});
