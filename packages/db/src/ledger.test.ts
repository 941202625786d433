import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { claimUrls, enqueueUrls } from './frontier';
import { finishPage } from './crawl-pages';
import { insertCrawlJob } from './crawl-jobs';
import { ensureTeam } from './index';
import {
  chargeCredits,
  jobCreditBalance,
  releaseJobReservations,
  releaseReservation,
  reserveCredits,
  teamCreditBalance,
  teamLedgerTotals,
} from './ledger';

let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 20 });
  await migrateDb(h);
});
after(() => h?.close());

const newTeam = () => ensureTeam(h.db, `ledger-${randomUUID()}`);

async function assertBalanceIsLedger(teamId: string) {
  assert.deepEqual(await teamCreditBalance(h.db, teamId), await teamLedgerTotals(h.db, teamId), 'the running balance equals the sum of the ledger');
}

describe('reservations against a cap', () => {
  test('100 parallel reservations of 1 against a job cap of 50: exactly 50 granted', async () => {
    const teamId = await newTeam();
    const jobId = randomUUID();
    const out = await Promise.all(
      Array.from({ length: 100 }, (_, i) => reserveCredits(h.db, { teamId, jobId, kind: 'agent', amount: 1, key: `step-${i}`, jobCap: 50 })),
    );
    assert.equal(out.filter((o) => o.granted).length, 50);
    const refused = out.find((o) => !o.granted);
    assert.deepEqual(refused, { granted: false, reason: 'job_cap', cap: 50, balance: { used: 0, reserved: 50 } });
    assert.deepEqual(await jobCreditBalance(h.db, jobId), { used: 0, reserved: 50 });
    await assertBalanceIsLedger(teamId);
  });

  test('100 parallel reservations of 1 against a team cap of 50 (one job each): exactly 50 granted', async () => {
    const teamId = await newTeam();
    await chargeCredits(h.db, { teamId, jobId: randomUUID(), kind: 'scrape', amount: 10, key: 'earlier-scrape' });
    const out = await Promise.all(
      Array.from({ length: 100 }, (_, i) => reserveCredits(h.db, { teamId, jobId: randomUUID(), kind: 'agent', amount: 1, key: `r-${i}`, teamCap: 60 })),
    );
    assert.equal(out.filter((o) => o.granted).length, 50, 'the 10 credits already used count against the cap');
    assert.deepEqual(await teamCreditBalance(h.db, teamId), { used: 10, reserved: 50 });
    await assertBalanceIsLedger(teamId);
  });

  test('a retried reservation is granted again without reserving twice; both caps apply together', async () => {
    const teamId = await newTeam();
    const jobId = randomUUID();
    const r = { teamId, jobId, kind: 'agent' as const, amount: 5, key: 'step-1', jobCap: 8, teamCap: 100 };
    assert.deepEqual(await reserveCredits(h.db, r), { granted: true, replay: false });
    assert.deepEqual(await reserveCredits(h.db, r), { granted: true, replay: true });
    assert.deepEqual(await teamCreditBalance(h.db, teamId), { used: 0, reserved: 5 });
    assert.equal((await reserveCredits(h.db, { ...r, key: 'step-2' })).granted, false, '5 + 5 > job cap 8');
    assert.equal((await reserveCredits(h.db, { ...r, key: 'step-3', amount: 3, teamCap: 7 })).granted, false, '5 + 3 > team cap 7');
    assert.equal((await reserveCredits(h.db, { ...r, key: 'step-4', amount: 3 })).granted, true);
    await assertBalanceIsLedger(teamId);
  });
});

describe('charges', () => {
  test('a retried charge with the same key bills once, also when the retries race', async () => {
    const teamId = await newTeam();
    const jobId = randomUUID();
    const c = { teamId, jobId, kind: 'scrape' as const, amount: 3, key: `scrape:${jobId}` };
    const out = await Promise.all(Array.from({ length: 10 }, () => chargeCredits(h.db, c)));
    assert.equal(out.filter((o) => o.charged).length, 1);
    assert.deepEqual(await chargeCredits(h.db, c), { charged: false });
    assert.deepEqual(await teamCreditBalance(h.db, teamId), { used: 3, reserved: 0 });
    assert.equal((await h.pool.query('SELECT count(*)::int AS n FROM credit_ledger WHERE team_id = $1', [teamId])).rows[0].n, 1);
    await assertBalanceIsLedger(teamId);
  });

  test('a charge converts its reservation once; releases free only unsettled reservations', async () => {
    const teamId = await newTeam();
    const jobId = randomUUID();
    const base = { teamId, jobId, kind: 'agent' as const };
    for (const key of ['a', 'b', 'c', 'd']) assert.equal((await reserveCredits(h.db, { ...base, amount: 10, key, jobCap: 100 })).granted, true);
    assert.deepEqual(await teamCreditBalance(h.db, teamId), { used: 0, reserved: 40 });

    // a: charged for less than reserved (retried, racing): the rest is freed, once.
    const charges = await Promise.all(Array.from({ length: 5 }, () => chargeCredits(h.db, { ...base, amount: 4, key: 'charge-a', reservationKey: 'a' })));
    assert.equal(charges.filter((c) => c.charged).length, 1);
    assert.deepEqual(await teamCreditBalance(h.db, teamId), { used: 4, reserved: 30 });
    // b: charged for more than reserved: billed in full.
    await chargeCredits(h.db, { ...base, amount: 15, key: 'charge-b', reservationKey: 'b' });
    assert.deepEqual(await teamCreditBalance(h.db, teamId), { used: 19, reserved: 20 });
    // c: released (twice); releasing a settled reservation does nothing.
    assert.deepEqual(await releaseReservation(h.db, { ...base, reservationKey: 'c' }), { released: 10 });
    assert.deepEqual(await releaseReservation(h.db, { ...base, reservationKey: 'c' }), { released: 0 });
    assert.deepEqual(await releaseReservation(h.db, { ...base, reservationKey: 'a' }), { released: 0 });
    // A charge against a released reservation is billed, and frees nothing more.
    await chargeCredits(h.db, { ...base, amount: 1, key: 'charge-c', reservationKey: 'c' });
    assert.deepEqual(await teamCreditBalance(h.db, teamId), { used: 20, reserved: 10 });
    // The job ends: what is still reserved (d) goes back.
    assert.deepEqual(await releaseJobReservations(h.db, jobId), { released: 10 });
    assert.deepEqual(await jobCreditBalance(h.db, jobId), { used: 20, reserved: 0 });
    assert.deepEqual(await teamCreditBalance(h.db, teamId), { used: 20, reserved: 0 });
    await assertBalanceIsLedger(teamId);
  });

  test('crawl pages are charged once per URL key in the statement that stores them', async () => {
    const teamId = await newTeam();
    const jobId = randomUUID();
    await insertCrawlJob(h.db, { id: jobId, teamId, kind: 'crawl', url: 'http://a.test/', options: {}, pageLimit: 100, zeroDataRetention: false });
    await enqueueUrls(h.db, jobId, Array.from({ length: 30 }, (_, i) => ({ url: `http://a.test/${i}`, key: `a.test/${i}`, depth: 0, external: false })));
    const urls = await claimUrls(h.db, jobId, 'o', 30, 60_000, { retakeOwn: true });
    // Every page stored three times at once (a retried activity racing itself), one costing 3 credits.
    const stored = await Promise.all(
      urls.flatMap((u) => [0, 1, 2].map(() => finishPage(h.db, jobId, u.key, { links: [], document: { body: { url: u.url }, credits: u.key === 'a.test/7' ? 3 : 1 } }))),
    );
    assert.equal(stored.filter(Boolean).length, 30);
    assert.deepEqual(await jobCreditBalance(h.db, jobId), { used: 32, reserved: 0 });
    assert.deepEqual(await teamCreditBalance(h.db, teamId), { used: 32, reserved: 0 });
    await assertBalanceIsLedger(teamId);
  });
});

describe('migration 0006', () => {
  test('every job that billed before the ledger gets one opening entry, and the balances their sum', async () => {
    // A database at migration 0005 with jobs in it, then 0006 applied to it.
    const dir = fileURLToPath(new URL('../migrations', import.meta.url));
    const url = await stackDatabase(testInfra().databaseUrl, `${namespaceFor(import.meta.url)}-0005`);
    const old = connectDb(url, { max: 1 });
    try {
      const run = async (file: string) => {
        for (const stmt of readFileSync(`${dir}/${file}`, 'utf8').split('--> statement-breakpoint')) if (stmt.trim()) await old.pool.query(stmt);
      };
      const files = readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
      for (const f of files.filter((f) => f < '0006')) await run(f);
      const q = (text: string, values: unknown[] = []) => old.pool.query(text, values);
      const [t1, t2] = [randomUUID(), randomUUID()];
      await q(`INSERT INTO teams (id, name) VALUES ($1, 't1'), ($2, 't2')`, [t1, t2]);
      await q(`INSERT INTO scrape_jobs (id, team_id, options, status, credits_used) VALUES ($1, $3, '{}', 'completed', 1), ($2, $3, '{}', 'completed', 5), ($4, $3, '{}', 'failed', 0)`, [
        randomUUID(), randomUUID(), t1, randomUUID(),
      ]);
      const [running, done] = [randomUUID(), randomUUID()];
      await q(`INSERT INTO crawl_jobs (id, team_id, kind, options, page_limit) VALUES ($1, $2, 'crawl', '{}', 10)`, [running, t1]);
      await q(`INSERT INTO crawl_jobs (id, team_id, kind, options, page_limit, status, credits_used) VALUES ($1, $2, 'batch', '{}', 10, 'completed', 3)`, [done, t2]);
      await q(`INSERT INTO crawl_documents (job_id, url_key, document, credits) VALUES ($1, 'a', '{}', 1), ($1, 'b', '{}', 2), ($2, 'a', '{}', 1), ($2, 'b', '{}', 2)`, [running, done]);
      await q(`INSERT INTO parse_jobs (id, team_id, upload_bytes, options, status, credits_used) VALUES ($1, $2, 1, '{}', 'completed', 7)`, [randomUUID(), t2]);
      await run(files.find((f) => f.startsWith('0006'))!);

      const entries = await q(`SELECT team_id, job_kind, entry, amount, idempotency_key FROM credit_ledger ORDER BY team_id, job_kind, amount`);
      assert.equal(entries.rows.length, 5, JSON.stringify(entries.rows));
      assert.ok(entries.rows.every((r) => r.entry === 'charge' && r.idempotency_key.startsWith('opening:')));
      const kinds = (team: string) => entries.rows.filter((r) => r.team_id === team).map((r) => `${r.job_kind}:${r.amount}`).sort();
      assert.deepEqual(kinds(t1), ['crawl:3', 'scrape:1', 'scrape:5']);
      assert.deepEqual(kinds(t2), ['batch:3', 'parse:7']);
      const balances = await q(`SELECT team_id, used::int, reserved::int FROM team_credit_balances`);
      assert.deepEqual(Object.fromEntries(balances.rows.map((r) => [r.team_id, [r.used, r.reserved]])), { [t1]: [9, 0], [t2]: [10, 0] });
    } finally {
      await old.close();
    }
  });
});
