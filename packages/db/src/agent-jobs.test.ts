import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { agentJob } from '@wds/workflows/job-specs';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { insertSubagentRun } from './agent-spawn';
import { appendAgentMessage } from './agent-transcript';
import { finishAgentRunRow, insertAgentRun, loadAgentRun, requestAgentCancel, syncAgentJobBill } from './agents';
import { connectDb, migrateDb, type DbHandle } from './client';
import { appendJobEvent } from './events';
import { deleteExpiredJobs, loadJob } from './jobs/index';
import { ensureTeam } from './keys';
import { chargeCredits } from './ledger';

/**
 * Agent runs on the job kernel: how an end is written (once, as status + outcome), how a thread
 * expires (whole, never while a turn runs: expressed in `expires_at`), and what goes with a root.
 */
let h: DbHandle;
let teamId: string;
const q = (text: string, values: unknown[] = []) => h.pool.query(text, values);
const DAY = 24 * 3_600_000;

before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 5 });
  await migrateDb(h);
  teamId = await ensureTeam(h.db, `agent-jobs-${randomUUID()}`);
}, { timeout: 120_000 });
after(() => h?.close());

const options = { prompt: 'x', maxCredits: 100 };
const expiresOf = async (id: string) => ((await q('SELECT expires_at FROM jobs WHERE id = $1', [id])).rows[0]?.expires_at as Date | null | undefined);
const newRoot = async (thread?: string, turn = 1) => {
  const id = randomUUID();
  await insertAgentRun(h.db, { id, teamId, rootId: id, threadId: thread ?? id, threadTurn: turn, options });
  return id;
};
const end = (id: string, state: Parameters<typeof finishAgentRunRow>[2]['state'], root = true) => finishAgentRunRow(h.db, id, { state, creditsUsed: 0, root, error: state === 'succeeded' ? null : `ended ${state}` });

test('a run ends once, as its job status and outcome; the public words come from them', async () => {
  const cases = [
    ['succeeded', 'completed', null, 'completed'],
    ['cancelled', 'cancelled', null, 'failed'],
    ['credit_limit_reached', 'failed', 'credit_limit_reached', 'failed'],
    ['refused', 'failed', 'refused', 'failed'],
    ['internal', 'failed', 'internal', 'failed'],
  ] as const;
  for (const [state, status, outcome, word] of cases) {
    const id = await newRoot();
    const live = (await loadAgentRun(h.db, id))!;
    assert.deepEqual([live.status, live.state, agentJob.publicStatus(live)], ['running', 'running', 'processing']);
    assert.equal(await end(id, state), true);
    assert.equal(await end(id, 'internal'), false, 'a second end (a retry, the sweeper) changes nothing');
    const r = (await loadAgentRun(h.db, id))!;
    assert.deepEqual([r.status, r.outcome, r.state, agentJob.publicStatus(r)], [status, outcome, state, word]);
    assert.equal(r.error, state === 'succeeded' ? null : `ended ${state}`);
    assert.ok(r.finishedAt);
  }
});

test('a cancel request: running -> cancelling once; then the end is cancelled', async () => {
  const id = await newRoot();
  assert.deepEqual(await requestAgentCancel(h.db, id), { outcome: 'cancelling' });
  assert.deepEqual(await requestAgentCancel(h.db, id), { outcome: 'already_cancelling' });
  const r = (await loadAgentRun(h.db, id))!;
  assert.deepEqual([r.status, r.state, agentJob.publicStatus(r)], ['cancelling', 'cancelling', 'processing']);
  await end(id, 'cancelled');
  assert.deepEqual(await requestAgentCancel(h.db, id), { outcome: 'finished', state: 'cancelled' });
});

test("a thread expires whole: a new turn holds the earlier ones, a turn's end releases the thread 24 h later", async () => {
  const turn1 = await newRoot();
  assert.equal(await expiresOf(turn1), null, 'a running turn has no expiry');
  await end(turn1, 'succeeded');
  const first = (await expiresOf(turn1))!;
  assert.ok(Math.abs(first.getTime() - Date.now() - DAY) < 60_000, String(first));

  const turn2 = await newRoot(turn1, 2);
  assert.equal(await expiresOf(turn1), null, 'while a turn runs no turn of its thread expires');
  // However far its old expiry had passed, a held turn is not taken.
  await deleteExpiredJobs(h.db);
  assert.ok(await loadJob(h.db, turn1));

  await end(turn2, 'refused');
  const [e1, e2] = [await expiresOf(turn1), await expiresOf(turn2)];
  assert.ok(e2 && Math.abs(e2.getTime() - Date.now() - DAY) < 60_000);
  assert.equal(e1?.getTime(), e2.getTime(), "every turn of the thread expires with its last turn's end");

  // Another thread's turns are not touched.
  const other = await newRoot();
  await end(other, 'succeeded');
  const otherExpiry = await expiresOf(other);
  await newRoot(turn1, 3).then((t3) => end(t3, 'succeeded'));
  assert.equal((await expiresOf(other))?.getTime(), otherExpiry?.getTime());
});

test('a turn ending while another turn of its thread still runs does not release the thread', async () => {
  const turn1 = await newRoot();
  await end(turn1, 'succeeded');
  // Two follow-ups that raced past the busy check: the first to end must not set the others' expiry.
  const [a, b] = [await newRoot(turn1, 2), await newRoot(turn1, 2)];
  await end(a, 'succeeded');
  assert.equal(await expiresOf(turn1), null);
  assert.equal(await expiresOf(b), null);
  await end(b, 'succeeded');
  assert.equal((await expiresOf(turn1))?.getTime(), (await expiresOf(a))?.getTime());
});

test('sub-agents: a job under their root, no workflow id until theirs runs, no expiry of their own; they and their events go with the root', async () => {
  const root = await newRoot();
  const sub = randomUUID();
  const r = await insertSubagentRun(h.db, { id: sub, teamId, rootId: root, parentId: root, threadId: root, threadTurn: 1, options }, 5);
  assert.equal(r.kind, 'inserted');
  const row = (await q('SELECT kind, parent_id, workflow_id, status FROM jobs WHERE id = $1', [sub])).rows[0];
  assert.deepEqual(row, { kind: 'agent', parent_id: root, workflow_id: null, status: 'running' });
  await appendAgentMessage(h.db, { runId: sub, step: 0, role: 'user', content: 'hi', key: 'user' });
  for (const id of [root, sub]) await appendJobEvent(h.db, { jobId: id, type: 'agent.started', key: 'agent.started', payload: {} });

  await end(sub, 'parent_finished', false);
  assert.equal((await loadAgentRun(h.db, sub))?.state, 'parent_finished');
  assert.equal(await expiresOf(sub), null, 'a sub-agent goes with its root, not at a time of its own');
  await end(root, 'succeeded');
  await q(`UPDATE jobs SET expires_at = now() - interval '1 second' WHERE id = $1`, [root]);
  const gone = await deleteExpiredJobs(h.db);
  assert.ok((gone.agent ?? 0) >= 1);
  for (const id of [root, sub]) assert.equal(await loadJob(h.db, id), null, id);
  const left = async (table: string, col: string) => (await q(`SELECT 1 FROM ${table} WHERE ${col} = ANY($1)`, [[root, sub]])).rowCount;
  assert.equal(await left('agent_runs', 'id'), 0);
  assert.equal(await left('agent_messages', 'run_id'), 0);
  assert.equal(await left('job_events', 'job_id'), 0, "the sub-agent's events go too");
  assert.equal(await left('job_event_heads', 'job_id'), 0);
});

test("a succeeded job's credits follow its ledger; a failed one's never", async () => {
  const [won, lost] = [await newRoot(), await newRoot()];
  await end(won, 'succeeded');
  await end(lost, 'refused');
  for (const id of [won, lost]) {
    await chargeCredits(h.db, { teamId, jobId: id, kind: 'agent', amount: 4, key: `late:${id}` });
  }
  assert.equal(await syncAgentJobBill(h.db, won), 4);
  assert.equal(await syncAgentJobBill(h.db, lost), 0);
  assert.equal((await loadAgentRun(h.db, won))?.creditsUsed, 4);
  assert.equal((await loadAgentRun(h.db, lost))?.creditsUsed, 0);
});
