import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { ensureTeam } from './index';
import { endInteractSession, loadInteractSession, openInteractSession, parkInteractPage, touchInteractSession } from './interact';
import { acquireConcurrencySlot, heldConcurrencySlots } from './limits';

let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 5 });
  await migrateDb(h);
}, { timeout: 120_000 });
after(() => h?.close(), { timeout: 30_000 });

const charges = async (scrapeId: string) =>
  (await h.db.execute<{ key: string; amount: number; kind: string }>(sql`SELECT idempotency_key AS key, amount, job_kind AS kind FROM credit_ledger WHERE job_id = ${scrapeId}`)).rows;

test('a session: parked, live on a queue holding a slot, ended once (slot freed, at least a browser minute billed)', { timeout: 60_000 }, async () => {
  const teamId = await ensureTeam(h.db, `interact-${randomUUID()}`);
  const scrapeId = randomUUID();
  await parkInteractPage(h.db, { scrapeId, teamId, queue: 'wds-browser-a' });
  assert.equal((await loadInteractSession(h.db, scrapeId))?.state, 'parked');
  // A parked page ended by another worker's report is left alone; a parked page ends unbilled.
  assert.equal((await endInteractSession(h.db, { scrapeId, reason: 'evicted', queue: 'wds-browser-b' })).ended, false);

  const slotId = (await acquireConcurrencySlot(h.db, teamId, 5, 1_000))!;
  await openInteractSession(h.db, { scrapeId, teamId, queue: 'wds-browser-a', slotId });
  assert.equal(await touchInteractSession(h.db, { scrapeId, queue: 'wds-browser-a', ttlMs: 600_000, prompted: true }), true);
  assert.equal(await touchInteractSession(h.db, { scrapeId, queue: 'wds-browser-b', ttlMs: 600_000 }), false, 'only the queue holding it');
  // The touch made the slot outlive its first ttl.
  await new Promise((r) => setTimeout(r, 1_200));
  assert.equal(await heldConcurrencySlots(h.db, teamId), 1);
  // A worker reporting its parked page gone does not end a live session.
  assert.equal((await endInteractSession(h.db, { scrapeId, reason: 'evicted', state: 'parked' })).ended, false);

  const ended = await endInteractSession(h.db, { scrapeId, reason: 'stopped' });
  assert.equal(ended.ended, true);
  assert.equal(ended.credits, 7, 'a prompt ran: 7 credits for the first minute');
  assert.ok(ended.durationMs >= 1_000);
  assert.equal(await heldConcurrencySlots(h.db, teamId), 0);
  const row = await loadInteractSession(h.db, scrapeId);
  assert.equal(row?.state, 'ended');
  assert.equal(row?.endReason, 'stopped');
  assert.deepEqual((await endInteractSession(h.db, { scrapeId, reason: 'idle' })).credits, 0, 'idempotent');
  const billed = await charges(scrapeId);
  assert.equal(billed.length, 1);
  assert.equal(billed[0]!.kind, 'interact');

  // A second session of the same scrape is billed on its own.
  await openInteractSession(h.db, { scrapeId, teamId, queue: 'wds-browser-c' });
  assert.equal((await endInteractSession(h.db, { scrapeId, reason: 'stopped' })).credits, 2, 'code only: 2 credits a minute');
  assert.equal((await charges(scrapeId)).length, 2);
});
