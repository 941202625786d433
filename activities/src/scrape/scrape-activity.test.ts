import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { scrapeUrlRequestSchema } from '@wds/contracts';
import { connectDb, ensureTeam, insertScrapeJob, loadScrapeJob, migrateDb, type DbHandle } from '@wds/db';
import { html, namespaceFor, stackDatabase, startFixtureSite, testInfra, type FixtureSite } from '@wds/test-utils';
import type { FetchPageInput, FetchPageResult } from '@wds/workflows/scrape';
import { createScrapeActivities } from './activities';

// The scrape page activity (the HTTP engine's step of a single scrape) in Temporal's
// MockActivityEnvironment: real Postgres, a real local site; what Temporal would see of it —
// heartbeats while a slow page loads, and a cancellation that stops the fetch at once.
let h: DbHandle;
let site: FixtureSite;
let teamId: string;
/** Requests to /slow whose connection closed before the page was sent (the fetch was aborted). */
let abandoned = 0;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 5 });
  await migrateDb(h);
  teamId = await ensureTeam(h.db, `scrape-activity-${randomUUID()}`);
  site = await startFixtureSite({
    '/fast': html('<html><head><title>Fast</title></head><body><main><h1>Fast page</h1><p>Quick.</p></main></body></html>'),
    '/slow': (req, res) => {
      const ms = Number(new URL(req.url!, 'http://x').searchParams.get('ms') ?? 2_500);
      const t = setTimeout(() => res.end('<html><body><main><h1>Slow page</h1></main></body></html>'), ms);
      res.on('close', () => {
        if (!res.writableFinished) abandoned++;
        clearTimeout(t);
      });
    },
  });
});
after(async () => {
  await site?.close();
  await h?.close();
});

const activities = () => createScrapeActivities({ db: h.db, allowPrivateNetwork: true, maxBodyBytes: 10_000_000 });
async function job(path: string): Promise<string> {
  const id = randomUUID();
  const url = site.url(path);
  await insertScrapeJob(h.db, { id, teamId, url, options: scrapeUrlRequestSchema.parse({ url, maxAge: 0, timeout: 30_000 }) });
  return id;
}
/** The page step's input: the HTTP engine (no browser worker is asked about). */
const page = (jobId: string): FetchPageInput => ({ jobId, engine: 'http' });
/** The scrape page activity run in `env`. */
const scrape = (env: MockActivityEnvironment, jobId: string): Promise<FetchPageResult> => env.run(activities().scrapePage, page(jobId));
/** A mock activity environment counting the heartbeats the activity sends. */
function mockEnv(info: Record<string, unknown> = {}) {
  // Quiet: the cancellation test fails the activity on purpose, which the SDK logs as a warning.
  const env = new MockActivityEnvironment(info, { logger: new DefaultLogger('ERROR') });
  const beats: number[] = [];
  env.on('heartbeat', () => beats.push(Date.now()));
  return { env, beats };
}

test('scrape activity: a page completes its job row with the document; a short scrape sends no heartbeat; a retry fetches nothing again', async () => {
  const jobId = await job('/fast');
  const { env, beats } = mockEnv();
  const r = await scrape(env, jobId);

  assert.equal(r.statusCode, 200);
  assert.equal(r.needsBrowser, undefined);
  const row = await loadScrapeJob(h.db, jobId);
  assert.equal(row?.status, 'completed');
  assert.match(String((row!.document as { markdown?: string }).markdown), /Fast page/);
  assert.deepEqual(beats, [], 'the first beat comes after a second');

  const served = site.hits('/fast');
  const again = await scrape(mockEnv().env, jobId);
  assert.equal(again.statusCode, 200);
  assert.equal(site.hits('/fast'), served, 'a completed job is not fetched again');
});

test('scrape activity: heartbeats about every second while a slow page loads', async () => {
  const jobId = await job('/slow?ms=2500');
  const { env, beats } = mockEnv();
  const t0 = Date.now();
  const r = await scrape(env, jobId);

  assert.equal(r.statusCode, 200);
  assert.ok(beats.length >= 2, `heartbeats: ${beats.length}`);
  assert.ok(beats[0]! - t0 >= 900, 'not before a second');
  assert.equal((await loadScrapeJob(h.db, jobId))?.status, 'completed');
});

test('scrape activity: a cancellation aborts the fetch at once and leaves the job uncompleted', async () => {
  const jobId = await job('/slow?ms=20000');
  const { env, beats } = mockEnv();
  const before = abandoned;
  const running = scrape(env, jobId);
  while (beats.length === 0) await new Promise((r) => setTimeout(r, 50));
  const t0 = Date.now();
  env.cancel();
  const err = await running.then(() => assert.fail('a cancelled scrape must not complete'), (e: unknown) => e);

  assert.ok(Date.now() - t0 < 3_000, `stopped ${Date.now() - t0} ms after the cancel`);
  assert.ok(err instanceof Error, String(err));
  assert.ok(env.context.cancellationSignal.aborted);
  for (let i = 0; i < 40 && abandoned === before; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(abandoned, before + 1, 'the site saw the request abandoned');
  assert.notEqual((await loadScrapeJob(h.db, jobId))?.status, 'completed');
});

test('scrape activity: run as a local activity it sends no heartbeat (local activities cannot)', async () => {
  const jobId = await job('/slow?ms=1500');
  const { env, beats } = mockEnv({ isLocal: true });
  const r = await scrape(env, jobId);

  assert.equal(r.statusCode, 200);
  assert.deepEqual(beats, []);
});
