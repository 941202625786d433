import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { connectDb, ensureTeam, insertCrawlJob, migrateDb, type DbHandle } from '@wds/db';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { DocumentCursor } from './job-stream';

let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 4 });
  await migrateDb(h);
});
after(() => h?.close());

const insertDoc = (q: { query(text: string, values: unknown[]): Promise<unknown> }, jobId: string, key: string) =>
  q.query('INSERT INTO crawl_documents (job_id, url_key, document) VALUES ($1, $2, $3)', [jobId, key, JSON.stringify({ key })]);

test('a document whose lower sequence number commits late is still streamed, and nothing twice', async () => {
  const teamId = await ensureTeam(h.db, `cursor-${randomUUID()}`);
  const jobId = randomUUID();
  await insertCrawlJob(h.db, { id: jobId, teamId, kind: 'crawl', url: 'http://a.test/', options: {}, pageLimit: 10, zeroDataRetention: false });
  const cursor = new DocumentCursor(h.db, jobId);
  await insertDoc(h.pool, jobId, 'a');

  // "b" takes its sequence number first but commits after "c" was streamed.
  const slow = await h.pool.connect();
  try {
    await slow.query('BEGIN');
    await insertDoc(slow, jobId, 'b');
    await insertDoc(h.pool, jobId, 'c');
    assert.deepEqual(await cursor.next(100), [{ key: 'a' }, { key: 'c' }]);
    await slow.query('COMMIT');
  } finally {
    slow.release();
  }
  assert.deepEqual(await cursor.next(100), [{ key: 'b' }]);
  assert.deepEqual(await cursor.next(100), []);
  await insertDoc(h.pool, jobId, 'd');
  assert.deepEqual(await cursor.next(1), [{ key: 'd' }]);
});
