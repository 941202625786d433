import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import {
  agentTraceEvents, connectDb, ensureTeam, insertAgentRun, insertJob, insertSubagentRun, jobCreditBalance, loadAgentRun, loadJob, migrateDb, requestAgentCancel, reserveCredits, setJobWorkflow,
  type DbHandle,
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
 * recorded its id; one its parent has not started yet is left alone.
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
