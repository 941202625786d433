import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { appendAgentMessage, connectDb, ensureTeam, insertAgentRun, insertAgentSnapshot, jobCreditBalance, loadAgentRun, migrateDb, type DbHandle } from '@wds/db';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { reservationKey, reserveForRun, shrinkReservation } from './billing';
import { loadRunContext } from './context';
import { createAgentControl } from './control';
import type { RunContext } from './context';

let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 20 });
  await migrateDb(h);
});
after(() => h?.close());

/** What billing reads of a run: its team, its job (root) and the job's maxCredits. */
function runContext(teamId: string, maxCredits: number): RunContext {
  const run = { id: randomUUID(), teamId, rootId: '', state: 'running' };
  run.rootId = run.id;
  return { run, root: run, options: { maxCredits }, rootOptions: { maxCredits }, isRoot: true, teamCap: null } as unknown as RunContext;
}

test("a step's reservation shrunk to its cost while sub-agents reserve: the job never holds more than maxCredits", async () => {
  const teamId = await ensureTeam(h.db, `billing-${randomUUID()}`);
  const CAP = 100;
  for (let round = 0; round < 30; round++) {
    const ctx = runContext(teamId, CAP);
    const step = reservationKey(ctx.run.id, `step:${round}`);
    // The step reserved its upper bound (60) and cost 50. A sub-agent asks for 60 meanwhile: that
    // never fits (60 + 60, then 50 + 60, are over 100), unless it lands between the release of
    // the 60 and the reservation of the 50, after which the step's 50 no longer fits.
    assert.deepEqual(await reserveForRun(h.db, ctx, step, 60), { granted: true });
    const subs = Array.from({ length: 6 }, (_, i) =>
      new Promise((r) => setTimeout(r, i * 2)).then(() => reserveForRun(h.db, ctx, reservationKey(ctx.run.id, `sub:${i}`), 60)),
    );
    const [held] = await Promise.all([shrinkReservation(h.db, ctx, step, 60, 50), ...subs]);
    const granted = (await Promise.all(subs)).filter((s) => s.granted).length;
    const job = await jobCreditBalance(h.db, ctx.root.id);
    assert.equal(granted, 0, `round ${round}: a sub-agent got credits the step was still holding`);
    assert.deepEqual(job, { used: 0, reserved: 50 }, `round ${round}: the step's cost stays reserved under the cap`);
    assert.equal(held, `${step}:actual`);
  }
});

test('shrinking is idempotent: a retried step shrinks once', async () => {
  const teamId = await ensureTeam(h.db, `billing-${randomUUID()}`);
  const ctx = runContext(teamId, 100);
  const step = reservationKey(ctx.run.id, 'step:1');
  await reserveForRun(h.db, ctx, step, 60);
  for (let i = 0; i < 3; i++) assert.equal(await shrinkReservation(h.db, ctx, step, 60, 20), `${step}:actual`);
  assert.deepEqual(await jobCreditBalance(h.db, ctx.root.id), { used: 0, reserved: 20 });
  assert.equal(await shrinkReservation(h.db, ctx, step, 60, 60), step, 'nothing to shrink: the estimate key holds it');
});

/** A job (root run) and one sub-agent, running, as the API and spawn_subagent store them. */
async function jobWithSubagent() {
  const teamId = await ensureTeam(h.db, `billing-${randomUUID()}`);
  const root = randomUUID();
  const child = randomUUID();
  const options = { prompt: 'x', maxCredits: 100, mode: 'extract' };
  await insertAgentRun(h.db, { id: root, teamId, rootId: root, threadId: root, options });
  await insertAgentRun(h.db, { id: child, teamId, rootId: root, parentId: root, threadId: root, name: 'subagent-1', options });
  return { root, child };
}

/** One item of work of a run: reserved, then committed with its cost (what a step or tool does). */
async function work(runId: string, item: string, credits: number): Promise<void> {
  const key = reservationKey(runId, item);
  assert.deepEqual(await reserveForRun(h.db, await loadRunContext(h.db, runId), key, credits), { granted: true });
  await appendAgentMessage(h.db, { runId, step: 1, role: 'tool', content: 'done', key: item, credits, reservationKey: key });
}

test("a sub-agent's work committed after its job succeeded (in flight at the end) is billed with the job, once", async () => {
  const { root, child } = await jobWithSubagent();
  const end = createAgentControl({ db: h.db, tools: async () => ({ search: false, browser: false }) });
  await work(root, 'tool:1:a', 2);
  // The sub-agent's scrape has reserved and is still running when the job ends.
  const late = reservationKey(child, 'tool:1:b');
  await reserveForRun(h.db, await loadRunContext(h.db, child), late, 3);
  assert.equal((await end.finishAgent({ runId: root, state: 'succeeded' })).state, 'succeeded');
  assert.equal((await loadAgentRun(h.db, root))!.creditsUsed, 2);
  // It commits after the job's bill was made; the job's results (its snapshots) are served, so it is billed.
  await appendAgentMessage(h.db, { runId: child, step: 1, role: 'tool', content: 'late', key: 'tool:1:b', credits: 3, reservationKey: late });
  for (let i = 0; i < 2; i++) {
    assert.equal((await end.finishAgent({ runId: child, state: 'cancelled' })).state, 'parent_finished');
    assert.deepEqual(await jobCreditBalance(h.db, root), { used: 5, reserved: 0 }, `finish #${i + 1}`);
    assert.equal((await loadAgentRun(h.db, root))!.creditsUsed, 5, "the job's creditsUsed follows its ledger");
  }
});

test("a failed job's late sub-agent work is released like the rest: it costs 0 (and is not served)", async () => {
  const { root, child } = await jobWithSubagent();
  const end = createAgentControl({ db: h.db, tools: async () => ({ search: false, browser: false }) });
  await work(root, 'tool:1:a', 2);
  // It had saved a result (save_result): a refused run keeps no data.
  await insertAgentSnapshot(h.db, { jobId: root, runId: root, key: 'tool:1:save:0', artifact: 'result', kind: 'json', content: '{"code":"x"}' });
  const late = reservationKey(child, 'tool:1:b');
  await reserveForRun(h.db, await loadRunContext(h.db, child), late, 3);
  assert.equal((await end.finishAgent({ runId: root, state: 'refused' })).state, 'refused');
  await appendAgentMessage(h.db, { runId: child, step: 1, role: 'tool', content: 'late', key: 'tool:1:b', credits: 3, reservationKey: late });
  await end.finishAgent({ runId: child, state: 'cancelled' });
  assert.deepEqual(await jobCreditBalance(h.db, root), { used: 0, reserved: 0 });
  const row = (await loadAgentRun(h.db, root))!;
  assert.equal(row.creditsUsed, 0);
  assert.equal(row.error, 'The agent refused the task.');
  assert.equal(row.data, null);
});
