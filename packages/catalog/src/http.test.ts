import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { invokeHttpProvider, type ProviderCall } from './http';

// The HTTP provider client against a real local server: what it sends, how answers and failures
// become the call's data or error, and the SSRF guard on the provider's address.
let server: Server;
let base: string;
const seen: { headers: IncomingMessage['headers']; body: string }[] = [];

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      const path = req.url ?? '/';
      if (path === '/ok') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: 1 }] }));
      if (path === '/refuse') return void res.writeHead(402, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'credit_budget_exceeded', message: 'Budget used up' } }));
      if (path === '/html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
      if (path === '/big') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ x: 'y'.repeat(5_000) }));
      if (path === '/redirect') return void res.writeHead(302, { location: '/ok' }).end();
      if (path === '/slow') return void setTimeout(() => res.writeHead(200).end('{}'), 3_000);
      res.writeHead(404).end();
    });
  });
  server.keepAliveTimeout = 500;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const call: ProviderCall = { provider: 'acme', capability: 'company/lookup', options: { domain: 'acme.test' }, requestId: 'r1', callId: 'r1:0' };
const allow = { allowPrivateNetwork: true, timeoutMs: 1_500, maxBytes: 1_000 };

describe('invokeHttpProvider', { timeout: 60_000 }, () => {
  test('POSTs the call as JSON with its idempotency key and the configured headers; 2xx JSON is the data', async () => {
    const r = await invokeHttpProvider({ kind: 'http', url: `${base}/ok`, headers: { authorization: 'Bearer provider-secret' } }, call, allow);
    assert.deepEqual(r, { ok: true, status: 200, data: { data: [{ id: 1 }] } });
    const last = seen.at(-1)!;
    assert.deepEqual(JSON.parse(last.body), call);
    assert.equal(last.headers['idempotency-key'], 'r1:0');
    assert.equal(last.headers.authorization, 'Bearer provider-secret');
    assert.equal(last.headers['content-type'], 'application/json');
  });
  test("a provider's refusal is relayed with its status and code", async () => {
    const r = await invokeHttpProvider({ kind: 'http', url: `${base}/refuse` }, call, allow);
    assert.deepEqual(r, { ok: false, error: { code: 'credit_budget_exceeded', message: 'Budget used up', status: 402 } });
  });
  test('a body that is not JSON, one over the size cap, a redirect and a timeout are errors', async () => {
    assert.equal((await invokeHttpProvider({ kind: 'http', url: `${base}/html` }, call, allow) as any).error.code, 'provider_invalid_response');
    assert.equal((await invokeHttpProvider({ kind: 'http', url: `${base}/big` }, call, allow) as any).error.code, 'provider_response_too_large');
    // Redirects are not followed: a 302 is the provider's answer, not the /ok page.
    assert.deepEqual(await invokeHttpProvider({ kind: 'http', url: `${base}/redirect` }, call, allow), { ok: false, error: { code: 'provider_error', message: 'The provider answered 302.', status: 302 } });
    const t0 = Date.now();
    const slow = (await invokeHttpProvider({ kind: 'http', url: `${base}/slow` }, call, { ...allow, timeoutMs: 300 })) as any;
    assert.equal(slow.error.code, 'provider_timeout');
    assert.ok(Date.now() - t0 < 2_500, 'the call ends at its timeout');
  });
  test('the SSRF guard refuses a private address unless the deployment or the provider entry allows it', async () => {
    const before = seen.length;
    const blocked = (await invokeHttpProvider({ kind: 'http', url: `${base}/ok` }, call, { ...allow, allowPrivateNetwork: false })) as any;
    assert.equal(blocked.error.code, 'provider_blocked');
    assert.equal(seen.length, before, 'nothing reached the server');
    const allowed = await invokeHttpProvider({ kind: 'http', url: `${base}/ok`, allowPrivateNetwork: true }, call, { ...allow, allowPrivateNetwork: false });
    assert.equal(allowed.ok, true);
  });
  test('an unreachable provider is an error, not a throw', async () => {
    const r = (await invokeHttpProvider({ kind: 'http', url: 'http://127.0.0.1:1/x' }, call, allow)) as any;
    assert.equal(r.error.code, 'provider_unreachable');
  });
});
