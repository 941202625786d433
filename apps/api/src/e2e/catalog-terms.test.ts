import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { teamCreditBalance } from '@wds/db';
import { call, namespaceFor, startStack, type Stack } from '@wds/test-utils';

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
  stack = await startStack({ namespace: namespaceFor(import.meta.url) });
  file = join(mkdtempSync(join(tmpdir(), 'wds-terms-')), 'catalog.json');
  catalogFile('2026-01');
  await operator('import', file);
  team = await stack.newTeam({ flags: { catalog: true } });
  fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
});

after(async () => {
  await stack?.stop();
  provider?.closeAllConnections();
  await new Promise<void>((r) => (provider ? provider.close(() => r()) : r()));
});

describe('third-party data terms', { timeout: 180_000 }, () => {
  test('a gated provider before acceptance → 403 THIRD_PARTY_DATA_TERMS_REQUIRED with requiresAction and how to accept; nothing runs or is charged', async () => {
    const r = await post({ catalog: [open, gated] }, 'terms-1');
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'THIRD_PARTY_DATA_TERMS_REQUIRED');
    assert.equal(r.json.requiresAction, true);
    assert.match(r.json.error, /Gated data/);
    const [gate] = r.json.details as { type: string; provider: string; version: string; url: string; digest: string; accept: unknown }[];
    assert.deepEqual([gate!.type, gate!.provider, gate!.version, gate!.url, gate!.digest], ['accept_terms', 'gated', '2026-01', 'https://gated.example/terms', 'sha256:abcd']);
    assert.deepEqual(gate!.accept, accept('2026-01'));
    assert.equal((r.json.details as unknown[]).length, 1, 'the open provider needs nothing');
    assert.equal(executions, 0, 'not even the open call ran');
    assert.deepEqual(await teamCreditBalance(stack.db.db, team.teamId), { used: 0, reserved: 0 });
    // The JS SDK surfaces the status and code.
    await assert.rejects(fc.scrape({ alexandria: gated }), (e: { status?: number; code?: string }) => e.status === 403 && e.code === 'THIRD_PARTY_DATA_TERMS_REQUIRED');
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
    const shown = await fc.scrape({ alexandria: show });
    assert.equal((shown.alexandria[0]!.data as { acceptedVersion?: string }).acceptedVersion, '2026-01');
    const out = await operator('accept-terms', team.teamId, 'gated');
    assert.match(out.stdout, /accepted gated's terms version 2026-07/);
    assert.equal((await post({ catalog: gated })).status, 200);
    await assert.rejects(operator('accept-terms', team.teamId, 'open'), /publishes no third-party data terms/);
  });
});
