import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { connectDb, ensureTeam, jobCreditBalance, migrateDb, type DbHandle } from '@wds/db';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { reservationKey, reserveForRun, shrinkReservation } from './billing';
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
