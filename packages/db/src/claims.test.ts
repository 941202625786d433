import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { claimUrls, enqueueUrls, UNFINISHED_URL } from './frontier';
import { finishPage } from './crawl-pages';
import { insertCrawlJob, loadCrawlJob } from './crawl-jobs';
import { ensureTeam } from './index';

let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 20 });
  await migrateDb(h);
});
after(() => h?.close());

async function newJob(limit: number, urls: number) {
  const teamId = await ensureTeam(h.db, `claims-${randomUUID()}`);
  const id = randomUUID();
  await insertCrawlJob(h.db, { id, teamId, kind: 'crawl', url: 'http://a.test/', options: {}, pageLimit: limit, zeroDataRetention: false });
  await enqueueUrls(h.db, id, Array.from({ length: urls }, (_, i) => ({ url: `http://a.test/${i}`, key: `a.test/${i}`, depth: 1, external: false })));
  return id;
}

test('concurrent claims never lease more URLs than the page limit', async () => {
  const id = await newJob(5, 60);
  const got = await Promise.all(Array.from({ length: 20 }, (_, i) => claimUrls(h.db, id, `owner-${i}`, 3, 60_000, { retakeOwn: true })));
  const keys = got.flat().map((u) => u.key);
  assert.equal(keys.length, 5);
  assert.equal(new Set(keys).size, 5);
  assert.equal((await loadCrawlJob(h.db, id))!.enqueued, 5);
});

test('claims racing page completions (links added) stay within the limit and never deadlock', async () => {
  const id = await newJob(30, 10);
  const done: string[] = [];
  await Promise.all(
    Array.from({ length: 8 }, async (_, w) => {
      for (let round = 0; round < 10; round++) {
        const batch = await claimUrls(h.db, id, `w${w}`, 2, 60_000, { retakeOwn: round === 0 });
        for (const u of batch) {
          const links = Array.from({ length: 4 }, (_, k) => ({ url: `${u.url}/${k}`, key: `${u.key}/${k}`, depth: u.depth + 1, external: false }));
          if (await finishPage(h.db, id, u.key, { links, document: { body: { url: u.url }, credits: 1 } })) done.push(u.key);
        }
      }
    }),
  );
  assert.equal(done.length, 30);
  assert.equal(new Set(done).size, 30);
  const job = (await loadCrawlJob(h.db, id))!;
  assert.equal(job.enqueued, 30);
});

test('a claim leases at most n URLs whatever plan Postgres picks (statistics taken before the job existed)', async () => {
  // Statistics that predate the job make Postgres estimate one frontier row for it, and it may
  // then scan the job's URLs as the outer side of a nested loop and re-run the LIMIT … FOR UPDATE
  // SKIP LOCKED pick once per row. Each re-run skips the rows this statement already updated and
  // picks the next ones, so the UPDATE leased many more than LIMIT rows (seen: limit 20 → 31 pages).
  for (let i = 0; i < 3; i++) await newJob(100, 40);
  await h.db.execute(sql`ANALYZE crawl_urls`);
  const id = await newJob(20, 40);
  const first = await claimUrls(h.db, id, 'o', 1, 60_000, { retakeOwn: true });
  const second = await claimUrls(h.db, id, 'o', 2, 60_000, { retakeOwn: false });
  assert.deepEqual([first.length, second.length], [1, 2]);
  for (let i = 0; i < 30; i++) await claimUrls(h.db, id, `w${i}`, 1, 60_000, { retakeOwn: true });
  assert.equal((await loadCrawlJob(h.db, id))!.enqueued, 20);
});

test('the claim index holds exactly the URLs still to fetch (UNFINISHED_URL), so finished ones are found by key only', async () => {
  const r = await h.db.execute<{ def: string }>(sql`SELECT indexdef AS def FROM pg_indexes WHERE indexname = 'crawl_urls_claim_idx'`);
  const statuses = [...(r.rows[0]?.def ?? '').matchAll(/'(\w+)'::text/g)].map((m) => m[1]).sort();
  assert.deepEqual(statuses, [...UNFINISHED_URL].sort());
});
