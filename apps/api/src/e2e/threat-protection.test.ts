import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl, { type SdkError } from '@mendable/firecrawl-js';
import { call, html, namespaceFor, startFakeOpenAI, startFixtureSite, startStack, until, type FakeChatRequest, type FakeOpenAI, type FixtureSite, type Stack } from '@wds/test-utils';

// Threat protection (Firecrawl's docs: features/threat-protection) on the real stack: the
// request's blacklist / whitelist / blockedTlds are enforced on every URL a request would fetch —
// the scrape target and each redirect hop (403 unsafe_domain_blocked, the blocked page never
// requested), a cached copy that came from a blocked site, a crawl's seed (403) and the links it
// finds (skipped), a batch's URLs, a map's links (left out), an agent's starting URLs, a
// monitor's targets (at create/update and on each check's fetches), the URLs an agent's tools
// are asked to fetch (a tool error the model reads, nothing fetched) — and the
// classifier modes this deployment cannot run are answered before anything is fetched. Host
// names are mapped to the fixture site on 127.0.0.1 (WDS_HOST_OVERRIDES).
let stack: Stack;
let site: FixtureSite;
let team: { teamId: string; apiKey: string };
let fc: Firecrawl;
let port: number;
let model: FakeOpenAI;
const T = { timeout: 120_000 };

const tp = { mode: 'manual-only', blacklist: ['*.safe.test'], blockedTlds: ['zip'] } as const;
const at = (host: string, path: string) => `http://${host}:${port}${path}`;
const post = (path: string, body: unknown) => call({ url: stack.url, apiKey: team.apiKey }, 'POST', path, body);

function assertBlocked(r: { status: number; json: any; text: string }, rule: string) {
  assert.equal(r.status, 403, r.text);
  assert.equal(r.json.success, false);
  assert.equal(r.json.code, 'unsafe_domain_blocked');
  assert.match(r.json.error, new RegExp(`rule: ${rule}`));
}

before(async () => {
  site = await startFixtureSite();
  port = Number(new URL(site.origin).port);
  site.route('/page', html(`<html><head><title>Safe</title></head><body><main><h1>Safe page</h1><p>Links below.</p>
    <a href="/a">a</a> <a href="${at('bad.safe.test', '/b-bad')}">bad</a></main></body></html>`));
  site.route('/a', html('<html><head><title>A</title></head><body><main><h1>Page a</h1><p>Allowed.</p></main></body></html>'));
  site.route('/b-bad', html('<html><head><title>B</title></head><body><main><h1>Blocked page</h1></main></body></html>'));
  site.route('/landing', html('<html><head><title>Landing</title></head><body><main><h1>Landing</h1><p>Where the redirect goes.</p></main></body></html>'));
  site.route('/redirect', (_q, r) => void r.writeHead(302, { location: at('bad.safe.test', '/landing') }).end());
  // A chain through a blocked host that ends on an allowed one: only a check of each hop sees it.
  site.route('/chain', (_q, r) => void r.writeHead(302, { location: at('bad.safe.test', '/hop') }).end());
  site.route('/hop', (_q, r) => void r.writeHead(302, { location: at('safe.test', '/a') }).end());
  model = await startFakeOpenAI({ handler: agentScript });
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: {
      WDS_HOST_OVERRIDES: 'safe.test=127.0.0.1,*.safe.test=127.0.0.1,files.zip=127.0.0.1',
      ...model.env,
    },
  });
  // A browser worker: pages with actions render in Chromium.
  await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-browser', WDS_PUBLIC_URL: stack.url, WDS_BROWSER_PAGES: '1' });
  team = await stack.newTeam({ flags: { threatProtection: true } });
  fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
});

after(async () => {
  await stack?.stop();
  await site?.close();
  await model?.close();
});

/**
 * The agent's model: its first step asks for a blocked page, a page that redirects onto a blocked
 * host, a map of a page that links to one and a sub-agent starting at a blocked TLD; then finishes.
 */
function agentScript(r: FakeChatRequest) {
  if (!r.tools?.length) return { content: {} };
  const step = r.messages.filter((m) => m.role === 'assistant').length + 1;
  if (step > 1) return { toolCalls: [{ id: 'c-fin', name: 'finish', arguments: { data: { done: true } } }] };
  return {
    toolCalls: [
      { id: 'c-bad', name: 'scrape', arguments: { url: at('bad.safe.test', '/b-bad') } },
      { id: 'c-redir', name: 'scrape', arguments: { url: at('safe.test', '/redirect') } },
      { id: 'c-map', name: 'map', arguments: { url: at('safe.test', '/page') } },
      { id: 'c-spawn', name: 'spawn_subagent', arguments: { prompt: 'look there', urls: [at('files.zip', '/page')] } },
    ],
  };
}

describe('threat protection', () => {
  test('scrape: a blacklisted host or blocked TLD is 403 unsafe_domain_blocked before anything is fetched; the whitelist wins; mode off checks nothing', T, async () => {
    const hits = site.hits('/page');
    assertBlocked(await post('/v2/scrape', { url: at('bad.safe.test', '/page'), threatProtection: tp }), 'blacklist');
    assertBlocked(await post('/v2/scrape', { url: at('files.zip', '/page'), threatProtection: tp }), 'blocked_tld');
    // The SDK surfaces Firecrawl's code.
    await assert.rejects(fc.scrape(at('bad.safe.test', '/page'), { threatProtection: tp } as never), (e: SdkError) => e.status === 403 && e.code === 'unsafe_domain_blocked');
    assert.equal(site.hits('/page'), hits, 'no blocked request reached the site');
    // An alternate spelling of a listed address is the same host (integer-form IPv4).
    assertBlocked(await post('/v2/scrape', { url: `http://2130706433:${port}/page`, threatProtection: { blacklist: ['127.0.0.1'] } }), 'blacklist');

    const ok = await fc.scrape(at('safe.test', '/page'), { threatProtection: tp, formats: ['markdown'] } as never);
    assert.match(ok.markdown ?? '', /Safe page/);
    const white = await post('/v2/scrape', { url: at('bad.safe.test', '/page'), threatProtection: { ...tp, whitelist: ['bad.safe.test'] }, maxAge: 0 });
    assert.equal(white.status, 200, white.text);
    const off = await post('/v2/scrape', { url: at('bad.safe.test', '/page'), threatProtection: { ...tp, mode: 'off' }, maxAge: 0 });
    assert.equal(off.status, 200, off.text);
  });

  test('a redirect onto a blocked host is refused before the hop is requested; a cached copy that came from one is not served', T, async () => {
    assertBlocked(await post('/v2/scrape', { url: at('safe.test', '/redirect'), threatProtection: tp, maxAge: 0 }), 'blacklist');
    assert.equal(site.hits('/landing'), 0, 'the blocked destination was never requested');
    // Without the policy the redirect is followed and the page cached under the redirecting URL…
    const plain = await post('/v2/scrape', { url: at('safe.test', '/redirect') });
    assert.equal(plain.status, 200, plain.text);
    assert.equal(site.hits('/landing'), 1);
    // …and that copy is refused to a request with the policy (served from the cache otherwise).
    assertBlocked(await post('/v2/scrape', { url: at('safe.test', '/redirect'), threatProtection: tp }), 'blacklist');
    assert.equal(site.hits('/landing'), 1);
  });

  test('crawl: a blocked seed fails the request; blocked links found mid-crawl are skipped and the crawl goes on', T, async () => {
    assertBlocked(await post('/v2/crawl', { url: at('bad.safe.test', '/page'), scrapeOptions: { threatProtection: tp } }), 'blacklist');
    const job = await fc.crawl(at('safe.test', '/page'), { limit: 10, allowSubdomains: true, crawlEntireDomain: true, scrapeOptions: { threatProtection: tp, maxAge: 0 } as never, pollInterval: 1 });
    assert.equal(job.status, 'completed', JSON.stringify(job));
    const urls = job.data.map((d) => d.metadata?.sourceURL ?? d.metadata?.url).sort();
    assert.deepEqual(urls, [at('safe.test', '/a'), at('safe.test', '/page')]);
    assert.equal(site.hits('/b-bad'), 0, 'the blocked link was never fetched');
    // The same crawl without the policy does follow it (the test can fail).
    const open = await fc.crawl(at('safe.test', '/page'), { limit: 10, allowSubdomains: true, crawlEntireDomain: true, scrapeOptions: { maxAge: 0 } as never, pollInterval: 1 });
    assert.ok(open.data.some((d) => (d.metadata?.sourceURL ?? '').includes('/b-bad')), JSON.stringify(open.data.map((d) => d.metadata?.sourceURL)));
  });

  test('map leaves blocked links out; batch scrape refuses a blocked URL; agent refuses blocked starting URLs', T, async () => {
    const map = await post('/v2/map', { url: at('safe.test', '/page'), threatProtection: tp });
    assert.equal(map.status, 200, map.text);
    const links = (map.json.links as { url: string }[]).map((l) => l.url);
    assert.ok(links.includes(at('safe.test', '/a')), JSON.stringify(links));
    assert.ok(!links.some((u) => u.includes('bad.safe.test')), JSON.stringify(links));
    const unfiltered = await post('/v2/map', { url: at('safe.test', '/page') });
    assert.ok((unfiltered.json.links as { url: string }[]).some((l) => l.url.includes('bad.safe.test')), 'without the policy the link is there');
    assertBlocked(await post('/v2/map', { url: at('bad.safe.test', '/page'), threatProtection: tp }), 'blacklist');

    const batch = await post('/v2/batch/scrape', { urls: [at('safe.test', '/a'), at('bad.safe.test', '/page')], threatProtection: tp });
    assertBlocked(batch, 'blacklist');
    assert.match(batch.json.error, /bad\.safe\.test/);
    assertBlocked(await post('/v2/agent', { prompt: 'read it', urls: [at('files.zip', '/page')], threatProtection: tp }), 'blocked_tld');
  });

  test('monitors: blocked target URLs are 403 at create and update (nothing stored); a check refuses a redirect onto a blocked host and records the page as failed with the code', T, async () => {
    const name = 'threat-monitor';
    const scrapeBlocked = await post('/v2/scrape', { url: at('bad.safe.test', '/page'), threatProtection: tp });
    const targets = (urls: string[]) => [{ type: 'scrape', urls, scrapeOptions: { threatProtection: tp } }];
    const refused = await post('/v2/monitor', { name, schedule: { text: 'daily' }, targets: targets([at('safe.test', '/a'), at('bad.safe.test', '/page')]) });
    assertBlocked(refused, 'blacklist');
    // The same answer /v2/scrape gives for that URL, byte for byte.
    assert.deepEqual(refused.json, scrapeBlocked.json);
    assertBlocked(await post('/v2/monitor', { name, schedule: { text: 'daily' }, targets: [{ type: 'crawl', url: at('files.zip', '/page'), scrapeOptions: { threatProtection: tp } }] }), 'blocked_tld');
    const listed = await call({ url: stack.url, apiKey: team.apiKey }, 'GET', '/v2/monitor');
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual((listed.json.data as { name: string }[]).filter((m) => m.name === name), [], 'a refused monitor is not stored');

    const m = await fc.createMonitor({ name, schedule: { text: 'daily' }, targets: targets([at('safe.test', '/redirect'), at('safe.test', '/a')]) as never });
    const patched = await call({ url: stack.url, apiKey: team.apiKey }, 'PATCH', `/v2/monitor/${m.id}`, { targets: targets([at('bad.safe.test', '/page')]) });
    assertBlocked(patched, 'blacklist');
    const kept = await fc.getMonitor(m.id);
    assert.deepEqual((kept.targets[0] as { urls?: string[] }).urls, [at('safe.test', '/redirect'), at('safe.test', '/a')], 'a refused update changes nothing');

    // /redirect answers 302 to bad.safe.test: the check must not follow it.
    const landing = site.hits('/landing');
    const run = await fc.runMonitor(m.id);
    const check = await until(async () => {
      const c = await fc.getMonitorCheck(m.id, run.id, { limit: 100 });
      return c.status !== 'running' && c.status !== 'queued' ? c : null;
    }, 'the monitor check to end', { timeoutMs: 90_000, everyMs: 200 });
    const pages = Object.fromEntries((check.pages as { url: string; status: string; error?: string | null; currentScrapeId?: string | null }[]).map((p) => [new URL(p.url).pathname, p]));
    assert.equal(pages['/a']?.status, 'new', JSON.stringify(check.pages));
    assert.equal(pages['/redirect']?.status, 'error', JSON.stringify(check.pages));
    assert.match(pages['/redirect']?.error ?? '', /^unsafe_domain_blocked: .*rule: blacklist/);
    assert.equal(pages['/redirect']?.currentScrapeId ?? null, null, 'nothing of the blocked page is stored');
    assert.equal(site.hits('/landing'), landing, 'the blocked hop was never requested');
  });

  test('browser: a redirect chain that passes through a blocked host is refused mid-chain, though it ends on an allowed page', T, async () => {
    const actions = [{ type: 'wait', milliseconds: 10 }];
    // Without the policy Chromium follows the chain to /a (the test can fail).
    const plain = await post('/v2/scrape', { url: at('safe.test', '/chain'), actions, maxAge: 0 });
    assert.equal(plain.status, 200, plain.text);
    assert.equal(plain.json.data.metadata.url, at('safe.test', '/a'));
    const r = await post('/v2/scrape', { url: at('safe.test', '/chain'), actions, threatProtection: tp, maxAge: 0 });
    assertBlocked(r, 'blacklist');
    assert.match(r.json.error, /bad\.safe\.test/);
  });

  test("agent: URLs its tools are asked for past the starting URLs are checked (a tool error the model reads and the trace shows, never fetched); map leaves blocked links out", T, async () => {
    const hits = { bad: site.hits('/b-bad'), landing: site.hits('/landing') };
    const { id } = await fc.startAgent({ prompt: 'read the safe page', urls: [at('safe.test', '/page')], threatProtection: tp } as never);
    const s = await until(async () => {
      const x = await fc.getAgentStatus(id);
      return x.status === 'processing' ? null : x;
    }, 'the agent to finish', { timeoutMs: 90_000, everyMs: 250 });
    assert.equal(s.status, 'completed', JSON.stringify(s));
    assert.equal(site.hits('/b-bad'), hits.bad, 'the blocked page was never fetched');
    assert.equal(site.hits('/landing'), hits.landing, 'the blocked redirect hop was never requested');

    // What the model read back for each call (the step-2 request carries the tool messages).
    const second = model.chatRequests().find((r) => r.tools?.length && r.messages.some((m) => m.tool_call_id === 'c-bad'));
    assert.ok(second, 'the model was asked again after the tool calls');
    const told = (callId: string) => String(second.messages.find((m) => m.tool_call_id === callId)?.content ?? '');
    assert.match(told('c-bad'), /^Error: unsafe_domain_blocked: .*rule: blacklist/);
    assert.match(told('c-redir'), /^Error: unsafe_domain_blocked: .*bad\.safe\.test.*rule: blacklist/);
    assert.match(told('c-spawn'), /^Error: unsafe_domain_blocked: .*rule: blocked_tld/);
    assert.match(told('c-map'), new RegExp(at('safe.test', '/a').replace(/[.]/g, '\\.')));
    assert.doesNotMatch(told('c-map'), /bad\.safe\.test/);

    // The trace shows each refusal as the call's error.
    const events = (await fc.getAgentTrace(id)).events as unknown as { type: string; toolCallId?: string; result?: { error?: string } }[];
    const finished = (callId: string) => events.find((e) => e.type === 'tool_call.finished' && e.toolCallId === callId);
    for (const callId of ['c-bad', 'c-redir', 'c-spawn']) {
      assert.match(finished(callId)?.result?.error ?? '', /^unsafe_domain_blocked: /, `${callId}: ${JSON.stringify(finished(callId))}`);
    }
    assert.equal(events.filter((e) => e.type === 'error.occurred').length, 3, JSON.stringify(events.filter((e) => e.type === 'error.occurred')));
  });

  test('modes this deployment cannot run are answered first: normal (closed) → 400, normal with failurePolicy open → the lists alone, zscaler → 403', T, async () => {
    const normal = await post('/v2/scrape', { url: at('safe.test', '/page'), threatProtection: { mode: 'normal' } });
    assert.equal(normal.status, 400, normal.text);
    assert.equal(normal.json.code, 'FEATURE_NOT_AVAILABLE');
    const open = { mode: 'normal', failurePolicy: 'open', blacklist: ['*.safe.test'] };
    assertBlocked(await post('/v2/scrape', { url: at('bad.safe.test', '/page'), threatProtection: open }), 'blacklist');
    assert.equal((await post('/v2/scrape', { url: at('safe.test', '/a'), threatProtection: open })).status, 200);
    const z = await post('/v2/search', { query: 'x', threatProtection: { mode: 'zscaler' } });
    assert.equal(z.status, 403, z.text);
    assert.equal(z.json.code, 'THREAT_PROTECTION_ZSCALER_NOT_CONFIGURED');
  });
});
