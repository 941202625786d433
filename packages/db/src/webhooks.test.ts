import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { appendJobEvent } from './events';
import { claimDueDeliveries, recordDeliveryAttempt } from './webhooks';

let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 5 });
  await migrateDb(h);
});
after(() => h?.close());

const A = 'http://a.test:1';
const B = 'http://b.test:2';

test('claims take no more per origin than its room, a job one event at a time and in order', async () => {
  // Six jobs to origin A, two to B; every job has two events.
  const jobs = [...Array.from({ length: 6 }, () => [randomUUID(), A] as const), ...Array.from({ length: 2 }, () => [randomUUID(), B] as const)];
  for (const [jobId, origin] of jobs) {
    for (const type of ['started', 'completed']) await appendJobEvent(h.db, { jobId, type, key: type, webhook: { url: `${origin}/hook`, jobKind: 'crawl' } });
  }
  const mine = new Set<string>(jobs.map(([j]) => j));
  const claim = async (inFlight: Map<string, number>, perOrigin = 3) => (await claimDueDeliveries(h.db, { n: 20, claimMs: 60_000, perOrigin, inFlight })).filter((d) => mine.has(d.jobId));

  // A already has one in flight here: room for two more; B has its full three.
  const first = await claim(new Map([[A, 1]]));
  assert.equal(first.filter((d) => d.origin === A).length, 2);
  assert.equal(first.filter((d) => d.origin === B).length, 2, 'both B jobs, one event each');
  assert.ok(first.every((d) => d.eventType === 'started' && d.eventSeq === 1 && d.attempt === 1));
  // Claimed ones are not due again; a job's next event waits for its first to be delivered.
  const second = await claim(new Map([[A, 3]]));
  assert.deepEqual(second, [], 'A is full, and B has nothing due until its first events are delivered');

  const b = first.find((d) => d.origin === B)!;
  await recordDeliveryAttempt(h.db, b.id, { attempt: 1, startedAt: new Date(), durationMs: 12, statusCode: 200, error: null }, { delivered: true });
  const third = await claim(new Map([[A, 3]]));
  assert.deepEqual(third.map((d) => [d.jobId, d.eventType, d.eventSeq]), [[b.jobId, 'completed', 2]]);

  // A failed attempt is recorded and retried later; at its due time it comes back as attempt 2.
  const a = first.find((d) => d.origin === A)!;
  await recordDeliveryAttempt(h.db, a.id, { attempt: 1, startedAt: new Date(), durationMs: 5_000, statusCode: null, error: 'timed out' }, { delivered: false, retryInMs: 0 });
  const again = await claim(new Map(), 10);
  assert.deepEqual(again.filter((d) => d.origin === A).length, 5, 'the four A jobs never claimed, and the retry');
  assert.equal(again.find((d) => d.id === a.id)?.attempt, 2);
  const attempts = await h.pool.query('SELECT delivery_id::int AS id, attempt, status_code, error, duration_ms FROM webhook_attempts WHERE delivery_id = ANY($1) ORDER BY delivery_id', [[a.id, b.id]]);
  assert.deepEqual(
    attempts.rows.map((r) => [r.id, r.attempt, r.status_code, r.error, r.duration_ms]),
    [
      [Math.min(a.id, b.id), 1, a.id < b.id ? null : 200, a.id < b.id ? 'timed out' : null, a.id < b.id ? 5_000 : 12],
      [Math.max(a.id, b.id), 1, a.id < b.id ? 200 : null, a.id < b.id ? null : 'timed out', a.id < b.id ? 12 : 5_000],
    ],
  );
});
