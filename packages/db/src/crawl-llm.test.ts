import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { claimUrls, enqueueUrls } from './frontier';
import { finishJob, insertCrawlJob, liveCounters } from './crawl-jobs';
import { finishPage } from './crawl-pages';
import { jobErrors } from './crawl-documents';
import { claimLlmPages, deferLlmPage, failLlmPage, finishLlmPage, llmBacklog } from './crawl-llm';
import { jobEventsAfter } from './events';
import { ensureTeam } from './index';
import { llmTokensThisMinute, reserveLlmTokens, settleLlmTokens } from './llm-tokens';

let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 20 });
  await migrateDb(h);
});
after(() => h?.close());

/** A job whose `n` pages were fetched and stored as pending model work. */
async function jobWithPending(n: number) {
  const teamId = await ensureTeam(h.db, `llm-${randomUUID()}`);
  const id = randomUUID();
  await insertCrawlJob(h.db, { id, teamId, kind: 'crawl', url: 'http://a.test/', options: {}, pageLimit: 100, zeroDataRetention: false });
  await enqueueUrls(h.db, id, Array.from({ length: n }, (_, i) => ({ url: `http://a.test/${i}`, key: `a.test/${i}`, depth: 1, external: false })));
  const claimed = await claimUrls(h.db, id, 'fetch', n, 60_000, { retakeOwn: true });
  for (const u of claimed) {
    assert.ok(await finishPage(h.db, id, u.key, { links: [], document: { body: { markdown: `page ${u.key}` }, credits: 1, pendingLlm: true } }));
  }
  return id;
}

const charges = async (jobId: string) =>
  (await h.db.execute<{ key: string; amount: string }>(sql`SELECT idempotency_key AS key, amount FROM credit_ledger WHERE job_id = ${jobId} AND entry = 'charge'`)).rows;
const docCount = async (jobId: string) => Number((await h.db.execute<{ n: string }>(sql`SELECT count(*) AS n FROM crawl_documents WHERE job_id = ${jobId}`)).rows[0]!.n);

test('a pending page is unseen and unbilled until its model step ends it: then stored, charged and announced once', async () => {
  const id = await jobWithPending(3);
  assert.equal(await docCount(id), 0);
  assert.equal((await charges(id)).length, 0);
  assert.equal((await jobEventsAfter(h.db, id)).filter((e) => e.type === 'page').length, 0);
  assert.deepEqual(await liveCounters(h.db, id), { total: 3, completed: 0, failed: 0, creditsUsed: 0 });
  assert.deepEqual(await llmBacklog(h.db, id), { pending: 3, ready: 3, nextReadyMs: 0 });

  const [p] = await claimLlmPages(h.db, id, 'llm-a', 1, 60_000, { retakeOwn: true });
  assert.equal(p!.key, 'a.test/0', 'oldest first');
  assert.deepEqual(p!.document, { markdown: 'page a.test/0' });
  assert.equal(p!.attempts, 1);
  // Two attempts end the same page (a retried batch, a lease taken over): one document, one charge, one event.
  const ends = await Promise.all([1, 2].map(() => finishLlmPage(h.db, id, p!.key, { body: { markdown: 'page', json: { a: 1 } }, credits: 5 })));
  assert.deepEqual(ends.sort(), [false, true]);
  assert.equal(await finishLlmPage(h.db, id, p!.key, { body: {}, credits: 5 }), false);
  assert.equal(await docCount(id), 1);
  assert.deepEqual((await charges(id)).map((c) => [c.key, Number(c.amount)]), [[`page:${id}:a.test/0`, 5]]);
  assert.equal((await jobEventsAfter(h.db, id)).filter((e) => e.type === 'page').length, 1);
  assert.deepEqual(await liveCounters(h.db, id), { total: 3, completed: 1, failed: 0, creditsUsed: 5 });
  assert.equal((await llmBacklog(h.db, id)).pending, 2);
});

test('concurrent LLM batches never lease the same page; a retried attempt retakes its own lease at once', async () => {
  const id = await jobWithPending(12);
  const got = await Promise.all(Array.from({ length: 8 }, (_, i) => claimLlmPages(h.db, id, `b${i}`, 2, 60_000, { retakeOwn: true })));
  const keys = got.flat().map((p) => p.key);
  assert.equal(keys.length, 12);
  assert.equal(new Set(keys).size, 12);
  assert.deepEqual(await llmBacklog(h.db, id).then((b) => [b.pending, b.ready]), [12, 0]);
  assert.equal((await claimLlmPages(h.db, id, 'late', 5, 60_000, { retakeOwn: true })).length, 0, 'all leased');
  // The attempt after a killed one has the same owner: its first claim retakes what it held.
  const mine = got.findIndex((g) => g.length > 0);
  const again = await claimLlmPages(h.db, id, `b${mine}`, 5, 60_000, { retakeOwn: true });
  assert.deepEqual(again.map((p) => p.key).sort(), got[mine]!.map((p) => p.key).sort());
  assert.ok(again.every((p) => p.attempts === 2));
});

test('a deferred page waits out its back-off; a page failed for good is a failed URL with its error; the job end drops the rest', async () => {
  const id = await jobWithPending(3);
  const [a, b] = await claimLlmPages(h.db, id, 'x', 2, 60_000, { retakeOwn: true });
  await deferLlmPage(h.db, id, a!.key, 'x', 30_000, { error: 'HTTP 503', countAttempt: true });
  await deferLlmPage(h.db, id, a!.key, 'someone-else', 0, { countAttempt: false }); // not the owner: no effect
  const backlog = await llmBacklog(h.db, id);
  assert.equal(backlog.pending, 3);
  assert.equal(backlog.ready, 1, 'only the never-claimed page');
  const next = await claimLlmPages(h.db, id, 'y', 5, 60_000, { retakeOwn: true });
  assert.deepEqual(next.map((p) => p.key), ['a.test/2'], 'the deferred page is held back');
  assert.equal(next[0]!.failingMs, null, 'a page that never failed has no patience clock');
  // Its back-off over, the failed page comes back with its clock running since the first failure.
  await h.db.execute(sql`UPDATE crawl_llm_pages SET lease_until = now() - interval '1 second' WHERE job_id = ${id} AND url_key = ${a!.key}`);
  const [again] = await claimLlmPages(h.db, id, 'z', 1, 60_000, { retakeOwn: true });
  assert.equal(again!.key, a!.key);
  assert.ok(again!.failingMs !== null && again!.failingMs >= 0, String(again!.failingMs));
  assert.equal(again!.lastError, 'HTTP 503');
  // A token-limit deferral (no error) neither starts nor resets the clock.
  await h.db.execute(sql`UPDATE crawl_llm_pages SET failing_since = now() - interval '10 seconds' WHERE job_id = ${id} AND url_key = ${a!.key}`);
  await deferLlmPage(h.db, id, a!.key, 'z', 0, { countAttempt: false });
  await deferLlmPage(h.db, id, a!.key, 'z', 0, { error: 'HTTP 429', countAttempt: true }); // not the owner any more: no effect
  const [third] = await claimLlmPages(h.db, id, 'w', 1, 60_000, { retakeOwn: true });
  assert.ok(third!.failingMs! >= 10_000, String(third!.failingMs));
  assert.equal(third!.attempts, 2, 'the token-limit deferral took its attempt back');

  assert.equal(await failLlmPage(h.db, id, b!.key, 'The model output does not conform'), true);
  assert.equal(await failLlmPage(h.db, id, b!.key, 'again'), false);
  assert.deepEqual((await jobErrors(h.db, id)).errors.map((e) => [e.url, e.error]), [['http://a.test/1', 'The model output does not conform']]);
  assert.equal((await liveCounters(h.db, id)).failed, 1);

  await finishJob(h.db, id, { outcome: 'cancelled' });
  assert.equal((await llmBacklog(h.db, id)).pending, 0);
  assert.equal(await finishLlmPage(h.db, id, next[0]!.key, { body: {}, credits: 5 }), false, 'nothing is stored after the job ended');
  assert.equal(await docCount(id), 0);
});

test('the token window: concurrent reservations never pass the limit; a correction gives tokens back; an oversized step runs alone', async () => {
  // One window for the whole test: start with at least 10 s of this minute left.
  const left = () => 60_000 - (Date.now() % 60_000);
  if (left() < 10_000) await new Promise((r) => setTimeout(r, left() + 200));
  await h.db.execute(sql`DELETE FROM llm_token_windows`);
  const limit = 1_000;
  const r = await Promise.all(Array.from({ length: 25 }, () => reserveLlmTokens(h.db, 100, limit)));
  const granted = r.filter((x) => x.granted);
  assert.equal(granted.length, 10);
  assert.equal(await llmTokensThisMinute(h.db), 1_000);
  const refused = r.find((x) => !x.granted)!;
  assert.ok(!refused.granted && refused.retryAfterMs > 0 && refused.retryAfterMs <= 60_000 && refused.used === 1_000, JSON.stringify(refused));

  // Steps used 40 of their 100 reserved tokens each: 600 come back, and six more steps fit.
  for (const g of granted) if (g.granted) await settleLlmTokens(h.db, g.windowStart, 40 - 100);
  assert.equal(await llmTokensThisMinute(h.db), 400);
  assert.equal((await Promise.all(Array.from({ length: 8 }, () => reserveLlmTokens(h.db, 100, limit)))).filter((x) => x.granted).length, 6);

  // A step bigger than the whole limit: refused while the window has anything, granted in an empty one.
  assert.equal((await reserveLlmTokens(h.db, 5_000, limit)).granted, false);
  await h.db.execute(sql`UPDATE llm_token_windows SET tokens = 0`);
  assert.equal((await reserveLlmTokens(h.db, 5_000, limit)).granted, true);
  assert.equal((await reserveLlmTokens(h.db, 1, limit)).granted, false, 'and nothing else in that window');
});

test('an LLM claim leases at most n pages whatever plan Postgres picks (statistics taken before the job existed)', async () => {
  // The trap claims.test.ts describes for URLs: a pick re-run per outer row of a nested loop.
  await h.db.execute(sql`ANALYZE crawl_llm_pages`);
  const id = await jobWithPending(30);
  assert.equal((await claimLlmPages(h.db, id, 'o', 1, 60_000, { retakeOwn: true })).length, 1);
  assert.equal((await claimLlmPages(h.db, id, 'o', 2, 60_000, { retakeOwn: false })).length, 2);
  assert.equal((await llmBacklog(h.db, id)).ready, 27);
});

test('a page the model step finishes is indexed for search like a fetched page; a zero-data-retention job\'s is not', async () => {
  const indexed = async (teamOf: string, url: string) =>
    Number((await h.db.execute<{ n: string }>(sql`SELECT count(*) AS n FROM search_pages p JOIN jobs j ON j.team_id = p.team_id WHERE j.id = ${teamOf} AND p.url = ${url}`)).rows[0]!.n);
  for (const zdr of [false, true]) {
    const id = await jobWithPending(1);
    if (zdr) await h.db.execute(sql`UPDATE jobs SET zero_data_retention = true WHERE id = ${id}`);
    const [p] = await claimLlmPages(h.db, id, 'llm-index', 1, 60_000, { retakeOwn: true });
    const url = `http://a.test/indexed-${id}`;
    assert.ok(await finishLlmPage(h.db, id, p!.key, { body: { markdown: '# Kettle\n\nA blue kettle.', metadata: { sourceURL: url, statusCode: 200 } }, credits: 5 }));
    assert.equal(await indexed(id, url), zdr ? 0 : 1, zdr ? 'ZDR pages are never indexed' : 'the enriched page is searchable');
  }
});
