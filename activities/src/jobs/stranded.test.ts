import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import {
  agentTraceEvents, claimManualCheck, connectDb, ensureTeam, findJobByIdempotencyKey, insertAgentRun, insertCrawlJob, insertExtractJob, insertJob, insertMonitor, insertSubagentRun, jobCreditBalance, jobEventsAfter, loadAgentRun, loadCrawlJob, loadExtractJob, loadJob, loadMonitorCheck, loadTeamMonitor, markJobCancelled, migrateDb, requestAgentCancel, reserveCredits, setJobWorkflow, type DbHandle,
} from '@wds/db';
import { namespaceFor, stackDatabase, testInfra, until } from '@wds/test-utils';
import { agentJob } from '@wds/workflows/job-specs';
import { startJobSweeper } from './stranded';

/**
 * The one stranded-job sweeper against a real Postgres and a real Temporal: a job whose workflow
 * was never started is failed, one asked to stop is cancelled, one whose workflow is open (on a
 * queue no worker serves: Temporal still says running) is left alone, and a young job too. Agent
 * runs end through the workflow's own end — `internal` and retryable, reservations released, terminal
 * trace events written; one being cancelled `cancelled`. A sub-agent is judged once its workflow
 * recorded its id; one its parent has not started yet is left alone. A monitor run ends through the
 * run's own end: its check fails, its monitor's slot is freed.
 */
const namespace = namespaceFor(import.meta.url);
let h: DbHandle;
let connection: Connection;
let client: Client;
let teamId: string;

before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespace), { max: 5 });
  await migrateDb(h);
  teamId = await ensureTeam(h.db, 'stranded');
  connection = await Connection.connect({ address: testInfra().temporalAddress });
  client = new Client({ connection, namespace });
});
after(async () => {
  await connection?.close();
  await h?.close();
});

test('jobs no workflow runs end (failed, or cancelled when asked to stop); running and young ones stay', async () => {
  const [missing, cancelling, open, young] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  await insertJob(h.db, { id: missing, teamId, kind: 'parse', status: 'running', workflowId: `parse-${missing}` });
  await insertJob(h.db, { id: cancelling, teamId, kind: 'map', status: 'cancelling', workflowId: `map-${cancelling}` });
  await insertJob(h.db, { id: open, teamId, kind: 'map', status: 'running', workflowId: `map-${open}` });
  await insertJob(h.db, { id: young, teamId, kind: 'map', status: 'running', workflowId: `map-${young}` });
  await h.pool.query(`UPDATE jobs SET created_at = now() - interval '1 hour' WHERE id = ANY($1)`, [[missing, cancelling, open]]);
  await client.workflow.start('mapWorkflow', { taskQueue: `nobody-${randomUUID()}`, workflowId: `map-${open}`, args: [{ jobId: open, timeoutMs: 1000 }] });
  const ended: string[] = [];
  const sweeper = startJobSweeper({ db: h.db, temporal: connection, namespace, graceMs: 60_000, everyMs: 200, onFailed: (id) => ended.push(id) });
  try {
    await until(async () => (await loadJob(h.db, missing))?.status === 'failed' && (await loadJob(h.db, cancelling))?.status === 'cancelled', 'the stranded jobs to end', { timeoutMs: 20_000 });
    const failed = await loadJob(h.db, missing);
    assert.match(failed!.error!.message, /workflow was never started/);
    assert.equal((await loadJob(h.db, cancelling))!.error, null, 'a job asked to stop ends cancelled, not failed');
    // A few more sweeps: nothing else ends, and nothing ends twice.
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal((await loadJob(h.db, open))!.status, 'running');
    assert.equal((await loadJob(h.db, young))!.status, 'running');
    assert.deepEqual(ended.sort(), [missing, cancelling].sort());
  } finally {
    await sweeper.stop();
    await client.workflow.getHandle(`map-${open}`).terminate().catch(() => {});
  }
});

test("crawls and batches no workflow runs end through the crawl's own end: counters, key released, the failed event; a cancel ends cancelled", async () => {
  const [never, cancelled] = [randomUUID(), randomUUID()];
  const seeds = ['a', 'b'].map((k) => ({ url: `http://a.test/${k}`, key: k, depth: 0, external: false }));
  await insertCrawlJob(h.db, { id: never, teamId, kind: 'batch', url: null, options: { webhook: { url: 'http://hook.test/' } }, pageLimit: 2, zeroDataRetention: false, idempotencyKey: `k-${never}` }, seeds);
  await insertCrawlJob(h.db, { id: cancelled, teamId, kind: 'crawl', url: 'http://a.test/', options: { scrapeOptions: {} }, pageLimit: 2, zeroDataRetention: false }, seeds);
  await h.pool.query(`INSERT INTO crawl_documents (job_id, url_key, document, credits) VALUES ($1, 'a', '{}', 1)`, [never]);
  assert.equal(await markJobCancelled(h.db, cancelled), true);
  await h.pool.query(`UPDATE jobs SET created_at = now() - interval '1 hour' WHERE id = ANY($1)`, [[never, cancelled]]);
  const sweeper = startJobSweeper({ db: h.db, temporal: connection, namespace, graceMs: 60_000, everyMs: 200 });
  try {
    await until(async () => (await loadJob(h.db, never))?.status === 'failed' && (await loadJob(h.db, cancelled))?.status === 'cancelled', 'the stranded crawl and batch to end', { timeoutMs: 20_000 });
    const batch = (await loadCrawlJob(h.db, never))!;
    assert.deepEqual([batch.status, batch.completed, batch.creditsUsed], ['failed', 1, 1], 'its final counters, as its workflow would have written them');
    assert.match(batch.error ?? '', /workflow was never started/);
    assert.ok(batch.completedAt && batch.expiresAt.getTime() > Date.now() + 23 * 3_600_000, 'kept 24 h from its end');
    assert.equal(await findJobByIdempotencyKey(h.db, teamId, `k-${never}`), null, 'its key is released: a retry starts afresh');
    assert.deepEqual((await jobEventsAfter(h.db, never)).map((e) => e.type), ['failed'], 'the failure is announced to its webhook');
    const crawl = (await loadCrawlJob(h.db, cancelled))!;
    assert.deepEqual([crawl.status, crawl.error], ['cancelled', null]);
    assert.deepEqual((await jobEventsAfter(h.db, cancelled)).length, 0, 'a cancelled job announces nothing');
    const urls = (await h.pool.query(`SELECT DISTINCT status FROM crawl_urls WHERE job_id = $1`, [cancelled])).rows.map((r) => r.status);
    assert.deepEqual(urls, ['cancelled']);
  } finally {
    await sweeper.stop();
  }
});

test('an extract no workflow runs ends through its own end (fetch phase or model steps alike), its reservations released', async () => {
  const [fetching, merging] = [randomUUID(), randomUUID()];
  for (const id of [fetching, merging]) {
    await insertExtractJob(h.db, { id, teamId, options: { prompt: 'x' }, pageOptions: {}, pageLimit: 2, seeds: [{ url: 'http://a.test/a', key: 'a', depth: 0, external: false }] });
  }
  // Past its fetch phase: its frontier closed, the extract still running.
  await h.pool.query(`UPDATE crawl_urls SET status = 'done' WHERE job_id = $1`, [merging]);
  await reserveCredits(h.db, { teamId, jobId: merging, kind: 'extract', amount: 3, key: `extract:${merging}:page:1`, jobCap: 100, teamCap: null });
  await h.pool.query(`UPDATE jobs SET created_at = now() - interval '1 hour' WHERE id = ANY($1)`, [[fetching, merging]]);
  const sweeper = startJobSweeper({ db: h.db, temporal: connection, namespace, graceMs: 60_000, everyMs: 200 });
  try {
    await until(async () => (await loadExtractJob(h.db, fetching))?.status === 'failed' && (await loadExtractJob(h.db, merging))?.status === 'failed', 'the stranded extracts to fail', { timeoutMs: 20_000 });
    assert.match((await loadExtractJob(h.db, fetching))!.error ?? '', /workflow was never started/);
    assert.deepEqual(await jobCreditBalance(h.db, merging), { used: 0, reserved: 0 }, 'its reservations are released');
  } finally {
    await sweeper.stop();
  }
});

const options = { prompt: 'x', maxCredits: 100, strictConstrainToURLs: false, model: 'spark-2', mode: 'extract' };

const root = async () => {
  const id = randomUUID();
  await insertAgentRun(h.db, { id, teamId, rootId: id, threadId: id, options });
  return id;
};

test('agent runs no workflow runs end through finishAgent; open ones and unstarted sub-agents stay', { timeout: 60_000 }, async () => {
  const [never, cancelling, open] = [await root(), await root(), await root()];
  await reserveCredits(h.db, { teamId, jobId: never, kind: 'agent', amount: 5, key: `agent:${never}:step:1`, jobCap: 100, teamCap: null });
  await requestAgentCancel(h.db, cancelling);
  // Sub-agents of a job that runs: one whose workflow recorded its id and is gone, one not started yet.
  const [gone, unstarted] = [randomUUID(), randomUUID()];
  for (const id of [gone, unstarted]) await insertSubagentRun(h.db, { id, teamId, rootId: open, parentId: open, threadId: open, threadTurn: 1, options }, 5);
  await setJobWorkflow(h.db, gone, agentJob.workflowId(gone));
  await h.pool.query(`UPDATE jobs SET created_at = now() - interval '1 hour' WHERE id = ANY($1)`, [[never, cancelling, open, gone, unstarted]]);
  // An open workflow on a queue nobody serves: Temporal says running.
  const handle = await client.workflow.start('agentWorkflow', {
    taskQueue: `nobody-${randomUUID()}`, workflowId: agentJob.workflowId(open), args: [{ runId: open, rootId: open, plan: { stepsPerRun: 1, maxSteps: 1 } }],
  });
  const ended: string[] = [];
  const sweeper = startJobSweeper({ db: h.db, temporal: connection, namespace, graceMs: 60_000, everyMs: 200, onFailed: (id) => ended.push(id) });
  try {
    const stateOf = async (id: string) => (await loadAgentRun(h.db, id))?.state;
    await until(async () => (await stateOf(never)) === 'internal' && (await stateOf(cancelling)) === 'cancelled' && (await stateOf(gone)) === 'internal', 'the stranded runs to end', { timeoutMs: 30_000 });
    const failed = (await loadAgentRun(h.db, never))!;
    assert.equal(agentJob.publicStatus(failed), 'failed');
    assert.match(failed.error ?? '', /workflow was never started/);
    assert.equal(failed.creditsUsed, 0);
    assert.deepEqual(await jobCreditBalance(h.db, never), { used: 0, reserved: 0 }, 'its reservations are released');
    const finished = (await agentTraceEvents(h.db, never)).find((e) => e.type === 'run.finished');
    assert.deepEqual(finished?.payload.outcome, 'failed');
    assert.deepEqual([(finished?.payload.error as { code: string }).code, (finished?.payload.error as { retryable: boolean }).retryable], ['internal', true]);
    assert.ok(failed.expiresAt, 'an ended turn expires');
    assert.equal((await loadAgentRun(h.db, cancelling))!.error, 'Agent was cancelled');
    // The sub-agent whose workflow is gone: ended, so its parent waiting in wait_subagents finds it in Postgres.
    assert.match((await loadAgentRun(h.db, gone))!.error ?? '', /workflow was never started/);
    assert.ok((await agentTraceEvents(h.db, open)).some((e) => e.runId === gone && e.type === 'agent.finished'));

    await new Promise((r) => setTimeout(r, 1_000));
    for (const id of [open, unstarted]) assert.equal(await stateOf(id), 'running', id);
    // (The sweeper also ends what the test above left: its map job whose workflow it terminated.)
    const mine: string[] = [never, cancelling, gone, open, unstarted];
    assert.deepEqual(ended.filter((id) => mine.includes(id)).sort(), [never, cancelling, gone].sort(), 'each ended once');
  } finally {
    await sweeper.stop();
    await handle.terminate().catch(() => {});
  }
});

test("a monitor run no workflow runs ends through the run's end: its check fails, the monitor's slot is freed", async () => {
  const [monitorId, runId, checkId] = [randomUUID(), randomUUID(), randomUUID()];
  await insertMonitor(h.db, { id: monitorId, teamId, name: 'stranded', schedule: { cron: '0 * * * *', timezone: 'UTC' }, targets: [{ id: 't1', type: 'scrape', urls: ['https://a.example/'] }], shardKey: 1 });
  const claim = await claimManualCheck(h.db, { teamId, monitorId, runId, checkId, pages: [{ targetId: 't1', url: 'https://a.example/', urlKey: 'https://a.example/' }], targets: [] });
  assert.equal(claim.started, true);
  assert.equal((await loadJob(h.db, runId))?.status, 'running');
  await h.pool.query(`UPDATE jobs SET created_at = now() - interval '1 hour' WHERE id = $1`, [runId]);
  const ended: string[] = [];
  const sweeper = startJobSweeper({ db: h.db, temporal: connection, namespace, graceMs: 60_000, everyMs: 200, onFailed: (id) => ended.push(id) });
  try {
    await until(async () => (await loadJob(h.db, runId))?.status === 'failed', 'the stranded run to end', { timeoutMs: 30_000 });
    const check = (await loadMonitorCheck(h.db, monitorId, checkId))!;
    assert.equal(check.status, 'failed');
    assert.equal((await loadTeamMonitor(h.db, teamId, monitorId))?.runningCheckId, null);
    assert.deepEqual(ended.filter((id) => id === runId), [runId], 'ended once');
  } finally {
    await sweeper.stop();
  }
});
