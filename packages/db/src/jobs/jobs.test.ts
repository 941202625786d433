import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from '../client';
import { ensureTeam } from '../keys';
import { insertMapJob, loadMapJob } from '../maps';
import { deleteExpiredJobs, endJob, insertJob, liveJobsOlderThan, loadJob, loadTeamJob } from './index';

let h: DbHandle;
let teamId: string;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 5 });
  await migrateDb(h);
  teamId = await ensureTeam(h.db, `jobs-${randomUUID()}`);
});
after(() => h?.close());

const q = (text: string, values: unknown[] = []) => h.pool.query(text, values);

test('a job ends once: a second end (a retried activity, a racing sweeper) changes nothing', async () => {
  const id = randomUUID();
  await insertJob(h.db, { id, teamId, kind: 'map', status: 'running', workflowId: `map-${id}` });
  assert.equal(await endJob(h.db, id, { status: 'completed', creditsUsed: 3, keptMs: 60_000 }), true);
  assert.equal(await endJob(h.db, id, { status: 'failed', error: { kind: 'INTERNAL', message: 'late' }, keptMs: null }), false);
  const job = await loadJob(h.db, id);
  assert.equal(job?.status, 'completed');
  assert.equal(job?.creditsUsed, 3);
  assert.equal(job?.error, null);
  const row = (await q('SELECT finished_at, expires_at - finished_at AS kept FROM jobs WHERE id = $1', [id])).rows[0];
  assert.ok(row.finished_at);
  assert.equal(row.kept.minutes, 1, 'kept for its spec time from its end');
});

test('a team reads its own jobs of a kind only', async () => {
  const other = await ensureTeam(h.db, `jobs-other-${randomUUID()}`);
  const id = randomUUID();
  await insertMapJob(h.db, { id, teamId, options: { url: 'https://a.example' } });
  assert.equal((await loadTeamJob(h.db, teamId, 'map', id))?.kind, 'map');
  assert.equal(await loadTeamJob(h.db, other, 'map', id), null, "another team's id reads as missing");
  assert.equal(await loadTeamJob(h.db, teamId, 'parse', id), null, "another kind's id reads as missing");
  const map = await loadMapJob(h.db, id);
  assert.deepEqual(map?.options, { url: 'https://a.example' });
  assert.equal(map?.status, 'running');
});

test('the status vocabulary and the team rule are constraints', async () => {
  await assert.rejects(q(`INSERT INTO jobs (id, team_id, kind, status) VALUES ($1, $2, 'map', 'pending')`, [randomUUID(), teamId]), /jobs_status_check/);
  await assert.rejects(q(`INSERT INTO jobs (id, kind) VALUES ($1, 'map')`, [randomUUID()]), /jobs_team_check/);
  await q(`INSERT INTO jobs (id, kind, status) VALUES ($1, 'monitor_run', 'running')`, [randomUUID()]);
});

test('an idempotency key is unique per team and kind while set', async () => {
  const key = `k-${randomUUID()}`;
  await insertJob(h.db, { id: randomUUID(), teamId, kind: 'batch', idempotencyKey: key });
  await assert.rejects(insertJob(h.db, { id: randomUUID(), teamId, kind: 'batch', idempotencyKey: key }), (e: Error & { cause?: { constraint?: string } }) => e.cause?.constraint === 'jobs_idempotency_idx');
  await insertJob(h.db, { id: randomUUID(), teamId, kind: 'crawl', idempotencyKey: key });
});

test('the stranded-job scan: live jobs with a workflow, older than the grace, minus the ones skipped', async () => {
  const [old, young, direct, ended, skipped] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  for (const id of [old, young, ended, skipped]) await insertJob(h.db, { id, teamId, kind: 'parse', status: 'running', workflowId: `parse-${id}` });
  await insertJob(h.db, { id: direct, teamId, kind: 'scrape', status: 'queued' });
  await q(`UPDATE jobs SET created_at = now() - interval '1 hour' WHERE id = ANY($1)`, [[old, direct, ended, skipped]]);
  await endJob(h.db, ended, { status: 'completed', keptMs: null });
  const live = (await liveJobsOlderThan(h.db, { minAgeMs: 60_000, limit: 1000, skip: [skipped] })).map((j) => j.id);
  assert.ok(live.includes(old));
  for (const id of [young, direct, ended, skipped]) assert.ok(!live.includes(id), id);
});

test("a zero-data-retention row keeps its request's end when it ends (its results must not outlive the request)", async () => {
  const [zdr, plain] = [randomUUID(), randomUUID()];
  await insertJob(h.db, { id: zdr, teamId, kind: 'parse', status: 'running', zeroDataRetention: true, expiresInMs: 60_000 });
  await insertJob(h.db, { id: plain, teamId, kind: 'parse', status: 'running' });
  for (const id of [zdr, plain]) await endJob(h.db, id, { status: 'completed', keptMs: null });
  const rows = (await q('SELECT id, expires_at FROM jobs WHERE id = ANY($1)', [[zdr, plain]])).rows;
  assert.ok(rows.find((r) => r.id === zdr).expires_at, 'still expires');
  assert.equal(rows.find((r) => r.id === plain).expires_at, null, 'kept');
});

test('the expiry path: an ended job goes at its time with its extension and events; a live one only when it keeps nothing', async () => {
  const [expired, kept, live, zdr] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  for (const id of [expired, kept]) await insertMapJob(h.db, { id, teamId, options: {} });
  await endJob(h.db, expired, { status: 'completed', keptMs: 1 });
  await endJob(h.db, kept, { status: 'completed', keptMs: null });
  await insertJob(h.db, { id: live, teamId, kind: 'parse', status: 'running', expiresInMs: 1 });
  await insertJob(h.db, { id: zdr, teamId, kind: 'parse', status: 'running', zeroDataRetention: true, expiresInMs: 1 });
  await q(`INSERT INTO job_events (job_id, seq, type, idempotency_key) VALUES ($1, 1, 'page', 'a')`, [expired]);
  await q(`INSERT INTO job_event_heads (job_id, last_seq) VALUES ($1, 1)`, [expired]);
  await new Promise((r) => setTimeout(r, 20));
  const gone = await deleteExpiredJobs(h.db);
  assert.ok((gone.map ?? 0) >= 1 && (gone.parse ?? 0) >= 1, JSON.stringify(gone));
  const left = async (table: string, col = 'id') => (await q(`SELECT 1 FROM ${table} WHERE ${col} = ANY($1)`, [[expired, kept, live, zdr]])).rowCount;
  assert.equal((await q('SELECT id FROM jobs WHERE id = ANY($1) ORDER BY id', [[expired, kept, live, zdr]])).rows.length, 2);
  assert.ok(await loadJob(h.db, kept));
  assert.ok(await loadJob(h.db, live), 'a live job is not deleted under its workers');
  assert.equal(await loadJob(h.db, zdr), null, "a zero-data-retention request's row goes at its time whatever its status");
  assert.equal(await left('map_jobs'), 1, 'the extension goes with its job');
  assert.equal(await left('job_events', 'job_id'), 0);
  assert.equal(await left('job_event_heads', 'job_id'), 0);
});
