import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { agentJob } from '@wds/workflows/job-specs';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { agentTraceEvents, listTeamAgents, teamThreadRuns } from './agent-reads';
import { loadAgentRun, loadTeamAgent, subagentsOf } from './agents';
import { loadTranscript } from './agent-transcript';
import { connectDb, migrateDb, type DbHandle } from './client';
import { ensureTeam } from './keys';
import { migrateDbBefore } from './migrate-before';

/**
 * Migration 0032 (agent_on_jobs) on a database holding agent runs of the old shape (state,
 * text error, own expiry): every run is readable afterwards with the same state, public status,
 * error, data and tree; live runs are judged by the sweeper by their workflow; a thread expires
 * whole, with its last turn; sub-agents go with their root.
 */
let h: DbHandle;
let teamId: string;
const q = (text: string, values: unknown[] = []) => h.pool.query(text, values);
const id = () => randomUUID();
const ids = {
  turn1: id(), turn2: id(), sub: id(), live: id(), liveSub: id(), unstartedSub: id(), refused: id(), cancelling: id(), held: id(), holding: id(), orphan: id(),
};

interface OldRun {
  id: string;
  root?: string;
  parent?: string;
  thread?: string;
  turn?: number;
  state: string;
  error?: string;
  data?: unknown;
  credits?: number;
  /** Hours from now. */
  expires?: number;
  finished?: boolean;
}

async function insertOld(r: OldRun) {
  await q(
    `INSERT INTO agent_runs (id, team_id, root_id, parent_id, thread_id, thread_turn, name, status, state, options, data, error, credits_used, finished_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, CASE WHEN $14 THEN now() END, now() + make_interval(hours => $15))`,
    [
      r.id, teamId, r.root ?? r.id, r.parent ?? null, r.thread ?? r.root ?? r.id, r.turn ?? 1, r.parent ? 'subagent-1' : 'orchestrator',
      r.state === 'succeeded' ? 'completed' : ['running', 'cancelling'].includes(r.state) ? 'processing' : 'failed',
      r.state, JSON.stringify({ prompt: `prompt of ${r.id}`, maxCredits: 100 }), r.data === undefined ? null : JSON.stringify(r.data), r.error ?? null, r.credits ?? 0,
      r.finished ?? !['running', 'cancelling'].includes(r.state), r.expires ?? 24,
    ],
  );
}

before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 5 });
  await migrateDbBefore(h, '0032_agent_on_jobs');
  teamId = await ensureTeam(h.db, `agent-migration-${randomUUID()}`);
  // A thread of two ended turns (the first expired on its own clock, the second not), the second with a sub-agent.
  await insertOld({ id: ids.turn1, state: 'succeeded', data: { a: 1 }, credits: 7, expires: -1 });
  await insertOld({ id: ids.turn2, thread: ids.turn1, turn: 2, state: 'succeeded', data: { a: 2 }, credits: 3, expires: 20 });
  await insertOld({ id: ids.sub, root: ids.turn2, parent: ids.turn2, thread: ids.turn1, turn: 2, state: 'parent_finished', error: 'The sub-agent was stopped' });
  // A live job: its sub-agent whose workflow ran (it wrote its first event), and one its parent had not started yet.
  await insertOld({ id: ids.live, state: 'running' });
  await insertOld({ id: ids.liveSub, root: ids.live, parent: ids.live, state: 'running' });
  await insertOld({ id: ids.unstartedSub, root: ids.live, parent: ids.live, state: 'running' });
  await q(`INSERT INTO job_events (job_id, seq, type, payload, idempotency_key) VALUES ($1, 1, 'agent.started', '{}', 'agent.started')`, [ids.liveSub]);
  await q(`INSERT INTO agent_messages (run_id, step, role, content, key) VALUES ($1, 0, 'user', 'hello', 'user')`, [ids.live]);
  await insertOld({ id: ids.refused, state: 'refused', error: 'The agent refused the task.' });
  await insertOld({ id: ids.cancelling, state: 'cancelling' });
  // A thread whose second turn runs: its ended first turn must not expire meanwhile.
  await insertOld({ id: ids.held, state: 'succeeded', expires: -1 });
  await insertOld({ id: ids.holding, thread: ids.held, turn: 2, state: 'running' });
  // A sub-agent whose root is gone: nothing could reach it.
  await insertOld({ id: ids.orphan, root: randomUUID(), parent: randomUUID(), state: 'running' });
  await migrateDb(h);
}, { timeout: 120_000 });
after(() => h?.close());

const jobRow = async (runId: string) =>
  (await q(`SELECT kind, status, outcome, parent_id, workflow_id, error, team_id, expires_at FROM jobs WHERE id = $1`, [runId])).rows[0] as
    | { kind: string; status: string; outcome: string | null; parent_id: string | null; workflow_id: string | null; error: unknown; team_id: string; expires_at: Date | null }
    | undefined;

test('ended runs read as before: state, public status, data, error, credits; the tree is kept', async () => {
  const t2 = await loadTeamAgent(h.db, teamId, ids.turn2);
  assert.equal(t2?.state, 'succeeded');
  assert.equal(agentJob.publicStatus(t2!), 'completed');
  assert.deepEqual(t2?.data, { a: 2 });
  assert.equal(t2?.creditsUsed, 3);
  assert.equal(t2?.threadId, ids.turn1);
  assert.equal(t2?.threadTurn, 2);
  const refused = await loadTeamAgent(h.db, teamId, ids.refused);
  assert.deepEqual([refused?.status, refused?.outcome, refused?.state, refused?.error], ['failed', 'refused', 'refused', 'The agent refused the task.']);
  assert.equal(agentJob.publicStatus(refused!), 'failed');
  assert.deepEqual((await jobRow(ids.refused))?.error, { kind: 'AGENT', code: 'refused', message: 'The agent refused the task.' });
  assert.equal((await loadTeamAgent(h.db, teamId, ids.cancelling))?.state, 'cancelling');
  const sub = await loadAgentRun(h.db, ids.sub);
  assert.deepEqual([sub?.state, sub?.rootId, sub?.parentId, sub?.teamId], ['parent_finished', ids.turn2, ids.turn2, teamId]);
  assert.equal((await jobRow(ids.sub))?.parent_id, ids.turn2, "a sub-agent's job goes with its root");
  assert.equal(await loadTeamAgent(h.db, teamId, ids.sub), null, 'a sub-agent is not a job of the team');
  assert.deepEqual((await subagentsOf(h.db, ids.live)).map((s) => s.id).sort(), [ids.liveSub, ids.unstartedSub].sort());
  assert.deepEqual((await teamThreadRuns(h.db, teamId, ids.turn1)).map((r) => r.id), [ids.turn1, ids.turn2]);
  const listed = (await listTeamAgents(h.db, teamId, null, 50)).map((r) => r.id);
  assert.deepEqual(listed.sort(), [ids.turn1, ids.turn2, ids.live, ids.refused, ids.cancelling, ids.held, ids.holding].sort(), 'roots only');
  assert.equal((await loadTranscript(h.db, ids.live, 1)).length, 1, 'transcripts stay with their runs');
  assert.equal((await agentTraceEvents(h.db, ids.live)).length, 1, "a sub-agent's events are its job's trace");
});

test('live runs: a root and a started sub-agent carry their workflow id for the sweeper; a sub-agent not started yet none', async () => {
  assert.equal((await jobRow(ids.live))?.workflow_id, agentJob.workflowId(ids.live));
  assert.equal((await jobRow(ids.cancelling))?.workflow_id, agentJob.workflowId(ids.cancelling));
  assert.equal((await jobRow(ids.liveSub))?.workflow_id, agentJob.workflowId(ids.liveSub));
  assert.equal((await jobRow(ids.unstartedSub))?.workflow_id, null);
  assert.equal((await jobRow(ids.turn2))?.workflow_id, null, 'an ended run is not swept');
  assert.equal((await loadAgentRun(h.db, ids.live))?.state, 'running');
});

test('expiry is data: a thread expires with its last turn, not while a turn runs; sub-agents and live runs have none of their own', async () => {
  const [t1, t2] = [await jobRow(ids.turn1), await jobRow(ids.turn2)];
  assert.ok(t2?.expires_at && t2.expires_at.getTime() > Date.now() + 19 * 3_600_000);
  assert.equal(t1?.expires_at?.getTime(), t2.expires_at.getTime(), "the first turn waits for the thread's last");
  assert.equal((await jobRow(ids.held))?.expires_at, null, 'a turn of a running thread is held');
  for (const runId of [ids.holding, ids.live, ids.sub, ids.liveSub]) assert.equal((await jobRow(runId))?.expires_at, null, runId);
  assert.ok((await jobRow(ids.refused))?.expires_at);
});

test('a sub-agent whose root was gone is dropped', async () => {
  assert.equal(await jobRow(ids.orphan), undefined);
  assert.equal((await q(`SELECT 1 FROM agent_runs WHERE id = $1`, [ids.orphan])).rowCount, 0);
});
