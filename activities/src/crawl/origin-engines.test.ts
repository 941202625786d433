import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { connectDb, ensureTeam, insertCrawlJob, loadOriginEngine, migrateDb, ORIGIN_RENDERED_PAGES, type DbHandle } from '@wds/db';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { createOriginEngines } from './origin-engines';

// What a crawl learns about its origins' pages (crawl_origin_engines): a real Postgres, two
// workers' memories (two createOriginEngines) over one job.
let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 10 });
  await migrateDb(h);
});
after(() => h?.close());

async function newJob(): Promise<string> {
  const teamId = await ensureTeam(h.db, `origins-${randomUUID()}`);
  const id = randomUUID();
  await insertCrawlJob(h.db, { id, teamId, kind: 'crawl', url: 'http://a.test/', options: {}, pageLimit: 100, zeroDataRetention: false });
  return id;
}

test('an origin goes browser-first once enough of its pages were script-rendered, counted across workers', { timeout: 60_000 }, async () => {
  const job = await newJob();
  const [a, b] = [createOriginEngines(h.db), createOriginEngines(h.db)];
  const origin = 'http://a.test';
  for (let i = 0; i < ORIGIN_RENDERED_PAGES - 1; i++) await (i % 2 ? a : b).learn(job, origin, 'script');
  assert.equal(await a.browserFirst(job, origin), false);
  // Error pages and non-HTML bodies say nothing about how the origin renders.
  await a.learn(job, origin, 'other');
  assert.equal((await loadOriginEngine(h.db, job, origin)).rendered, ORIGIN_RENDERED_PAGES - 1);
  await a.learn(job, origin, 'script');
  assert.equal(await a.browserFirst(job, origin), true);
  // A worker that learns the job's origins only now (a new process) reads the decision from Postgres.
  assert.equal(await createOriginEngines(h.db).browserFirst(job, origin), true);
  // Other origins and other jobs are undecided.
  assert.equal(await a.browserFirst(job, 'http://b.test'), false);
  assert.equal(await createOriginEngines(h.db).browserFirst(await newJob(), origin), false);
});

test('one static HTML page before the decision keeps the origin HTTP-first for the rest of the job', { timeout: 60_000 }, async () => {
  const job = await newJob();
  const [a, b] = [createOriginEngines(h.db), createOriginEngines(h.db)];
  const origin = 'http://mixed.test';
  await a.learn(job, origin, 'script');
  await a.learn(job, origin, 'script');
  await b.learn(job, origin, 'static');
  // Worker a has not seen the static page; its next write returns it, and counts nothing more.
  for (let i = 0; i < ORIGIN_RENDERED_PAGES + 2; i++) await a.learn(job, origin, 'script');
  assert.deepEqual(await loadOriginEngine(h.db, job, origin), { rendered: 2, static: true });
  assert.equal(await a.browserFirst(job, origin), false);
  assert.equal(await b.browserFirst(job, origin), false);
});

test('concurrent pages of one origin are all counted', { timeout: 60_000 }, async () => {
  const job = await newJob();
  const workers = Array.from({ length: 4 }, () => createOriginEngines(h.db));
  await Promise.all(Array.from({ length: 12 }, (_, i) => workers[i % 4]!.learn(job, 'http://c.test', 'script')));
  const o = await loadOriginEngine(h.db, job, 'http://c.test');
  assert.ok(o.rendered >= ORIGIN_RENDERED_PAGES && o.rendered <= 12, `rendered ${o.rendered}`);
  assert.equal(o.static, false);
});
