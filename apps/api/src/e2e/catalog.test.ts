import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { Client, Connection } from '@temporalio/client';
import { setTeamLimits, teamCreditBalance } from '@wds/db';
import { call, html, namespaceFor, promptText, startFakeOpenAI, startFixtureSite, startStack, testInfra, until, type FakeChatRequest, type FakeOpenAI, type FixtureSite, type Stack } from '@wds/test-utils';

// Catalog mode of POST /v2/scrape (spec: Catalog call, rules 1–4, the scrape error table) on the
// real stack: the catalog imported with the operator's command, an HTTP provider on 127.0.0.1
// that counts its executions per idempotency key, and the built-in capabilities.
let stack: Stack;
let site: FixtureSite;
let provider: Server;
let providerUrl: string;
let team: { teamId: string; apiKey: string };
let fc: Firecrawl;
let model: FakeOpenAI;
/** Executions per Idempotency-Key (a retried delivery of one call counts once: the provider answers it from the first). */
const executions = new Map<string, number>();
const deliveries: string[] = [];
const answers = new Map<string, unknown>();
let received: (() => void) | null = null;

const root = new URL('../../../../', import.meta.url).pathname;
const run = promisify(execFile);

function startProvider(): Promise<void> {
  provider = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const key = String(req.headers['idempotency-key']);
      deliveries.push(key);
      received?.();
      const c = JSON.parse(body) as { capability: string; options: { domain?: string; delayMs?: number } };
      if (req.url === '/fail') return void res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'upstream_down', message: 'Acme is down' } }));
      const prior = answers.get(key);
      if (prior) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(prior));
      executions.set(key, (executions.get(key) ?? 0) + 1);
      const answer = { company: { domain: c.options.domain, name: `Company of ${c.options.domain}` }, execution: [...executions.values()].reduce((a, b) => a + b, 0) };
      answers.set(key, answer);
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)), c.options.delayMs ?? 0);
    });
  });
  provider.keepAliveTimeout = 500;
  return new Promise((r) => provider.listen(0, '127.0.0.1', () => {
    providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    r();
  }));
}

const lookup = (domain: string, extra: Record<string, unknown> = {}) => ({ provider: 'acme', capability: 'company/lookup', options: { domain, ...extra } });
const totalExecutions = () => [...executions.values()].reduce((a, b) => a + b, 0);
const post = (body: unknown, requestId?: string, key = team.apiKey) => call({ url: stack.url, apiKey: key }, 'POST', '/v2/scrape', body, requestId ? { 'x-request-id': requestId } : {});
const executionsOf = (scrapeId: string) => [...executions].filter(([k]) => k.startsWith(scrapeId)).reduce((n, [, v]) => n + v, 0);

/** The agent's scripted model (Exchange tests): find the tool, call it, finish with its answer. */
function agentScript(r: FakeChatRequest) {
  const step = r.messages.filter((m) => m.role === 'assistant').length + 1;
  if (step === 1) return { toolCalls: [{ name: 'find_tools', arguments: { query: 'company facts for a domain' } }] };
  if (step === 2) return { toolCalls: [{ name: 'call_tool', arguments: { provider: 'acme', capability: 'company/lookup', options: { domain: 'agent.test' } } }] };
  const last = String(r.messages.at(-1)?.content ?? '');
  return { toolCalls: [{ name: 'finish', arguments: { data: { fromTool: last.includes('Company of agent.test') } } }] };
}

before(async () => {
  await startProvider();
  model = await startFakeOpenAI({ handler: agentScript });
  site = await startFixtureSite({
    '/product': html('<html><head><title>Blue mug</title></head><body><main><h1>Blue mug</h1><p>A mug for tea, made of stoneware.</p></main></body></html>'),
  });
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: { WDS_HOST_OVERRIDES: 'shop.test=127.0.0.1,*.shop.test=127.0.0.1', ...model.env },
  });
  const dir = mkdtempSync(join(tmpdir(), 'wds-catalog-'));
  const file = join(dir, 'catalog.json');
  writeFileSync(file, JSON.stringify({
    providers: [
      {
        id: 'acme',
        name: 'Acme companies',
        description: 'Company facts.',
        categories: ['companies'],
        domains: ['shop.test'],
        endpoint: `${providerUrl}/lookup`,
        capabilities: [
          {
            id: 'company/lookup',
            name: 'Company lookup',
            description: 'Facts about the company behind a domain.',
            creditsCost: 3,
            options: { type: 'object', required: ['domain'], additionalProperties: false, properties: { domain: { type: 'string', minLength: 3 }, delayMs: { type: 'integer', minimum: 0, maximum: 20000 } } },
            response: { about: 'The company.', key: 'company', fields: [{ name: 'company', type: 'object' }] },
          },
          { id: 'company/fail', name: 'Always failing', description: 'A capability whose provider is down.', creditsCost: 2, endpoint: `${providerUrl}/fail` },
        ],
      },
      { id: 'docs', name: 'Docs', capabilities: [{ id: 'site/map', name: 'Map a docs site', description: 'Docs URLs.', creditsCost: 1, builtin: 'map', domains: ['docs.example'] }] },
    ],
  }));
  // The operator's command, as an operator runs it.
  const out = await run(process.execPath, ['--import', 'tsx', join(root, 'apps/server/src/catalog.ts'), 'import', file], { env: { ...process.env, DATABASE_URL: stack.env.DATABASE_URL, LOG_LEVEL: 'silent' } });
  assert.match(out.stdout, /imported 3 capabilities/);
  team = await stack.newTeam({ flags: { catalog: true } });
  fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
});

after(async () => {
  await stack?.stop();
  await model?.close();
  await site?.close();
  provider?.closeAllConnections();
  await new Promise<void>((r) => (provider ? provider.close(() => r()) : r()));
});

describe('catalog mode', { timeout: 240_000 }, () => {
  test('rule 1: catalog (or alexandria) with url, formats or other options → 400; both names at once → 400', async () => {
    for (const body of [
      { alexandria: lookup('acme.test'), url: site.url('/product') },
      { alexandria: lookup('acme.test'), formats: ['markdown'] },
      { catalog: lookup('acme.test'), onlyMainContent: false },
      { catalog: lookup('acme.test'), alexandria: lookup('acme.test') },
      { alexandria: { ...lookup('acme.test'), extra: 1 } },
    ]) {
      const r = await post(body);
      assert.equal(r.status, 400, JSON.stringify(body));
    }
    assert.equal(totalExecutions(), 0);
  });

  test('the JS SDK runs a call; the x-request-id is echoed, and a repeat replays the answer and its scrape_id without executing again', async () => {
    const requestId = 'sdk-replay-1';
    const first = await fc.scrape({ alexandria: lookup('acme.test'), requestId });
    assert.equal(first.requestId, requestId);
    assert.equal(first.creditsCost, 3);
    const [r] = first.alexandria;
    assert.equal(r!.error, undefined);
    assert.deepEqual((r!.data as { company: unknown }).company, { domain: 'acme.test', name: 'Company of acme.test' });
    assert.equal(r!.provider, 'acme');
    assert.equal(r!.upstreamStatus, 200);
    const again = await fc.scrape({ alexandria: lookup('acme.test'), requestId });
    assert.equal(again.scrapeId, first.scrapeId);
    assert.deepEqual(again.alexandria, first.alexandria);
    assert.equal(executionsOf(first.scrapeId), 1, 'executed once');
    // Billed once: the call's price, nothing held back.
    const b = await teamCreditBalance(stack.db.db, team.teamId);
    assert.deepEqual(b, { used: 3, reserved: 0 });
    const raw = await post({ catalog: lookup('acme.test') }, requestId);
    assert.equal(raw.status, 200);
    assert.equal(raw.headers.get('x-request-id'), requestId);
    assert.equal(raw.json.scrape_id, first.scrapeId);
  });

  test('without x-request-id the API generates one and returns it', async () => {
    const r = await post({ catalog: lookup('generated.test') });
    assert.equal(r.status, 200);
    const id = r.headers.get('x-request-id');
    assert.match(id ?? '', /^[0-9a-f-]{36}$/);
    const again = await post({ catalog: lookup('generated.test') }, id!);
    assert.equal(again.json.scrape_id, r.json.scrape_id);
  });

  test('rule 2: the same x-request-id with other options → 409 duplicate_request naming the original charge', async () => {
    const ok = await post({ catalog: lookup('dup.test') }, 'dup-1');
    assert.equal(ok.status, 200);
    const before = totalExecutions();
    const r = await post({ catalog: lookup('other.test') }, 'dup-1');
    assert.equal(r.status, 409);
    assert.equal(r.json.code, 'duplicate_request');
    assert.equal(r.json.chargeId, ok.json.scrape_id);
    assert.equal(totalExecutions(), before);
  });

  test('rule 2: the same x-request-id while the original runs → 409 request_in_flight; once done, the replay', async () => {
    const body = { catalog: lookup('slow.test', { delayMs: 2_500 }) };
    const arrived = new Promise<void>((r) => (received = r));
    const first = post(body, 'inflight-1');
    await arrived;
    const second = await post(body, 'inflight-1');
    assert.equal(second.status, 409);
    assert.equal(second.json.code, 'request_in_flight');
    const done = await first;
    assert.equal(done.status, 200);
    assert.equal(second.json.chargeId, done.json.scrape_id);
    const third = await post(body, 'inflight-1');
    assert.deepEqual(third.json, done.json);
    assert.equal(executionsOf(done.json.scrape_id), 1);
  });

  test('race: concurrent requests with one x-request-id execute exactly once; the others replay or are told it is in flight', async () => {
    for (let round = 0; round < 3; round++) {
      const id = `race-${round}`;
      const before = totalExecutions();
      const body = { catalog: lookup(`race${round}.test`, { delayMs: 300 }) };
      const rs = await Promise.all(Array.from({ length: 8 }, () => post(body, id)));
      assert.equal(totalExecutions() - before, 1, `round ${round}: one execution`);
      const oks = rs.filter((r) => r.status === 200);
      assert.ok(oks.length >= 1);
      assert.equal(new Set(oks.map((r) => r.json.scrape_id)).size, 1, 'one scrape_id');
      for (const r of rs.filter((x) => x.status !== 200)) {
        assert.equal(r.status, 409);
        assert.equal(r.json.code, 'request_in_flight');
      }
      // Concurrent requests with other options under the same id: still one execution, the rest 409.
      const mixed = await Promise.all([post({ catalog: lookup(`mix${round}.test`) }, `${id}-m`), post({ catalog: lookup(`mix${round}b.test`) }, `${id}-m`)]);
      assert.deepEqual(mixed.map((r) => r.status).sort(), [200, 409]);
      assert.ok(['duplicate_request', 'request_in_flight'].includes(mixed.find((r) => r.status === 409)!.json.code));
    }
    const b = await teamCreditBalance(stack.db.db, team.teamId);
    assert.equal(b.reserved, 0, 'no reservation left behind');
  });

  test('rule 3: an unknown provider or capability → 404 unknown_provider, nothing executed or stored', async () => {
    const before = totalExecutions();
    for (const c of [{ provider: 'nope', capability: 'x' }, { provider: 'acme', capability: 'company/nothing' }]) {
      const r = await post({ catalog: [lookup('acme.test'), c] }, `unknown-${c.provider}`);
      assert.equal(r.status, 404);
      assert.equal(r.json.code, 'unknown_provider');
    }
    assert.equal(totalExecutions(), before);
    const rows = await stack.db.pool.query(`SELECT count(*)::int AS n FROM catalog_requests WHERE request_id LIKE 'unknown-%'`);
    assert.equal(rows.rows[0].n, 0);
    await assert.rejects(fc.scrape({ alexandria: { provider: 'nope', capability: 'x' } }), (e: any) => e.status === 404 && e.code === 'unknown_provider');
  });

  test("options that break the capability's JSON Schema → 400 naming the call; nothing executed", async () => {
    const before = totalExecutions();
    const r = await post({ catalog: [lookup('acme.test'), { provider: 'acme', capability: 'company/lookup', options: { domain: 'x', colour: 'blue' } }] });
    assert.equal(r.status, 400);
    assert.ok(r.json.details.every((d: any) => d.path[0] === 'catalog' && d.path[1] === 1), JSON.stringify(r.json.details));
    assert.ok(r.json.details.length >= 2, 'both problems (minLength, additional property)');
    const builtin = await post({ catalog: { provider: 'wds', capability: 'scrape', options: { url: 'ftp://x' } } });
    assert.equal(builtin.status, 400);
    assert.equal(totalExecutions(), before);
  });

  test('rule 4: insufficient credits → 402 insufficient_credits, nothing executed; the same id works once credits allow', async () => {
    const poor = await stack.newTeam({ flags: { catalog: true } });
    await setTeamLimits(stack.db.db, poor.teamId, { creditLimit: 4 });
    const before = totalExecutions();
    const body = { catalog: [lookup('poor.test'), lookup('poor2.test')] };
    const r = await post(body, 'poor-1', poor.apiKey);
    assert.equal(r.status, 402);
    assert.equal(r.json.code, 'insufficient_credits');
    assert.equal(totalExecutions(), before);
    assert.deepEqual(await teamCreditBalance(stack.db.db, poor.teamId), { used: 0, reserved: 0 });
    await setTeamLimits(stack.db.db, poor.teamId, { creditLimit: 100 });
    const ok = await post(body, 'poor-1', poor.apiKey);
    assert.equal(ok.status, 200);
    assert.equal(ok.json.data.creditsCost, 6);
    assert.equal(totalExecutions(), before + 2);
    assert.deepEqual(await teamCreditBalance(stack.db.db, poor.teamId), { used: 6, reserved: 0 });
  });

  test('403: a team without catalog access, or with zero data retention', async () => {
    for (const flags of [{}, { catalog: true, zeroDataRetention: true }]) {
      const t = await stack.newTeam({ flags });
      const r = await post({ catalog: lookup('acme.test') }, undefined, t.apiKey);
      assert.equal(r.status, 403);
    }
  });

  test('several calls: each answers data or its own error; only successes are billed', async () => {
    const r = await post({ catalog: [lookup('multi.test'), { provider: 'acme', capability: 'company/fail' }, { provider: 'firecrawl', capability: 'find-tools', options: { providers: ['acme'] } }] }, 'multi-1');
    assert.equal(r.status, 200);
    const [a, b, c] = r.json.data.alexandria;
    assert.equal(a.creditsCost, 3);
    assert.deepEqual(b, { provider: 'acme', capability: 'company/fail', error: { code: 'upstream_down', message: 'Acme is down', status: 503 } });
    assert.deepEqual(c.data.items.map((i: any) => i.id), ['acme/company/fail', 'acme/company/lookup']);
    assert.equal(c.creditsCost, 0);
    assert.equal(r.json.data.creditsCost, 3);
  });

  test('built-in capabilities: scrape, map, search and the SDK’s findTools', async () => {
    const before = await teamCreditBalance(stack.db.db, team.teamId);
    const res = await fc.scrape({
      alexandria: [
        { provider: 'wds', capability: 'scrape', options: { url: site.url('/product'), formats: ['markdown', 'links'] } },
        { provider: 'wds', capability: 'map', options: { url: site.url('/product'), sitemap: 'skip' } },
        { provider: 'docs', capability: 'site/map', options: { url: site.url('/product'), sitemap: 'skip', limit: 5 } },
      ],
    });
    const [scrape, map, docs] = res.alexandria as any[];
    assert.match(scrape.data.markdown, /A mug for tea/);
    assert.deepEqual(scrape.data.links, []);
    assert.equal(scrape.creditsCost, 1);
    assert.ok(map.data.links.some((l: any) => l.url === site.url('/product')));
    assert.ok(docs.data.links.length >= 1);
    assert.equal(res.creditsCost, 3);
    const after = await teamCreditBalance(stack.db.db, team.teamId);
    assert.equal(after.used - before.used, 3, 'the scrape billed as a scrape, the maps at their price');
    assert.equal(after.reserved, 0);
    // The scraped page is in the own index now: the built-in search finds it.
    const search = await fc.scrape({ alexandria: { provider: 'wds', capability: 'search', options: { query: 'stoneware mug', limit: 3 } } });
    const found = search.alexandria[0] as any;
    assert.equal(found.data.web[0].url, site.url('/product'));
    assert.equal(found.creditsCost, 2);
    const tools = await fc.findTools({ providers: ['acme'], level: 'tools', expand: ['options'] });
    assert.equal(tools.level, 'tools');
    assert.deepEqual(tools.items.map((i) => i.id), ['acme/company/fail', 'acme/company/lookup']);
    assert.deepEqual((tools.items[1] as any).options.map((o: any) => o.name), ['domain', 'delayMs']);
    const top = await fc.findTools();
    assert.deepEqual(top.items.map((i) => i.id), ['wds', 'firecrawl', 'acme', 'docs']);
  });

  test('503 request_unresolved: a request whose workflow was lost mid-call; retries keep answering it, never re-executing', async () => {
    const arrived = new Promise<void>((r) => (received = r));
    const first = post({ catalog: lookup('lost.test', { delayMs: 4_000 }) }, 'lost-1');
    await arrived;
    const connection = await Connection.connect({ address: testInfra().temporalAddress });
    try {
      const client = new Client({ connection, namespace: stack.namespace });
      await client.workflow.getHandle(`catalog-${team.teamId}-lost-1`).terminate('test: the workflow is lost');
    } finally {
      await connection.close();
    }
    const r = await first;
    assert.equal(r.status, 503);
    assert.equal(r.json.code, 'request_unresolved');
    assert.match(r.json.chargeId, /^[0-9a-f-]{36}$/);
    const before = totalExecutions();
    const retry = await post({ catalog: lookup('lost.test', { delayMs: 4_000 }) }, 'lost-1');
    assert.equal(retry.status, 503);
    assert.equal(retry.json.code, 'request_unresolved');
    assert.equal(retry.json.chargeId, r.json.chargeId);
    assert.equal(totalExecutions(), before);
  });
});

describe('domainTools', { timeout: 60_000 }, () => {
  test("data.tools lists the catalog's tools whose declared domains cover the page's", async () => {
    const url = site.url('/product').replace('127.0.0.1', 'www.shop.test');
    const doc = await fc.scrape(url, { formats: ['markdown'], domainTools: true });
    assert.match(doc.markdown ?? '', /Blue mug/);
    assert.deepEqual(doc.tools!.map((t) => t.id), ['acme/company/fail', 'acme/company/lookup']);
    const t = doc.tools!.find((x) => x.id === 'acme/company/lookup')!;
    assert.deepEqual(t.matchedBy, ['domain']);
    assert.deepEqual(t.matchedUrls, [url]);
    assert.equal(t.creditsCost, 3);
    const full = await fc.scrape(url, { formats: ['markdown'], domainTools: true, toolDetail: 'full' });
    assert.deepEqual(full.tools!.find((x) => x.id === 'acme/company/lookup')!.options!.map((o) => o.name), ['domain', 'delayMs']);
    // Another domain: an empty list; the page's own scrape is billed, the tools are free.
    const none = await fc.scrape(site.url('/product'), { domainTools: true });
    assert.deepEqual(none.tools, []);
  });
  test('403 without catalog access or with zero data retention', async () => {
    assert.equal((await call(stack, 'POST', '/v2/scrape', { url: site.url('/product'), domainTools: true })).status, 403);
    const zdr = await stack.newTeam({ flags: { catalog: true, zeroDataRetention: true } });
    assert.equal((await call({ url: stack.url, apiKey: zdr.apiKey }, 'POST', '/v2/scrape', { url: site.url('/product'), domainTools: true, zeroDataRetention: true })).status, 403);
  });
});

describe('search: alexandria source and domainTools', { timeout: 60_000 }, () => {
  test('sources ["alexandria"] ranks tools against the query, with no web results and no charge', async () => {
    const before = await teamCreditBalance(stack.db.db, team.teamId);
    const r = await fc.search('company facts behind a domain', { sources: ['alexandria'] });
    assert.equal(r.web, undefined);
    assert.equal(r.tools![0]!.id, 'acme/company/lookup');
    assert.deepEqual(r.tools![0]!.matchedBy, ['semantic']);
    assert.deepEqual(await teamCreditBalance(stack.db.db, team.teamId), before);
  });
  test('domainTools matches tools to the domains of URLs in the query', async () => {
    const r = await fc.search('about www.shop.test', { sources: ['web'], domainTools: true });
    assert.ok(Array.isArray(r.web));
    const ids = r.tools!.map((t) => t.id);
    assert.ok(ids.includes('acme/company/lookup'), JSON.stringify(ids));
    assert.deepEqual(r.tools!.find((t) => t.id === 'acme/company/lookup')!.matchedBy, ['domain']);
  });
});

describe('agent exchange (Firecrawl Exchange = the catalog)', { timeout: 180_000 }, () => {
  test('exchange.enabled gives the agent find_tools and call_tool over the catalog; the status counts paid calls', { timeout: 120_000 }, async () => {
    const before = totalExecutions();
    const { id } = await fc.startAgent({ prompt: 'Find the company behind agent.test', exchange: { enabled: true, maxCalls: 3 } });
    const s = await until(async () => {
      const st = await fc.getAgentStatus(id);
      return st.status === 'processing' ? null : st;
    }, 'the agent to finish', { timeoutMs: 90_000, everyMs: 250 });
    assert.equal(s.status, 'completed', JSON.stringify(s));
    assert.deepEqual(s.data, { fromTool: true });
    assert.equal(totalExecutions(), before + 1, 'the provider ran once');
    assert.deepEqual(s.exchange, { enabled: true, requireApproval: false, onTermsRequired: 'skip', paidCalls: 1, creditsUsed: 3 });
    // The model was offered the tools and read the catalog's listing.
    const reqs = model.chatRequests();
    assert.ok(reqs[0]!.tools!.some((t: any) => (t.function?.name ?? t.name) === 'call_tool'));
    assert.match(promptText(reqs[1]!), /acme \/ company\/lookup — Company lookup/);
  });
  test('without catalog access → 403; approvals of paid calls → 400 FEATURE_NOT_AVAILABLE', async () => {
    assert.equal((await call(stack, 'POST', '/v2/agent', { prompt: 'x', exchange: { enabled: true } })).status, 403);
    const r = await call({ url: stack.url, apiKey: team.apiKey }, 'POST', '/v2/agent', { prompt: 'x', exchange: { enabled: true, requireApproval: true } });
    assert.equal(r.status, 400);
    assert.equal(r.json.code, 'FEATURE_NOT_AVAILABLE');
  });
});

describe('durability', { timeout: 240_000 }, () => {
  test('a worker SIGKILLed mid-call: the call is redelivered with the same Idempotency-Key, executed once, billed once', { timeout: 180_000 }, async () => {
    const arrived = new Promise<void>((r) => (received = r));
    const pending = post({ catalog: lookup('kill.test', { delayMs: 5_000 }) }, 'kill-1');
    await arrived;
    stack.worker.child.kill('SIGKILL');
    await stack.addWorker();
    const r = await pending;
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const key = `${r.json.scrape_id}:0`;
    assert.equal(deliveries.filter((k) => k === key).length, 2, 'delivered again after the kill');
    assert.equal(executions.get(key), 1, 'the provider executed it once');
    assert.deepEqual((r.json.data.alexandria[0].data as { company: unknown }).company, { domain: 'kill.test', name: 'Company of kill.test' });
    const charges = await stack.db.pool.query(`SELECT count(*)::int AS n, sum(amount)::int AS credits FROM credit_ledger WHERE job_id = $1 AND entry = 'charge'`, [r.json.scrape_id]);
    assert.deepEqual(charges.rows[0], { n: 1, credits: 3 });
  });
});
