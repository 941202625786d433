import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTeamLimits } from '@wds/db';
import { call, html, namespaceFor, startFixtureSite, startStack, type FixtureSite, type Stack } from '@wds/test-utils';

// Per-team limits from Postgres, through raw HTTP: rate (429 + Retry-After), credits (402),
// concurrency (queued, then 429), and the team endpoints in Firecrawl's shapes.
let stack: Stack;
let site: FixtureSite;

before(async () => {
  site = await startFixtureSite({
    '/page': html('<html><body><p>Limits page</p></body></html>'),
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
    assert.equal((await call(as, 'POST', '/v2/scrape', { url: site.url('/page'), maxAge: 0 })).status, 200);
    const refused = await call(as, 'POST', '/v2/scrape', { url: site.url('/page'), maxAge: 0 });
    assert.equal(refused.status, 402);
    assert.equal(refused.json.error, 'Payment Required: Insufficient credits');
    assert.equal((await call(as, 'POST', '/v2/crawl', { url: site.url('/page') })).status, 402);
    usage = await call(as, 'GET', '/v2/team/credit-usage');
    assert.equal(usage.json.data.remainingCredits, 0);
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
