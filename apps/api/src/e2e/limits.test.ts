import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { setTeamLimits, teamCreditBalance, teamLedgerTotals } from '@wds/db';
import { call, html, namespaceFor, startFixtureSite, startStack, type FixtureSite, type Stack } from '@wds/test-utils';

// Per-team limits from Postgres, through raw HTTP: rate (429 + Retry-After), credits (402),
// concurrency (queued, then 429), and the team endpoints in Firecrawl's shapes.
let stack: Stack;
let site: FixtureSite;

before(async () => {
  site = await startFixtureSite({
    '/page': html('<html><body><p>Limits page</p></body></html>'),
    // A chain of pages: /chain?n=0 links /chain?n=1, and so on up to n=19.
    '/chain': (q, r) => {
      const n = Number(new URL(q.url!, 'http://x').searchParams.get('n') ?? 0);
      r.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><p>Chain ${n}</p>${n < 19 ? `<a href="/chain?n=${n + 1}">next</a>` : ''}</body></html>`);
    },
    '/slow': async (_q, r) => {
      await new Promise((res) => setTimeout(res, 1200));
      r.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><p>Slow page</p></body></html>');
    },
  });
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_CONCURRENCY_QUEUE_MS: '4000' } });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

describe('limits', () => {
  test('requests per minute per endpoint class: 429 with Retry-After', async () => {
    const team = await stack.newTeam();
    await setTeamLimits(stack.db.db, team.teamId, { ratePerMinute: { scrape: 2 } });
    const as = { url: stack.url, apiKey: team.apiKey };
    // The budget is per calendar minute: start well inside one, so the four requests share it.
    while (new Date().getSeconds() > 50) await new Promise((r) => setTimeout(r, 500));
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await call(as, 'POST', '/v2/scrape', { url: site.url('/page') })).status);
    const limited = await call(as, 'POST', '/v2/scrape', { url: site.url('/page') });
    assert.deepEqual(codes.slice(0, 2), [200, 200]);
    assert.equal(codes[2], 429);
    assert.equal(limited.status, 429);
    assert.equal(limited.json.success, false);
    assert.match(limited.json.error, /^Rate limit exceeded/);
    const retry = Number(limited.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    // Other classes have their own budget (none here).
    assert.equal((await call(as, 'GET', '/v2/team/queue-status')).status, 200);
  });

  test('credits: 402 once the credit limit is used; credit-usage reports it', async () => {
    const team = await stack.newTeam();
    await setTeamLimits(stack.db.db, team.teamId, { creditLimit: 1 });
    const as = { url: stack.url, apiKey: team.apiKey };
    let usage = await call(as, 'GET', '/v2/team/credit-usage');
    assert.deepEqual(usage.json, { success: true, data: { remainingCredits: 1, planCredits: 1, billingPeriodStart: null, billingPeriodEnd: null } });
    // Token usage is the same balance in extract's tokens (15 a credit), read through the SDK's getTokenUsage().
    const fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
    assert.deepEqual(await fc.getTokenUsage(), { remainingTokens: 15, planTokens: 15, billingPeriodStart: null, billingPeriodEnd: null });
    assert.equal((await call(as, 'POST', '/v2/scrape', { url: site.url('/page'), maxAge: 0 })).status, 200);
    const refused = await call(as, 'POST', '/v2/scrape', { url: site.url('/page'), maxAge: 0 });
    assert.equal(refused.status, 402);
    assert.equal(refused.json.error, 'Payment Required: Insufficient credits');
    assert.equal((await call(as, 'POST', '/v2/crawl', { url: site.url('/page') })).status, 402);
    usage = await call(as, 'GET', '/v2/team/credit-usage');
    assert.equal(usage.json.data.remainingCredits, 0);
    assert.equal((await fc.getTokenUsage()).remainingTokens, 0);
    // Without a credit limit the plan is Firecrawl's self-hosted 99999999 in either unit.
    const free = await stack.newTeam();
    assert.deepEqual(await new Firecrawl({ apiKey: free.apiKey, apiUrl: stack.url }).getTokenUsage(), { remainingTokens: 99_999_999, planTokens: 99_999_999, billingPeriodStart: null, billingPeriodEnd: null });
  });

  test('credit-usage reads the ledger: scrapes (zero data retention too), batch pages and parses are each billed once', async () => {
    const team = await stack.newTeam({ flags: { zeroDataRetention: true } });
    await setTeamLimits(stack.db.db, team.teamId, { creditLimit: 1000 });
    const as = { url: stack.url, apiKey: team.apiKey };
    const fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
    const remaining = async () => (await call(as, 'GET', '/v2/team/credit-usage')).json.data.remainingCredits as number;
    assert.equal(await remaining(), 1000);
    await fc.scrape(site.url('/page?ledger-1'), { maxAge: 0 });
    // Nothing of a zero-data-retention scrape is kept, except its bill: 1 + 1 credits (Firecrawl's ZDR price).
    await fc.scrape(site.url('/page?ledger-zdr'), { maxAge: 0, zeroDataRetention: true } as never);
    await fc.scrape(site.url('/page?ledger-zdr'), { zeroDataRetention: true } as never); // fetched again: ZDR left no cache entry
    const batch = await fc.batchScrape([site.url('/page?b1'), site.url('/page?b2'), site.url('/page?b3')], { options: { maxAge: 0 }, pollInterval: 1 } as never);
    assert.equal(batch.data.length, 3);
    const parsed = await fc.parse({ data: Buffer.from('<html><body><h1>Ledger</h1><p>parsed</p></body></html>'), filename: 'ledger.html', contentType: 'text/html' });
    const parseCredits = (parsed.metadata as { creditsUsed: number }).creditsUsed;
    assert.ok(parseCredits >= 1);
    assert.equal(await remaining(), 1000 - (1 + 2 * 2 + 3 + parseCredits));
    assert.deepEqual(await teamCreditBalance(stack.db.db, team.teamId), await teamLedgerTotals(stack.db.db, team.teamId));
    const kinds = await stack.db.pool.query(`SELECT job_kind, count(*)::int AS n FROM credit_ledger WHERE team_id = $1 GROUP BY job_kind ORDER BY job_kind`, [team.teamId]);
    assert.deepEqual(kinds.rows, [{ job_kind: 'batch', n: 3 }, { job_kind: 'parse', n: 1 }, { job_kind: 'scrape', n: 3 }]);
  });

  test('concurrent scrapes: queued with metadata, 429 beyond the wait bound; queue-status and concurrency-check', async () => {
    const team = await stack.newTeam();
    await setTeamLimits(stack.db.db, team.teamId, { maxConcurrency: 1 });
    const as = { url: stack.url, apiKey: team.apiKey };
    const check = await call(as, 'GET', '/v2/concurrency-check');
    assert.deepEqual(check.json, { success: true, concurrency: 0, maxConcurrency: 1 });
    const first = call(as, 'POST', '/v2/scrape', { url: site.url('/slow?a'), maxAge: 0 });
    await new Promise((r) => setTimeout(r, 300));
    const during = await call(as, 'GET', '/v2/team/queue-status');
    assert.equal(during.json.success, true);
    assert.equal(during.json.maxConcurrency, 1);
    assert.equal(during.json.activeJobsInQueue, 1);
    const second = await call(as, 'POST', '/v2/scrape', { url: site.url('/slow?b'), maxAge: 0 });
    assert.equal((await first).status, 200);
    assert.equal((await first).json.data.metadata.concurrencyLimited, undefined);
    assert.equal(second.status, 200, second.text);
    assert.equal(second.json.data.metadata.concurrencyLimited, true);
    assert.ok(second.json.data.metadata.concurrencyQueueDurationMs > 200);

    // Six 1.2 s scrapes, one slot (held across API processes via Postgres), 4 s of waiting at most:
    // they run one at a time, and those that would wait longer than the bound get 429.
    const many = await Promise.all(['c', 'd', 'e', 'f', 'g', 'h'].map((q) => call(as, 'POST', '/v2/scrape', { url: site.url(`/slow?${q}`), maxAge: 0 })));
    const refused = many.filter((r) => r.status === 429);
    assert.ok(refused.length >= 1, many.map((r) => r.status).join(','));
    assert.match(refused[0]!.json.error, /^Concurrency limit reached/);
    assert.ok(Number(refused[0]!.headers.get('retry-after')) >= 1);
    const served = many.filter((r) => r.status === 200);
    assert.ok(served.length >= 2 && served.length <= 4, many.map((r) => r.status).join(','));
  });
});

// The deployment's defaults (API env), for teams without a team_limits row or with fields unset.
// Another API process on the same stack, with small defaults: the one above keeps the shipped ones.
describe('default limits', () => {
  let api: { url: string };
  before(async () => {
    const a = await stack.addApi({ WDS_RATE_LIMIT_SCRAPE: '2', WDS_MAX_CONCURRENT_SCRAPES: '7', WDS_MAX_CRAWL_LIMIT: '5' });
    api = { url: a.url! };
  });

  test('a team without a row is rate limited at the default; a row overrides it field by field (0 = no limit)', async () => {
    const [plain, higher, unlimited] = [await stack.newTeam(), await stack.newTeam(), await stack.newTeam()];
    await setTeamLimits(stack.db.db, higher.teamId, { ratePerMinute: { scrape: 3 } });
    await setTeamLimits(stack.db.db, unlimited.teamId, { ratePerMinute: { scrape: 0 }, maxConcurrency: 3 });
    const scrapes = async (key: string, n: number) => {
      const codes: number[] = [];
      for (let i = 0; i < n; i++) codes.push((await call({ url: api.url, apiKey: key }, 'POST', '/v2/scrape', { url: site.url('/page') })).status);
      return codes;
    };
    while (new Date().getSeconds() > 45) await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(await scrapes(plain.apiKey, 3), [200, 200, 429], 'the default: 2 per minute');
    const limited = await call({ url: api.url, apiKey: plain.apiKey }, 'POST', '/v2/scrape', { url: site.url('/page') });
    assert.match(limited.json.error, /^Rate limit exceeded: 2 scrape requests per minute/);
    assert.deepEqual(await scrapes(higher.apiKey, 4), [200, 200, 200, 429], 'the row: 3 per minute');
    assert.deepEqual(await scrapes(unlimited.apiKey, 4), [200, 200, 200, 200], 'the row: none');
    // Concurrency: the default where the row leaves it unset, the row's where it sets it.
    assert.equal((await call({ url: api.url, apiKey: plain.apiKey }, 'GET', '/v2/concurrency-check')).json.maxConcurrency, 7);
    assert.equal((await call({ url: api.url, apiKey: higher.apiKey }, 'GET', '/v2/concurrency-check')).json.maxConcurrency, 7);
    assert.equal((await call({ url: api.url, apiKey: unlimited.apiKey }, 'GET', '/v2/team/queue-status')).json.maxConcurrency, 3);
  });

  test('crawl limit ceiling: above it 400 naming the field; an omitted limit is lowered to it', async () => {
    const team = await stack.newTeam();
    const as = { url: api.url, apiKey: team.apiKey };
    const over = await call(as, 'POST', '/v2/crawl', { url: site.url('/chain?n=0'), limit: 6 });
    assert.equal(over.status, 400, over.text);
    assert.equal(over.json.code, 'BAD_REQUEST');
    assert.equal(over.json.error, over.json.details[0].message, 'the rule\'s sentence is the error the SDK shows');
    assert.deepEqual(over.json.details[0].path, ['limit']);
    assert.match(over.json.details[0].message, /at most 5/);
    const fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: api.url });
    const job = await fc.crawl(site.url('/chain?n=0'), { pollInterval: 1 } as never);
    assert.equal(job.status, 'completed');
    assert.equal(job.data.length, 5, 'the default limit (10,000) lowered to the ceiling');
    const exact = await fc.crawl(site.url('/chain?n=0'), { limit: 5, pollInterval: 1 } as never);
    assert.equal(exact.data.length, 5);
  });
});
