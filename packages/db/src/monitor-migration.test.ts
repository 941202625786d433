import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { liveJobsOlderThan, loadJob } from './jobs/index';
import { ensureTeam } from './keys';
import { migrateDbBefore } from './migrate-before';
import { endMonitorRunChecks, monitorRunCounts, monitorRunHasTargets } from './monitor-runs';
import { listMonitorChecks, loadMonitorCheck } from './monitors';

/**
 * Migration 0035 (monitor_runs_on_jobs) on a database holding monitor runs of the old shape
 * (status scraping/completed/failed, own times): every run is a monitor_run job afterwards, a live
 * one still running under its workflow (the stranded-job sweeper judges it) and ended by its
 * workflow's end as before, an ended one expiring a day after its end; its checks read as before.
 */
let h: DbHandle;
let teamId: string;
const monitorId = randomUUID();
const runs = { live: randomUUID(), done: randomUUID(), failed: randomUUID() };
const checks = { live: randomUUID(), done: randomUUID() };
const q = (text: string, values: unknown[] = []) => h.pool.query(text, values);

before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 5 });
  await migrateDbBefore(h, '0035_monitor_runs_on_jobs');
  teamId = await ensureTeam(h.db, `monitor-migration-${randomUUID()}`);
  await q(`INSERT INTO monitors (id, team_id, name, schedule, targets, shard_key, running_check_id) VALUES ($1, $2, 'm', $3, $4, 7, $5)`, [
    monitorId, teamId, JSON.stringify({ cron: '0 * * * *', timezone: 'UTC' }), JSON.stringify([{ id: 't1', type: 'scrape', urls: ['https://a.example/'] }]), checks.live,
  ]);
  await q(`INSERT INTO monitor_runs (id, kind, status, checks, targets, created_at, finished_at) VALUES
    ($1, 'manual', 'scraping', 1, true, now() - interval '1 hour', NULL),
    ($2, 'scheduled', 'completed', 1, false, now() - interval '2 hours', now() - interval '90 minutes'),
    ($3, 'scheduled', 'failed', 0, false, now() - interval '3 hours', now() - interval '3 hours')`, [runs.live, runs.done, runs.failed]);
  await q(`INSERT INTO monitor_checks (id, monitor_id, team_id, run_id, status, trigger, started_at, finished_at, summary, actual_credits, billing_status, created_at) VALUES
    ($1, $3, $4, $5, 'running', 'manual', now() - interval '1 hour', NULL, NULL, NULL, 'not_applicable', now() - interval '1 hour'),
    ($2, $3, $4, $6, 'partial', 'scheduled', now() - interval '2 hours', now() - interval '90 minutes', $7, 2, 'confirmed', now() - interval '2 hours')`, [
    checks.live, checks.done, monitorId, teamId, runs.live, runs.done, JSON.stringify({ totalPages: 2, same: 1, changed: 0, new: 0, removed: 0, error: 1 }),
  ]);
  await q(`INSERT INTO monitor_check_pages (check_id, target_id, url_key, url, run_id, status) VALUES ($1, 't1', 'a', 'https://a.example/', $2, 'queued')`, [checks.live, runs.live]);
  await migrateDb(h);
});
after(() => h?.close());

test('every run is a monitor_run job of no team, its status in the kernel vocabulary', async () => {
  const rows = (await q(`SELECT id, team_id, kind, status, workflow_id, finished_at, expires_at - finished_at AS kept FROM jobs WHERE id = ANY($1)`, [Object.values(runs)])).rows;
  const by = new Map(rows.map((r) => [r.id, r]));
  assert.equal(rows.length, 3);
  for (const r of rows) assert.deepEqual([r.kind, r.team_id], ['monitor_run', null]);
  assert.equal(by.get(runs.live).status, 'running');
  assert.equal(by.get(runs.live).workflow_id, `monitor-run-${runs.live}`);
  assert.equal(by.get(runs.live).finished_at, null);
  assert.equal(by.get(runs.done).status, 'completed');
  assert.equal(by.get(runs.done).kept.days, 1, 'an ended run expires a day after its end (pruneMonitorChecks deleted it then)');
  assert.equal(by.get(runs.failed).status, 'failed');
  assert.equal(await monitorRunHasTargets(h.db, runs.live), true, 'the extension keeps what is its own');
});

test('a live run reads as before to its workflow, is judged by the one sweeper, and ends as before', async () => {
  const c = await monitorRunCounts(h.db, runs.live);
  assert.equal(c.status, 'scraping');
  assert.equal(c.queued, 1);
  assert.equal((await monitorRunCounts(h.db, runs.done)).status, 'completed');
  const live = await liveJobsOlderThan(h.db, { minAgeMs: 60_000, limit: 1000 });
  assert.ok(live.some((j) => j.id === runs.live && j.workflowId === `monitor-run-${runs.live}`));
  const r = await endMonitorRunChecks(h.db, runs.live, 'failed', 'gone');
  assert.equal(r.ended, true);
  assert.deepEqual(r.checks.map((k) => [k.id, k.status]), [[checks.live, 'failed']]);
  assert.equal((await loadJob(h.db, runs.live))?.status, 'failed');
  assert.equal((await endMonitorRunChecks(h.db, runs.live, 'failed', 'again')).ended, false, 'ends once');
  assert.equal((await q('SELECT running_check_id FROM monitors WHERE id = $1', [monitorId])).rows[0].running_check_id, null, 'the slot is freed');
});

test("the monitor's checks read as before", async () => {
  const done = await loadMonitorCheck(h.db, monitorId, checks.done);
  assert.equal(done?.status, 'partial');
  assert.equal(done?.actualCredits, 2);
  assert.equal(done?.runId, runs.done);
  assert.deepEqual((await listMonitorChecks(h.db, monitorId, { limit: 10, offset: 0 })).map((k) => k.id).sort(), [checks.live, checks.done].sort());
});
