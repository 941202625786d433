import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { claimUrls, enqueueUrls } from './frontier';
import { finishPage } from './crawl-pages';
import { insertCrawlJob } from './crawl-jobs';
import { appendJobEvent, jobEventsAfter } from './events';
import { ensureTeam } from './index';

let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 20 });
  await migrateDb(h);
});
after(() => h?.close());

async function allEvents(jobId: string) {
  const out = [];
  for (let after = 0; ; ) {
    const page = await jobEventsAfter(h.db, jobId, after, 100);
    if (!page.length) return out;
    out.push(...page);
    after = page.at(-1)!.seq;
  }
}

test('20 concurrent writers × 50 events: sequence numbers 1…1000, gap-free, each writer in its own order', async () => {
  const jobId = randomUUID();
  await Promise.all(
    Array.from({ length: 20 }, async (_, w) => {
      for (let i = 0; i < 50; i++) await appendJobEvent(h.db, { jobId, type: 'step', key: `w${w}-${i}`, payload: { w, i } });
    }),
  );
  const events = await allEvents(jobId);
  assert.deepEqual(
    events.map((e) => e.seq),
    Array.from({ length: 1000 }, (_, i) => i + 1),
  );
  for (let w = 0; w < 20; w++) {
    const mine = events.filter((e) => e.payload.w === w).map((e) => e.payload.i);
    assert.deepEqual(mine, Array.from({ length: 50 }, (_, i) => i), `writer ${w} in order`);
  }
});

test('appending a key again is a no-op returning its number, also when the appends race; no gap follows', async () => {
  const jobId = randomUUID();
  assert.deepEqual(await appendJobEvent(h.db, { jobId, type: 'started', key: 'started' }), { seq: 1, appended: true });
  assert.deepEqual(await appendJobEvent(h.db, { jobId, type: 'started', key: 'started' }), { seq: 1, appended: false });
  const racing = await Promise.all(Array.from({ length: 10 }, () => appendJobEvent(h.db, { jobId, type: 'completed', key: 'completed', payload: { n: 1 } })));
  assert.equal(racing.filter((r) => r.appended).length, 1);
  assert.ok(racing.every((r) => r.seq === 2));
  assert.deepEqual(await appendJobEvent(h.db, { jobId, type: 'x', key: 'x' }), { seq: 3, appended: true });
  const events = await allEvents(jobId);
  assert.deepEqual(events.map((e) => [e.seq, e.type]), [[1, 'started'], [2, 'completed'], [3, 'x']]);
  assert.deepEqual(events[1]!.payload, { n: 1 });
  assert.deepEqual((await jobEventsAfter(h.db, jobId, 1, 1)).map((e) => e.seq), [2]);
});

test('stored pages append one page event each, numbered with the other events of their job, and queue webhook deliveries', async () => {
  const teamId = await ensureTeam(h.db, `events-${randomUUID()}`);
  const jobId = randomUUID();
  await insertCrawlJob(h.db, { id: jobId, teamId, kind: 'crawl', url: 'http://a.test/', options: {}, pageLimit: 100, zeroDataRetention: false });
  await appendJobEvent(h.db, { jobId, type: 'started', key: 'started' });
  await enqueueUrls(h.db, jobId, Array.from({ length: 20 }, (_, i) => ({ url: `http://a.test/${i}`, key: `a.test/${i}`, depth: 0, external: false })));
  const urls = await claimUrls(h.db, jobId, 'o', 20, 60_000, { retakeOwn: true });
  const webhook = { url: 'http://hooks.test:8080/in', jobKind: 'crawl' as const };
  await Promise.all(urls.flatMap((u) => [0, 1].map(() => finishPage(h.db, jobId, u.key, { links: [], document: { body: {}, credits: 1, webhook } }))));
  await appendJobEvent(h.db, { jobId, type: 'completed', key: 'completed', webhook });
  const events = await allEvents(jobId);
  assert.deepEqual(events.map((e) => e.seq), Array.from({ length: 22 }, (_, i) => i + 1));
  const pages = events.filter((e) => e.type === 'page');
  assert.equal(pages.length, 20);
  assert.equal(new Set(pages.map((e) => e.payload.urlKey)).size, 20);
  assert.ok(pages.every((e) => typeof e.payload.docSeq === 'number' && Object.keys(e.payload).length === 2), 'ids only, no content');
  const deliveries = await h.pool.query('SELECT event_seq, origin, job_kind FROM webhook_deliveries WHERE job_id = $1 ORDER BY event_seq', [jobId]);
  assert.deepEqual(deliveries.rows.map((r) => r.event_seq), Array.from({ length: 21 }, (_, i) => i + 2), 'one per page and the completion (started had no webhook)');
  assert.ok(deliveries.rows.every((r) => r.origin === 'http://hooks.test:8080' && r.job_kind === 'crawl'));
});
