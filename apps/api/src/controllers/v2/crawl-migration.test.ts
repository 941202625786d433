import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { activeCrawls, connectDb, deleteExpiredJobs, ensureTeam, findJobByIdempotencyKey, liveJobsOlderThan, migrateDb, type DbHandle } from '@wds/db';
import { migrateDbBefore } from '@wds/db/migrate-before';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import type { ApiDeps } from '../../deps';
import { extractStatusController } from './extract';
import { jobControllers } from './jobs';

/**
 * Migrations 0033 (crawl_on_jobs) and 0034 (extract_on_jobs) on a database holding crawls, batch
 * scrapes and extracts of the old shape (crawl_jobs and extract_jobs with their own status words,
 * text errors, own expiry; an extract's frontier row in crawl_jobs): afterwards GET /v2/crawl/{id},
 * /v2/batch/scrape/{id}, their /errors and GET /v2/extract/{id} answer for them as before
 * (the controllers called as the routes call them, over the real database), live ones are judged
 * by the stranded-job sweeper by their workflow id, and the expiry path takes an expired one with
 * its frontier and documents.
 */
let h: DbHandle;
let teamId: string;
let otherTeam: string;
const q = (text: string, values: unknown[] = []) => h.pool.query(text, values);
const ids = {
  done: randomUUID(), live: randomUUID(), cancelling: randomUUID(), failedBatch: randomUUID(), lateBatch: randomUUID(), twinOld: randomUUID(), twinNew: randomUUID(), expired: randomUUID(),
  extract: randomUUID(), extractDone: randomUUID(), extractFailed: randomUUID(), extractExpired: randomUUID(),
};
const EXTRACT_OPTIONS = { prompt: 'The company', showSources: true, pageOptions: { formats: [{ type: 'markdown' }], timeout: 30000 }, wildcards: [], maxPages: 10, warnings: [] };

/** An extract of the old shape: its row and its frontier row of kind `extract`. */
async function insertOldExtract(id: string, status: 'processing' | 'completed' | 'failed', o: { fetch: 'scraping' | 'completed'; error?: string; expires?: number } = { fetch: 'completed' }) {
  const ended = status !== 'processing';
  await q(
    `INSERT INTO extract_jobs (id, team_id, options, status, data, sources, warning, error, tokens_used, credits_used, created_at, completed_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'a warning', $7, $8, $9, now() - interval '2 hours', CASE WHEN $10 THEN now() - interval '1 hour' END, now() + interval '1 hour' * $11::float8)`,
    [id, teamId, JSON.stringify(EXTRACT_OPTIONS), status, ended && !o.error ? JSON.stringify({ company: 'Acme' }) : null, ended && !o.error ? JSON.stringify({ company: ['http://a.test/a'] }) : null,
      o.error ?? null, ended ? 40 : 0, ended ? 5 : 0, ended, o.expires ?? 22],
  );
  await insertOld({ id, kind: 'extract', status: o.fetch });
  await q(`UPDATE crawl_jobs SET options = $2 WHERE id = $1`, [id, JSON.stringify({ scrapeOptions: EXTRACT_OPTIONS.pageOptions })]);
}

interface OldJob {
  id: string;
  kind: 'crawl' | 'batch' | 'extract';
  status: 'scraping' | 'completed' | 'failed' | 'cancelled';
  url?: string | null;
  error?: string;
  counters?: [number, number, number, number];
  key?: string;
  /** Hours from now (negative: ago). */
  created?: number;
  completed?: number | null;
  expires?: number;
}

async function insertOld(j: OldJob) {
  const [enqueued, completed, failed, credits] = j.counters ?? [0, 0, 0, 0];
  const created = j.created ?? -2;
  await q(
    `INSERT INTO crawl_jobs (id, team_id, kind, url, options, status, page_limit, enqueued, completed, failed, credits_used, error, idempotency_key, created_at, completed_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, 10, $7, $8, $9, $10, $11, $12, now() + interval '1 hour' * $13::float8,
       CASE WHEN $14::float8 IS NULL THEN NULL ELSE now() + interval '1 hour' * $14::float8 END, now() + interval '1 hour' * $15::float8)`,
    [j.id, teamId, j.kind, j.url ?? null, JSON.stringify({ limit: 10, scrapeOptions: { formats: ['markdown'] } }), j.status, enqueued, completed, failed, credits, j.error ?? null, j.key ?? null,
      created, j.completed === undefined ? (j.status === 'scraping' ? null : -1) : j.completed, j.expires ?? created + 24],
  );
}

async function page(jobId: string, key: string, doc: boolean, status = 'done', error: string | null = null) {
  await q(`INSERT INTO crawl_urls (job_id, url_key, url, status, error) VALUES ($1, $2, $3, $4, $5)`, [jobId, key, `http://a.test/${key}`, status, error]);
  if (doc) await q(`INSERT INTO crawl_documents (job_id, url_key, document, credits) VALUES ($1, $2, $3, 1)`, [jobId, key, JSON.stringify({ markdown: key, metadata: { sourceURL: `http://a.test/${key}` } })]);
}

before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 5 });
  await migrateDbBefore(h, '0033_crawl_on_jobs');
  teamId = await ensureTeam(h.db, `crawl-migration-${randomUUID()}`);
  otherTeam = await ensureTeam(h.db, `crawl-migration-other-${randomUUID()}`);
  await insertOld({ id: ids.done, kind: 'crawl', status: 'completed', url: 'http://a.test/', counters: [2, 2, 0, 2], expires: 23 });
  for (const k of ['a', 'b']) await page(ids.done, k, true);
  await insertOld({ id: ids.live, kind: 'crawl', status: 'scraping', url: 'http://a.test/' });
  await page(ids.live, 'a', true);
  await page(ids.live, 'b', false, 'queued');
  // Cancelled by the API, its workflow not yet through its end (no completed_at).
  await insertOld({ id: ids.cancelling, kind: 'crawl', status: 'cancelled', url: 'http://a.test/', completed: null });
  await insertOld({ id: ids.failedBatch, kind: 'batch', status: 'failed', error: 'The job failed: its workflow ended without finishing it', counters: [2, 1, 1, 1] });
  await page(ids.failedBatch, 'a', true);
  await page(ids.failedBatch, 'b', false, 'failed', 'HTTP 500');
  // Ended an hour ago, its expiry still the one of its start (rows from before finishJob moved it).
  await insertOld({ id: ids.lateBatch, kind: 'batch', status: 'completed', created: -23, completed: -1, expires: 1 });
  // The old index let one key name two batches.
  await insertOld({ id: ids.twinOld, kind: 'batch', status: 'completed', key: 'k1', created: -3 });
  await insertOld({ id: ids.twinNew, kind: 'batch', status: 'completed', key: 'k1', created: -2 });
  await insertOld({ id: ids.expired, kind: 'crawl', status: 'completed', url: 'http://a.test/', created: -50, completed: -30, expires: -1 });
  await page(ids.expired, 'a', true);
  await insertOldExtract(ids.extract, 'processing', { fetch: 'scraping' });
  await insertOldExtract(ids.extractDone, 'completed');
  await page(ids.extractDone, 'a', true);
  await q(`INSERT INTO extract_pages (job_id, doc_seq, url, status, data) SELECT $1, seq, 'http://a.test/a', 'extracted', '{}' FROM crawl_documents WHERE job_id = $1`, [ids.extractDone]);
  await insertOldExtract(ids.extractFailed, 'failed', { fetch: 'completed', error: 'No page could be read' });
  await insertOldExtract(ids.extractExpired, 'completed', { fetch: 'completed', expires: -1 });
  await page(ids.extractExpired, 'a', true);
  await migrateDb(h);
}, { timeout: 120_000 });
after(() => h?.close());

const deps = () => ({ db: h.db }) as unknown as ApiDeps;

async function getExtract(id: string): Promise<{ status: number; body: Record<string, unknown> }> {
  let sent: Record<string, unknown> = {};
  const req = { params: { id }, auth: { teamId } } as unknown as FastifyRequest<{ Params: { id: string } }>;
  const reply = { send: (b: Record<string, unknown>) => ((sent = b), reply), header: () => reply } as unknown as FastifyReply;
  try {
    await extractStatusController(deps())(req, reply);
    return { status: 200, body: sent };
  } catch (e) {
    return { status: (e as { status?: number }).status ?? 500, body: { error: (e as Error).message } };
  }
}

/** The route's answer: the controller called as Fastify calls it. */
async function get(kind: 'crawl' | 'batch', id: string, what: 'status' | 'errors' = 'status', team = teamId): Promise<{ status: number; body: Record<string, unknown> }> {
  let sent: Record<string, unknown> = {};
  const req = { params: { id }, query: {}, auth: { teamId: team }, headers: { host: 'api.test' }, protocol: 'http', log: console } as unknown as FastifyRequest<{ Params: { id: string } }>;
  const reply = { send: (b: Record<string, unknown>) => ((sent = b), reply), raw: { once: () => {} } } as unknown as FastifyReply;
  try {
    await jobControllers(deps(), kind, { pageBytes: 10_000_000 })[what](req as never, reply);
    return { status: 200, body: sent };
  } catch (e) {
    return { status: (e as { status?: number }).status ?? 500, body: { error: (e as Error).message } };
  }
}

test('an ended crawl reads as before: status word, counters, credits, documents, dates', async () => {
  const { status, body } = await get('crawl', ids.done);
  assert.equal(status, 200);
  assert.deepEqual([body.status, body.total, body.completed, body.creditsUsed], ['completed', 2, 2, 2]);
  assert.deepEqual((body.data as { markdown: string }[]).map((d) => d.markdown).sort(), ['a', 'b']);
  assert.ok(body.completedAt);
  const expires = new Date(body.expiresAt as string).getTime();
  assert.ok(Math.abs(expires - (Date.now() + 23 * 3_600_000)) < 120_000, 'the expiry it had');
  assert.equal((await get('batch', ids.done)).status, 404, "a crawl's id is no batch");
  assert.equal((await get('crawl', ids.done, 'status', otherTeam)).status, 404, "another team's id reads as missing");
});

test('a running crawl reads scraping with live counters; a cancelled one whose workflow still stops reads cancelled', async () => {
  const live = (await get('crawl', ids.live)).body;
  assert.deepEqual([live.status, live.total, live.completed], ['scraping', 2, 1]);
  assert.ok(!('completedAt' in live));
  assert.ok(Math.abs(new Date(live.expiresAt as string).getTime() - (Date.now() + 22 * 3_600_000)) < 120_000, 'a running job says 24 h from its start, as before');
  assert.equal((await get('crawl', ids.cancelling)).body.status, 'cancelled');
  assert.deepEqual((await activeCrawls(h.db, teamId)).map((c) => c.id), [ids.live], 'only the running crawl is active');
});

test('a failed batch reads failed with its errors; its failure is a FailureRecord', async () => {
  const b = await get('batch', ids.failedBatch);
  assert.deepEqual([b.status, b.body.status, b.body.completed, b.body.creditsUsed], [200, 'failed', 1, 1]);
  const errors = (await get('batch', ids.failedBatch, 'errors')).body as { errors: { url: string; error: string }[] };
  assert.deepEqual(errors.errors.map((e) => [e.url, e.error]), [['http://a.test/b', 'HTTP 500']]);
  const row = (await q('SELECT status, error FROM jobs WHERE id = $1', [ids.failedBatch])).rows[0];
  assert.deepEqual(row, { status: 'failed', error: { kind: 'INTERNAL', message: 'The job failed: its workflow ended without finishing it' } });
});

test('status words, workflow ids and expiry moved into jobs; the newest of two batches keeps their key', async () => {
  const rows = Object.fromEntries((await q(`SELECT id, kind, status, workflow_id, expires_at, finished_at FROM jobs WHERE id = ANY($1)`, [Object.values(ids)])).rows.map((r) => [r.id, r]));
  assert.deepEqual([rows[ids.live].status, rows[ids.cancelling].status, rows[ids.done].status], ['running', 'cancelling', 'completed']);
  assert.equal(rows[ids.live].workflow_id, `crawl-${ids.live}`);
  assert.equal(rows[ids.failedBatch].workflow_id, `batch-${ids.failedBatch}`);
  assert.equal(rows[ids.extract].workflow_id, `extract-${ids.extract}`);
  for (const id of [ids.live, ids.cancelling, ids.extract]) assert.equal(rows[id].expires_at, null, 'a live job has no expiry of its own');
  const late = rows[ids.lateBatch];
  assert.ok(late.expires_at.getTime() - late.finished_at.getTime() >= 24 * 3_600_000 - 1_000, 'kept 24 h from its end, not from its start');
  assert.equal(await findJobByIdempotencyKey(h.db, teamId, 'k1'), ids.twinNew);
  const swept = (await liveJobsOlderThan(h.db, { minAgeMs: 60_000, limit: 1000 })).map((j) => j.id);
  assert.ok(swept.includes(ids.live) && swept.includes(ids.cancelling) && swept.includes(ids.extract) && !swept.includes(ids.done));
});

test('extracts read as before: processing, completed with its data and sources, failed with its error; the expiry they had', async () => {
  const running = (await getExtract(ids.extract)).body;
  assert.deepEqual([running.status, running.data, running.creditsUsed], ['processing', [], 0]);
  const done = await getExtract(ids.extractDone);
  assert.equal(done.status, 200);
  assert.deepEqual([done.body.status, done.body.data, done.body.sources, done.body.tokensUsed, done.body.creditsUsed], ['completed', { company: 'Acme' }, { company: ['http://a.test/a'] }, 40, 5]);
  assert.match(done.body.warning as string, /a warning/);
  assert.ok(Math.abs(new Date(done.body.expiresAt as string).getTime() - (Date.now() + 22 * 3_600_000)) < 120_000);
  const failed = (await getExtract(ids.extractFailed)).body;
  assert.deepEqual([failed.status, failed.error], ['failed', 'No page could be read']);
  const row = (await q(`SELECT status, options -> 'scrapeOptions' AS s, options ->> 'prompt' AS prompt FROM jobs WHERE id = $1`, [ids.extract])).rows[0];
  assert.deepEqual(row, { status: 'running', s: EXTRACT_OPTIONS.pageOptions, prompt: 'The company' }, "the request's options, and the page options its frontier statements read");
});

test('the expiry path takes an expired crawl with its frontier and documents; the rest stay', async () => {
  const gone = await deleteExpiredJobs(h.db);
  assert.ok((gone.crawl ?? 0) >= 1);
  assert.equal((await get('crawl', ids.expired)).status, 404);
  for (const table of ['crawl_jobs', 'crawl_urls', 'crawl_documents']) {
    assert.equal((await q(`SELECT 1 FROM ${table} WHERE ${table === 'crawl_jobs' ? 'id' : 'job_id'} = $1`, [ids.expired])).rowCount, 0, table);
  }
  for (const id of [ids.done, ids.lateBatch, ids.failedBatch, ids.extractDone]) assert.ok((await q('SELECT 1 FROM jobs WHERE id = $1', [id])).rowCount, id);
  assert.equal((await getExtract(ids.extractExpired)).status, 404, 'an expired extract goes too');
  for (const table of ['extract_jobs', 'crawl_jobs']) assert.equal((await q(`SELECT 1 FROM ${table} WHERE id = $1`, [ids.extractExpired])).rowCount, 0, table);
  assert.equal((await q(`SELECT 1 FROM crawl_documents WHERE job_id = $1`, [ids.extractExpired])).rowCount, 0);
});
