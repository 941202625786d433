import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { insertSubagentRun, type NewSubagent } from './agent-spawn';
import { insertAgentRun, subagentsOf } from './agents';
import { connectDb, migrateDb, type DbHandle } from './client';
import { ensureTeam } from './index';

let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 20 });
  await migrateDb(h);
}, { timeout: 120_000 });
after(() => h?.close(), { timeout: 30_000 });

async function newJob(): Promise<{ root: string; spawn: (id: string) => NewSubagent }> {
  const teamId = await ensureTeam(h.db, `spawn-${randomUUID()}`);
  const root = randomUUID();
  await insertAgentRun(h.db, { id: root, teamId, rootId: root, threadId: root, options: { prompt: 'x' } });
  return { root, spawn: (id) => ({ id, teamId, rootId: root, parentId: root, threadId: root, threadTurn: 1, options: { prompt: `sub ${id}` } }) };
}

test('16 spawns at once under a cap of 5: exactly 5 sub-agents, named 1 to 5; the other 11 are refused', { timeout: 60_000 }, async () => {
  for (let round = 0; round < 5; round++) {
    const { root, spawn } = await newJob();
    const ids = Array.from({ length: 16 }, () => randomUUID());
    const outcomes = await Promise.all(ids.map((id) => insertSubagentRun(h.db, spawn(id), 5)));
    assert.equal(outcomes.filter((o) => o.kind === 'inserted').length, 5, `round ${round}: ${JSON.stringify(outcomes)}`);
    assert.equal(outcomes.filter((o) => o.kind === 'full').length, 11);
    const rows = await subagentsOf(h.db, root);
    assert.equal(rows.length, 5);
    assert.deepEqual(rows.map((r) => r.name).sort(), ['subagent-1', 'subagent-2', 'subagent-3', 'subagent-4', 'subagent-5']);
  }
});

test('a retried spawn (same id) is not counted twice, in any order; a refused one stays refused', { timeout: 60_000 }, async () => {
  const { root, spawn } = await newJob();
  const ids = Array.from({ length: 7 }, () => randomUUID());
  // Each spawn twice, the retries interleaved with the first attempts in a shuffled order.
  const order = [...ids, ...ids].sort(() => Math.random() - 0.5);
  const outcomes = await Promise.all(order.map((id) => insertSubagentRun(h.db, spawn(id), 5).then((o) => ({ id, o }))));
  const rows = await subagentsOf(h.db, root);
  assert.equal(rows.length, 5);
  for (const id of ids) {
    const mine = outcomes.filter((x) => x.id === id).map((x) => x.o.kind).sort();
    const stored = rows.some((r) => r.id === id);
    // A stored sub-agent was inserted once and found once; a refused one was refused both times.
    assert.deepEqual(mine, stored ? ['exists', 'inserted'] : ['full', 'full'], `${id}: ${mine.join(',')}`);
  }
  assert.deepEqual(await insertSubagentRun(h.db, spawn(rows[0]!.id), 5), { kind: 'exists' });
});
