import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import Firecrawl, { type SdkError } from '@mendable/firecrawl-js';
import { teamCreditBalance } from '@wds/db';
import { call, namespaceFor, promptText, startFakeOpenAI, startStack, until, type FakeChatRequest, type FakeOpenAI, type Stack } from '@wds/test-utils';

// Third-party data terms (spec: Authentication rule 5, the scrape error table's 403): a provider
// whose catalog entry declares terms is called only for a team that accepted their current
// version; otherwise 403 THIRD_PARTY_DATA_TERMS_REQUIRED with requiresAction, and nothing runs.
let stack: Stack;
let provider: Server;
let providerUrl: string;
let team: { teamId: string; apiKey: string };
let fc: Firecrawl;
let executions = 0;
let file: string;
let model: FakeOpenAI;

const root = new URL('../../../../', import.meta.url).pathname;
const run = promisify(execFile);
const operator = (...args: string[]) => run(process.execPath, ['--import', 'tsx', join(root, 'apps/server/src/catalog.ts'), ...args], { env: { ...process.env, DATABASE_URL: stack.env.DATABASE_URL, LOG_LEVEL: 'silent' } });

const gated = { provider: 'gated', capability: 'data/get', options: { id: 'x1' } };
const open = { provider: 'open', capability: 'data/get', options: { id: 'y1' } };
const show = { provider: 'firecrawl', capability: 'terms/show', options: { provider: 'gated' } };
const accept = (version: string, digest: string | null = 'sha256:abcd') => ({ provider: 'firecrawl', capability: 'terms/accept', options: { provider: 'gated', version, digest, confirmed: true } });
const post = (body: unknown, requestId?: string, key = team.apiKey) => call({ url: stack.url, apiKey: key }, 'POST', '/v2/scrape', body, requestId ? { 'x-request-id': requestId } : {});

function catalogFile(version: string) {
  const capability = { id: 'data/get', name: 'Get data', description: 'Data by id.', creditsCost: 2, options: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } };
  writeFileSync(file, JSON.stringify({
    providers: [
      { id: 'gated', name: 'Gated data', endpoint: `${providerUrl}/get`, terms: { version, url: 'https://gated.example/terms', digest: 'sha256:abcd' }, capabilities: [capability] },
      { id: 'open', name: 'Open data', endpoint: `${providerUrl}/get`, capabilities: [capability] },
    ],
  }));
}

/**
 * The agent's scripted model: its first step calls the gated provider (saying what it adds); a
 * prompt with OPEN then calls the open provider; then it finishes with whether a provider answered.
 */
function agentScript(r: FakeChatRequest) {
  const user = promptText(r);
  const step = r.messages.filter((m) => m.role === 'assistant').length + 1;
  const last = String(r.messages.at(-1)?.content ?? '');
  if (step === 1) return { toolCalls: [{ name: 'call_tool', arguments: { ...gated, adds: 'The gated record x1.' } }] };
  if (step === 2 && user.includes('OPEN')) return { toolCalls: [{ name: 'call_tool', arguments: open }] };
  return { toolCalls: [{ name: 'finish', arguments: { data: { answered: last.includes('"value":42') } } }] };
}

const finished = (fcOf: Firecrawl, id: string) =>
  until(async () => {
    const st = await fcOf.getAgentStatus(id);
    return st.status === 'processing' ? null : st;
  }, 'the agent to finish', { timeoutMs: 90_000, everyMs: 250 });

before(async () => {
  provider = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      executions++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ value: 42 }));
    });
  });
  await new Promise<void>((r) => provider.listen(0, '127.0.0.1', () => r()));
  providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
  model = await startFakeOpenAI({ handler: agentScript });
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { ...model.env } });
  file = join(mkdtempSync(join(tmpdir(), 'wds-terms-')), 'catalog.json');
  catalogFile('2026-01');
  await operator('import', file);
  team = await stack.newTeam({ flags: { catalog: true } });
  fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
});

after(async () => {
  await stack?.stop();
  await model?.close();
  provider?.closeAllConnections();
  await new Promise<void>((r) => (provider ? provider.close(() => r()) : r()));
});

describe('third-party data terms', { timeout: 180_000 }, () => {
  test('a gated provider before acceptance → 403 THIRD_PARTY_DATA_TERMS_REQUIRED with requiresAction and how to accept; nothing runs or is charged', async () => {
    const r = await post({ catalog: [open, gated] }, 'terms-1');
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'THIRD_PARTY_DATA_TERMS_REQUIRED');
    // The SDKs' RequiresAction object (the spec's boolean would be dropped by both SDKs); truthy as the spec's `true`.
    assert.deepEqual(r.json.requiresAction, { type: 'accept_terms', terms: 'gated', version: '2026-01', url: 'https://gated.example/terms' });
    assert.ok(r.json.requiresAction);
    assert.match(r.json.error, /Gated data/);
    const [gate] = r.json.details as { type: string; provider: string; version: string; url: string; digest: string; accept: unknown }[];
    assert.deepEqual([gate!.type, gate!.provider, gate!.version, gate!.url, gate!.digest], ['accept_terms', 'gated', '2026-01', 'https://gated.example/terms', 'sha256:abcd']);
    assert.deepEqual(gate!.accept, accept('2026-01'));
    assert.equal((r.json.details as unknown[]).length, 1, 'the open provider needs nothing');
    assert.equal(executions, 0, 'not even the open call ran');
    assert.deepEqual(await teamCreditBalance(stack.db.db, team.teamId), { used: 0, reserved: 0 });
    // The JS SDK surfaces the status, the code and its parsed requiresAction.
    await assert.rejects(fc.scrape({ alexandria: gated }), (e: SdkError) => {
      assert.equal(e.status, 403);
      assert.equal(e.code, 'THIRD_PARTY_DATA_TERMS_REQUIRED');
      assert.deepEqual(e.requiresAction, { type: 'accept_terms', terms: 'gated', version: '2026-01', url: 'https://gated.example/terms' });
      return true;
    });
    // A provider without terms runs as usual.
    const ok = await fc.scrape({ alexandria: open });
    assert.deepEqual(ok.alexandria[0]!.data, { value: 42 });
  });

  test('terms/show tells the terms and whether they are accepted; terms/accept of another version is the call\'s 409 and accepts nothing', async () => {
    const shown = await fc.scrape({ alexandria: show });
    assert.deepEqual(shown.alexandria[0]!.data, { provider: 'gated', name: 'Gated data', version: '2026-01', url: 'https://gated.example/terms', digest: 'sha256:abcd', accepted: false });
    assert.equal(shown.creditsCost, 0);
    const stale = await fc.scrape({ alexandria: accept('2025-06') });
    assert.equal(stale.alexandria[0]!.error?.code, 'terms_version_mismatch');
    assert.equal(stale.alexandria[0]!.error?.status, 409);
    const wrongDigest = await fc.scrape({ alexandria: accept('2026-01', 'sha256:other') });
    assert.equal(wrongDigest.alexandria[0]!.error?.code, 'terms_version_mismatch');
    assert.equal((await post({ catalog: gated })).status, 403);
    const unknown = await fc.scrape({ alexandria: { ...show, options: { provider: 'open' } } });
    assert.equal(unknown.alexandria[0]!.error?.code, 'no_terms');
  });

  test('after terms/accept the refused request runs under the same x-request-id; another team is still refused', async () => {
    const before = executions;
    const accepted = await fc.scrape({ alexandria: accept('2026-01') });
    assert.equal((accepted.alexandria[0]!.data as { accepted: boolean }).accepted, true);
    assert.equal(((await fc.scrape({ alexandria: show })).alexandria[0]!.data as { accepted: boolean }).accepted, true);
    const r = await post({ catalog: [open, gated] }, 'terms-1');
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.data.creditsCost, 4);
    assert.equal(executions - before, 2);
    const other = await stack.newTeam({ flags: { catalog: true } });
    const refused = await post({ catalog: gated }, undefined, other.apiKey);
    assert.equal(refused.status, 403);
    assert.equal(refused.json.code, 'THIRD_PARTY_DATA_TERMS_REQUIRED');
  });

  test('a new version of the terms asks again; the operator can record an acceptance with npm run catalog -- accept-terms', async () => {
    catalogFile('2026-07');
    await operator('import', file);
    const r = await post({ catalog: gated });
    assert.equal(r.status, 403);
    assert.equal((r.json.details as { version: string }[])[0]!.version, '2026-07');
    assert.equal(r.json.requiresAction.version, '2026-07');
    const shown = await fc.scrape({ alexandria: show });
    assert.equal((shown.alexandria[0]!.data as { acceptedVersion?: string }).acceptedVersion, '2026-01');
    const out = await operator('accept-terms', team.teamId, 'gated');
    assert.match(out.stdout, /accepted gated's terms version 2026-07/);
    assert.equal((await post({ catalog: gated })).status, 200);
    await assert.rejects(operator('accept-terms', team.teamId, 'open'), /publishes no third-party data terms/);
  });
});

describe('third-party data terms in agent runs (exchange.onTermsRequired)', { timeout: 240_000 }, () => {
  const skipped = { provider: 'gated', name: 'Gated data', capability: 'data/get', adds: 'The gated record x1.', reason: 'terms_required', version: '2026-07', termsUrl: 'https://gated.example/terms' };

  test('skip (the default): the gated provider is never called, the run answers with the others and lists it in exchange.skippedProviders', { timeout: 120_000 }, async () => {
    const t = await stack.newTeam({ flags: { catalog: true } });
    const fcT = new Firecrawl({ apiKey: t.apiKey, apiUrl: stack.url });
    const before = executions;
    const { id } = await fcT.startAgent({ prompt: 'Get record x1, OPEN too', exchange: { enabled: true } });
    const s = await finished(fcT, id);
    assert.equal(s.status, 'completed', JSON.stringify(s));
    assert.deepEqual(s.data, { answered: true }, 'the open provider answered');
    assert.equal(executions - before, 1, 'only the open provider ran');
    assert.deepEqual(s.exchange, { enabled: true, requireApproval: false, onTermsRequired: 'skip', paidCalls: 1, creditsUsed: 2, skippedProviders: [skipped] });
    assert.equal(s.pendingApproval, undefined);
  });

  test('ask: the turn ends with a terms pendingApproval and exchange.requiresAction; after terms/accept, approve continues the thread and the provider runs', { timeout: 150_000 }, async () => {
    const t = await stack.newTeam({ flags: { catalog: true } });
    const fcT = new Firecrawl({ apiKey: t.apiKey, apiUrl: stack.url });
    const before = executions;
    const first = await fcT.startAgent({ prompt: 'Get record x1', exchange: { enabled: true, onTermsRequired: 'ask' } });
    const s = await finished(fcT, first.id);
    assert.equal(s.status, 'completed', JSON.stringify(s));
    assert.equal(executions, before, 'nothing was called');
    assert.match(String(s.message), /third-party data terms/);
    const p = s.pendingApproval!;
    assert.ok(p && p.kind === 'terms', JSON.stringify(s));
    const gate = { provider: 'gated', name: 'Gated data', capability: 'data/get', adds: 'The gated record x1.', version: '2026-07', digest: 'sha256:abcd', url: 'https://gated.example/terms' };
    assert.deepEqual(p, { id: p.id, kind: 'terms', reason: p.reason, resolution: null, calls: [], terms: [gate] });
    const action = s.exchange!.requiresAction!;
    assert.equal(action.type, 'accept_terms');
    assert.equal(action.approvalId, p.id);
    assert.deepEqual(action.providers, [{ ...gate, show: { provider: 'firecrawl', capability: 'terms/show', options: { provider: 'gated' } }, accept: accept('2026-07') }]);
    assert.equal(s.exchange!.onTermsRequired, 'ask');
    assert.deepEqual(s.exchange!.skippedProviders, [skipped]);

    // Answers are checked: a wrong id, approve without a thread, approve and decline at once.
    const bad = await call({ url: stack.url, apiKey: t.apiKey }, 'POST', '/v2/agent', { prompt: 'go on', threadId: first.threadId, exchange: { approve: { approvalId: 'nope' } } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json.details[0].path, ['exchange', 'approve', 'approvalId']);
    assert.equal((await call({ url: stack.url, apiKey: t.apiKey }, 'POST', '/v2/agent', { prompt: 'go on', exchange: { approve: { approvalId: p.id } } })).status, 400);
    assert.equal((await call({ url: stack.url, apiKey: t.apiKey }, 'POST', '/v2/agent', { prompt: 'go on', threadId: first.threadId, exchange: { approve: { approvalId: p.id }, decline: { approvalId: p.id } } })).status, 400);
    // Another team cannot answer it (its thread is not found).
    const other = await stack.newTeam({ flags: { catalog: true } });
    assert.equal((await call({ url: stack.url, apiKey: other.apiKey }, 'POST', '/v2/agent', { prompt: 'go on', threadId: first.threadId, exchange: { approve: { approvalId: p.id } } })).status, 404);

    // The user agreed: the caller sends the accept call it was given, then approves.
    const accepted = await fcT.scrape({ alexandria: action.providers[0]!.accept });
    assert.equal((accepted.alexandria[0]!.data as { accepted: boolean }).accepted, true);
    const second = await fcT.startAgent({ prompt: 'Go on', threadId: first.threadId, exchange: { approve: { approvalId: p.id } } });
    const s2 = await finished(fcT, second.id);
    assert.equal(s2.status, 'completed', JSON.stringify(s2));
    assert.deepEqual(s2.data, { answered: true });
    assert.equal(executions - before, 1, 'the gated provider ran once, after acceptance');
    assert.equal(s2.exchange!.onTermsRequired, 'ask', 'inherited from the previous turn');
    assert.equal(s2.exchange!.skippedProviders, undefined);
    const told = model.chatRequests().map(promptText).find((x) => x.includes('Go on'));
    assert.match(String(told), /agreed to the data terms of gated/);
    // The first turn's approval is resolved by the second.
    const again = await fcT.getAgentStatus(first.id);
    assert.deepEqual(again.pendingApproval!.resolution, { approved: true, callIds: [], always: false, byRunId: second.id });
    const thread = await call({ url: stack.url, apiKey: t.apiKey }, 'GET', `/v2/agent/threads/${first.threadId}`);
    assert.equal(thread.status, 200);
    assert.equal(thread.json.thread.runs[0].pendingApproval.id, p.id);
    assert.equal(thread.json.thread.runs[1].pendingApproval, null);
  });

  test('ask, then decline: the next turn skips the declined provider instead of asking again', { timeout: 120_000 }, async () => {
    const t = await stack.newTeam({ flags: { catalog: true } });
    const fcT = new Firecrawl({ apiKey: t.apiKey, apiUrl: stack.url });
    const before = executions;
    const first = await fcT.startAgent({ prompt: 'Get record x1', exchange: { enabled: true, onTermsRequired: 'ask' } });
    const s = await finished(fcT, first.id);
    const second = await fcT.startAgent({ prompt: 'Then without it, OPEN', threadId: first.threadId, exchange: { decline: { approvalId: s.pendingApproval!.id } } });
    const s2 = await finished(fcT, second.id);
    assert.equal(s2.status, 'completed', JSON.stringify(s2));
    assert.equal(s2.pendingApproval, undefined, 'no new offer');
    assert.deepEqual(s2.exchange!.skippedProviders, [skipped]);
    assert.deepEqual(s2.data, { answered: true });
    assert.equal(executions - before, 1, 'only the open provider ran');
    assert.equal((await fcT.getAgentStatus(first.id)).pendingApproval!.resolution!.approved, false);
  });
});
