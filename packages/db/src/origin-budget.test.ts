import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { backOffOrigin, beginOriginStart, originBudgetState, recoverOrigin, releaseOriginSlot, renewHolder, takeOriginSlot, type OriginTake } from './origin-budget';

let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 8 });
  await migrateDb(h);
}, { timeout: 120_000 });
after(() => h?.close(), { timeout: 30_000 });

const origin = () => `http://o-${randomUUID().slice(0, 8)}.test`;
const take = (o: Partial<OriginTake> & Pick<OriginTake, 'origin' | 'holder'>) => takeOriginSlot(h.db, { cap: 0, intervalMs: 0, recoveryMs: 500, deadlineInMs: null, ...o });

test('the cap holds under concurrent takes from two holders; a release lets the next one in', async () => {
  const [a, b, o] = [randomUUID(), randomUUID(), origin()];
  await Promise.all([renewHolder(h.db, a, 10_000), renewHolder(h.db, b, 10_000)]);
  const results = await Promise.all(Array.from({ length: 24 }, (_, i) => take({ origin: o, holder: i % 2 ? a : b, cap: 3 })));
  assert.equal(results.filter((r) => r.granted).length, 3, 'exactly the cap is granted');
  assert.ok(results.filter((r) => !r.granted).every((r) => r.startInMs === null && r.inFlight === 3), 'the refused see the cap full');
  const holderOfFirst = results.findIndex((r) => r.granted) % 2 ? a : b;
  await releaseOriginSlot(h.db, o, holderOfFirst);
  assert.equal((await take({ origin: o, holder: a, cap: 3 })).granted, true);
  assert.equal((await take({ origin: o, holder: b, cap: 3 })).granted, false);
  assert.equal((await originBudgetState(h.db, o))?.inFlight, 3);
});

test('starts are reserved an interval apart; a start past the deadline reserves nothing', async () => {
  const [a, o] = [randomUUID(), origin()];
  await renewHolder(h.db, a, 10_000);
  // Absolute start times (startInMs is from the moment of each call).
  const starts: number[] = [];
  const at = async (o2: Partial<OriginTake> = {}) => {
    const r = await take({ origin: o, holder: a, intervalMs: 300, ...o2 });
    return { ...r, at: r.startInMs === null ? null : Date.now() + r.startInMs };
  };
  for (let i = 0; i < 4; i++) starts.push((await at()).at!);
  const t0 = starts[0]!;
  for (let i = 1; i < 4; i++) assert.ok(Math.abs(starts[i]! - t0 - i * 300) < 40, `start ${i} ${i * 300} ms after the first (${starts.map((s) => s - t0).join(', ')})`);
  const late = await at({ deadlineInMs: 500 });
  assert.equal(late.granted, false);
  assert.ok(late.at! - t0 > 1_100, 'it would have come after the fourth');
  const next = await at();
  assert.ok(Math.abs(next.at! - t0 - 1_200) < 40, `the refused one reserved nothing (${next.at! - t0})`);
});

test("a holder that stops renewing loses its slots when its lease ends (a SIGKILLed worker's)", async () => {
  const [dead, alive, o] = [randomUUID(), randomUUID(), origin()];
  await Promise.all([renewHolder(h.db, dead, 300), renewHolder(h.db, alive, 10_000)]);
  assert.equal((await take({ origin: o, holder: dead, cap: 2 })).granted, true);
  assert.equal((await take({ origin: o, holder: dead, cap: 2 })).granted, true);
  assert.equal((await take({ origin: o, holder: alive, cap: 2 })).granted, false);
  await new Promise((r) => setTimeout(r, 400));
  const r = await take({ origin: o, holder: alive, cap: 2 });
  assert.equal(r.granted, true);
  assert.equal(r.inFlight, 1, 'only the live holder counts');
});

test('backoff: Retry-After sets the window, answers in flight together add no step, starts wait for it, recovery steps down after it', async () => {
  const [a, o] = [randomUUID(), origin()];
  await renewHolder(h.db, a, 10_000);
  const first = await backOffOrigin(h.db, { origin: o, retryAfterMs: 600, startedMsAgo: 50, baseMs: 1_000, maxMs: 60_000, reason: '429' });
  assert.equal(first.level, 1);
  assert.ok(first.backoffInMs > 550 && first.backoffInMs <= 600, `${first.backoffInMs}`);
  const together = await backOffOrigin(h.db, { origin: o, retryAfterMs: null, startedMsAgo: 50, baseMs: 1_000, maxMs: 60_000, reason: '429' });
  assert.equal(together.level, 1, 'a request that started before the step adds none');
  const t = await take({ origin: o, holder: a });
  assert.equal(t.granted, true);
  assert.ok(t.startInMs! > 500, `the start waits for the window (${t.startInMs})`);
  assert.equal(await recoverOrigin(h.db, o, 100), null, 'no recovery inside the window');
  await new Promise((r) => setTimeout(r, 650));
  assert.equal(await recoverOrigin(h.db, o, 100), 0, 'a step down after it');
  assert.equal((await originBudgetState(h.db, o))?.level, 0);
  // Without Retry-After: exponential with jitter (base × 2^step × 0.5–1.5), capped.
  const e1 = await backOffOrigin(h.db, { origin: o, retryAfterMs: null, startedMsAgo: 0, baseMs: 1_000, maxMs: 60_000, reason: '503' });
  assert.ok(e1.level === 1 && e1.backoffInMs >= 450 && e1.backoffInMs <= 1_500, `${JSON.stringify(e1)}`);
  await new Promise((r) => setTimeout(r, 20));
  const e2 = await backOffOrigin(h.db, { origin: o, retryAfterMs: null, startedMsAgo: 0, baseMs: 1_000, maxMs: 60_000, reason: '503' });
  assert.ok(e2.level === 2 && e2.backoffInMs >= 950 && e2.backoffInMs <= 3_000, `${JSON.stringify(e2)}`);
  const capped = await backOffOrigin(h.db, { origin: o, retryAfterMs: 3_600_000, startedMsAgo: 0, baseMs: 1_000, maxMs: 2_000, reason: '429' });
  assert.ok(capped.backoffInMs <= 3_000, 'Retry-After is capped too');
});

test('a late start gives its turn to the start reserved after it; with nobody after it, it starts and the next counts from it', async () => {
  const [a, o, lone] = [randomUUID(), origin(), origin()];
  await renewHolder(h.db, a, 10_000);
  const begin = (org: string, reservedAt: number) => beginOriginStart(h.db, { origin: org, reservedMsAgo: Date.now() - reservedAt, intervalMs: 300, recoveryMs: 500, toleranceMs: 25 });
  // The reserved start as the gate computes it: when the answer is in (never before Postgres reserved it).
  const startOf = async (org: string) => {
    const r = await take({ origin: org, holder: a, intervalMs: 300 });
    return Date.now() + r.startInMs!;
  };
  const t1 = await startOf(o);
  const second = await take({ origin: o, holder: a, intervalMs: 300 });
  assert.ok(Math.abs(second.startInMs! - 300) < 40, `the second reserved 300 ms on (${second.startInMs})`);
  await new Promise((r) => setTimeout(r, 100));
  const wait = await begin(o, t1);
  assert.ok(Math.abs(wait - 500) < 60, `100 ms late with a start reserved after it: a new turn after that one (${wait} ms)`);
  assert.equal(await begin(o, Date.now() - 10), 0, 'within the tolerance it goes');

  const t = await startOf(lone);
  await new Promise((r) => setTimeout(r, 200));
  const loneWait = await begin(lone, t);
  assert.equal(loneWait, 0, `late, but nobody reserved after it: it goes (${loneWait})`);
  const next = await take({ origin: lone, holder: a, intervalMs: 300 });
  assert.ok(next.startInMs! > 250, `the next start counts from the late one's real start (${next.startInMs} ms)`);
});
