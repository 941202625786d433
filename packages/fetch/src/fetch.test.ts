import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { ScrapeCodes, WdsError } from '@wds/errors';
import { createFetcher, DEFAULT_USER_AGENT, fetchPage, type Fetcher } from './fetch';
import type { FetchRequest } from './types';
import { createConnector } from './net/connector';

const HTML = '<!doctype html><html><head><title>Hello</title></head><body><p>Héllo wörld</p></body></html>';

let main: http.Server;
let mainPort = 0;
let mainHits = 0;
let mainConnections = 0;
let inner: http.Server; // stands for a private host: listens on 127.0.0.2
let innerPort = 0;
let innerHits = 0;
let tlsServer: https.Server | undefined;
let tlsPort = 0;
const fetchers: Fetcher[] = [];

function listen(server: http.Server | https.Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as AddressInfo).port));
  });
}

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const p = url.pathname;
  const send = (status: number, headers: http.OutgoingHttpHeaders, body: Buffer | string) => {
    res.writeHead(status, headers);
    res.end(body);
  };
  const redirect = (location: string, status = 302) => send(status, { location }, 'moved');

  if (p === '/ok') return send(200, { 'content-type': 'Text/HTML; Charset=UTF-8', 'X-Mixed-Case': 'yes' }, HTML);
  // Three hops with three Location styles: relative path, absolute path, absolute URL.
  if (p === '/r/a') return redirect('b', 301);
  if (p === '/r/b') return redirect('/r/c', 303);
  if (p === '/r/c') return redirect(`http://127.0.0.1:${mainPort}/ok`, 307);
  if (p.startsWith('/loop/')) return redirect(`/loop/${Number(p.slice(6)) + 1}`);
  if (p === '/slow-redirect') {
    const n = Number(url.searchParams.get('n'));
    return void setTimeout(() => redirect(`/slow-redirect?n=${n + 1}`), 150);
  }
  if (p === '/to-inner') return redirect(`http://127.0.0.2:${innerPort}/`);
  if (p === '/to-inner-name') return redirect(`http://inner.test:${innerPort}/`);
  if (p === '/to-file') return redirect('file:///etc/passwd');
  if (p === '/to-echo') return redirect('/echo');
  if (p === '/echo') return send(200, { 'content-type': 'application/json' }, JSON.stringify(req.headers));
  if (p === '/gzip') return send(200, { 'content-encoding': 'gzip', 'content-type': 'text/html' }, zlib.gzipSync(HTML));
  if (p === '/br') return send(200, { 'content-encoding': 'br', 'content-type': 'text/html' }, zlib.brotliCompressSync(HTML));
  if (p === '/deflate') return send(200, { 'content-encoding': 'deflate' }, zlib.deflateSync(HTML));
  if (p === '/deflate-raw') return send(200, { 'content-encoding': 'deflate' }, zlib.deflateRawSync(HTML));
  if (p === '/stacked') {
    return send(200, { 'content-encoding': 'gzip, br' }, zlib.brotliCompressSync(zlib.gzipSync(HTML)));
  }
  if (p === '/corrupt') return send(200, { 'content-encoding': 'gzip' }, Buffer.from('definitely not gzip'));
  if (p === '/bomb') {
    // ~10 KB on the wire, 10 MB decompressed.
    return send(200, { 'content-encoding': 'gzip' }, zlib.gzipSync(Buffer.alloc(10 * 1024 * 1024)));
  }
  if (p === '/big') return send(200, { 'content-type': 'text/plain' }, Buffer.alloc(2 * 1024 * 1024, 'a'));
  if (p === '/big-chunked') {
    // No Content-Length, so the cap has to be enforced while streaming.
    res.writeHead(200, { 'content-type': 'text/plain' });
    const chunk = Buffer.alloc(64 * 1024, 'b');
    for (let i = 0; i < 32; i++) res.write(chunk);
    return void res.end();
  }
  if (p === '/exact') return send(200, {}, Buffer.alloc(1000, 'x'));
  if (p === '/404') return send(404, { 'content-type': 'text/html' }, '<h1>Not here</h1>');
  if (p === '/500') return send(500, { 'content-type': 'text/plain' }, 'boom');
  if (p === '/hang') return; // never answers
  if (p === '/hang-body') {
    res.writeHead(200, { 'content-type': 'text/html' });
    return void res.write('<html>'); // headers and a bit of body, then nothing
  }
  send(404, {}, 'no route');
}

before(async () => {
  main = http.createServer((req, res) => {
    mainHits++;
    route(req, res);
  });
  main.on('connection', () => mainConnections++);
  mainPort = await listen(main, '127.0.0.1');

  inner = http.createServer((_req, res) => {
    innerHits++;
    res.end('secret');
  });
  innerPort = await listen(inner, '127.0.0.2');

  // A self-signed certificate, when openssl is available, to exercise TLS verification.
  const dir = mkdtempSync(join(tmpdir(), 'wds-fetch-test-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    tlsServer = https.createServer(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
      (_req, res) => res.end(HTML),
    );
    tlsPort = await listen(tlsServer, '127.0.0.1');
  } catch {
    tlsServer = undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

after(async () => {
  await Promise.all(fetchers.map((f) => f.close()));
  for (const s of [main, inner, tlsServer]) {
    if (!s) continue;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

/** A request to the local test server, which needs private addresses allowed. */
function local(path: string, extra: Partial<FetchRequest> = {}): FetchRequest {
  return {
    url: `http://127.0.0.1:${mainPort}${path}`,
    timeoutMs: 5000,
    skipTlsVerification: false,
    allowPrivateNetwork: true,
    maxBodyBytes: 1024 * 1024,
    ...extra,
  };
}

/** Asserts that `p` rejects with a WdsError of the given kind/code and returns it. */
async function rejectsWith(p: Promise<unknown>, kind: string, code?: string): Promise<WdsError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof WdsError, `expected WdsError, got ${String(err)}`);
    assert.equal(err.kind, kind, err.message);
    if (code !== undefined) assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail('expected a rejection');
}

test('plain page: status, lower-cased headers, bare content type, body', async () => {
  const page = await fetchPage(local('/ok'));
  assert.equal(page.statusCode, 200);
  assert.equal(page.body.toString('utf8'), HTML);
  assert.equal(page.contentType, 'text/html');
  assert.equal(page.headers['x-mixed-case'], 'yes');
  assert.equal(page.requestedUrl, `http://127.0.0.1:${mainPort}/ok`);
  assert.equal(page.finalUrl, page.requestedUrl);
  assert.deepEqual(page.redirectChain, [page.requestedUrl]);
});

test('redirect chain of 3 hops (relative, absolute-path and absolute Locations) is recorded', async () => {
  const base = `http://127.0.0.1:${mainPort}`;
  const page = await fetchPage(local('/r/a'));
  assert.deepEqual(page.redirectChain, [`${base}/r/a`, `${base}/r/b`, `${base}/r/c`, `${base}/ok`]);
  assert.equal(page.finalUrl, `${base}/ok`);
  assert.equal(page.statusCode, 200);
  assert.equal(page.body.toString('utf8'), HTML);
  // Exactly as many redirects as allowed is fine.
  await fetchPage(local('/r/a', { maxRedirects: 3 }));
});

test('too many redirects', async () => {
  const err = await rejectsWith(fetchPage(local('/loop/0')), 'BAD_GATEWAY', ScrapeCodes.TOO_MANY_REDIRECTS);
  assert.equal(err.retryable, false);
  assert.equal((err.details as { redirectChain: string[] }).redirectChain.length, 11); // start + 10 followed
  await rejectsWith(fetchPage(local('/r/a', { maxRedirects: 2 })), 'BAD_GATEWAY', ScrapeCodes.TOO_MANY_REDIRECTS);
});

test('gzip, br, deflate (zlib and raw) and stacked encodings are decoded', async () => {
  for (const path of ['/gzip', '/br', '/deflate', '/deflate-raw', '/stacked']) {
    const page = await fetchPage(local(path));
    assert.equal(page.body.toString('utf8'), HTML, path);
  }
});

test('corrupt compressed body is a BAD_GATEWAY, not a crash', async () => {
  const err = await rejectsWith(fetchPage(local('/corrupt')), 'BAD_GATEWAY');
  assert.match(err.message, /decode/);
  assert.equal(err.retryable, false);
});

test('body cap applies to the decompressed size (gzip bomb)', async () => {
  const err = await rejectsWith(fetchPage(local('/bomb')), 'BAD_GATEWAY', ScrapeCodes.BODY_TOO_LARGE);
  assert.equal(err.retryable, false);
  assert.match(err.message, /1048576 bytes/);
});

test('body cap on plain bodies, with and without Content-Length; exact size is accepted', async () => {
  await rejectsWith(fetchPage(local('/big')), 'BAD_GATEWAY', ScrapeCodes.BODY_TOO_LARGE);
  await rejectsWith(fetchPage(local('/big-chunked')), 'BAD_GATEWAY', ScrapeCodes.BODY_TOO_LARGE);
  const page = await fetchPage(local('/exact', { maxBodyBytes: 1000 }));
  assert.equal(page.body.length, 1000);
  await rejectsWith(fetchPage(local('/exact', { maxBodyBytes: 999 })), 'BAD_GATEWAY', ScrapeCodes.BODY_TOO_LARGE);
});

test('timeout while waiting for headers', async () => {
  const started = Date.now();
  const err = await rejectsWith(fetchPage(local('/hang', { timeoutMs: 300 })), 'REQUEST_TIMEOUT', ScrapeCodes.TIMEOUT);
  const elapsed = Date.now() - started;
  assert.ok(elapsed >= 290 && elapsed < 1500, `took ${elapsed} ms`);
  assert.equal(err.message, 'Request Timeout: the page did not load within 300 ms');
});

test('timeout while reading the body', async () => {
  const started = Date.now();
  await rejectsWith(fetchPage(local('/hang-body', { timeoutMs: 300 })), 'REQUEST_TIMEOUT', ScrapeCodes.TIMEOUT);
  assert.ok(Date.now() - started < 1500);
});

test('timeout budget covers all redirect hops together', async () => {
  // Each hop takes ~150 ms: no single hop exceeds 400 ms, but the chain does.
  const started = Date.now();
  await rejectsWith(fetchPage(local('/slow-redirect?n=0', { timeoutMs: 400 })), 'REQUEST_TIMEOUT', ScrapeCodes.TIMEOUT);
  assert.ok(Date.now() - started < 1500);
});

test('caller abort signal is honoured', async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 50);
  await assert.rejects(fetchPage(local('/hang', { signal: ac.signal })), (e: Error) => e.name === 'AbortError');
  const custom = new Error('stop');
  await assert.rejects(fetchPage(local('/ok', { signal: AbortSignal.abort(custom) })), (e) => e === custom);
});

test('4xx/5xx are pages, not errors', async () => {
  const page = await fetchPage(local('/404'));
  assert.equal(page.statusCode, 404);
  assert.equal(page.body.toString('utf8'), '<h1>Not here</h1>');
  assert.equal((await fetchPage(local('/500'))).statusCode, 500);
});

test('default and custom request headers, on every hop', async () => {
  const echo = async (extra: Partial<FetchRequest>, path = '/echo') =>
    JSON.parse((await fetchPage(local(path, extra))).body.toString('utf8')) as Record<string, string>;

  const defaults = await echo({});
  assert.equal(defaults['user-agent'], DEFAULT_USER_AGENT);
  assert.equal(defaults['accept-encoding'], 'gzip, deflate, br');
  assert.equal(defaults['accept'], 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8');

  assert.equal((await echo({ userAgent: 'OptBot/1' }))['user-agent'], 'OptBot/1');

  const custom = await echo({ userAgent: 'OptBot/1', headers: { 'X-Custom': 'v1', 'USER-AGENT': 'HeaderBot/2', accept: '*/*' } });
  assert.equal(custom['x-custom'], 'v1');
  assert.equal(custom['user-agent'], 'HeaderBot/2');
  assert.equal(custom['accept'], '*/*');

  const afterRedirect = await echo({ headers: { 'X-Custom': 'v2', 'User-Agent': 'HeaderBot/3' } }, '/to-echo');
  assert.equal(afterRedirect['x-custom'], 'v2');
  assert.equal(afterRedirect['user-agent'], 'HeaderBot/3');
});

test('non-http(s) URLs are INVALID_URL, including as a redirect target', async () => {
  for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'not a url', 'javascript:alert(1)']) {
    await rejectsWith(fetchPage({ ...local('/ok'), url }), 'INVALID_URL');
  }
  await rejectsWith(fetchPage(local('/to-file')), 'INVALID_URL');
});

test('SSRF: loopback targets are refused before any byte reaches the server', async () => {
  const hitsBefore = mainHits;
  for (const host of [
    `127.0.0.1:${mainPort}`,
    `localhost:${mainPort}`, // a DNS name: refused by the connector after resolution
    `[::1]:${mainPort}`,
    `127.1:${mainPort}`,
    `0x7f000001:${mainPort}`,
    `[::ffff:127.0.0.1]:${mainPort}`,
  ]) {
    const err = await rejectsWith(
      fetchPage({ ...local('/ok'), url: `http://${host}/ok`, allowPrivateNetwork: false }),
      'URL_BLOCKED',
      ScrapeCodes.SSRF_BLOCKED,
    );
    assert.equal(err.retryable, false);
    assert.match(err.message, /^URL blocked: .* resolves to a private, loopback or reserved address \(.+\)\. Set WDS_ALLOW_PRIVATE_NETWORK=true/);
  }
  assert.equal(mainHits, hitsBefore);
});

test('SSRF: a DNS name whose records include a forbidden address is refused', async () => {
  const fetcher = createFetcher({
    resolve: async (host) =>
      host === 'mixed.test'
        ? [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.1', family: 4 }]
        : [{ address: '127.0.0.1', family: 4 }],
  });
  fetchers.push(fetcher);
  const hitsBefore = mainHits;
  for (const host of ['rebind.test', 'mixed.test']) {
    const err = await rejectsWith(
      fetcher({ ...local('/ok'), url: `http://${host}:${mainPort}/ok`, allowPrivateNetwork: false }),
      'URL_BLOCKED',
      ScrapeCodes.SSRF_BLOCKED,
    );
    assert.match(err.message, new RegExp(`^URL blocked: ${host} resolves .*\\(127\\.0\\.0\\.1\\)`));
  }
  assert.equal(mainHits, hitsBefore);
});

test('SSRF: redirects to a forbidden address are refused at the hop', async () => {
  // 127.0.0.1 plays "public", 127.0.0.2 plays "private".
  const fetcher = createFetcher({
    isForbidden: (ip) => ip === '127.0.0.2',
    resolve: async (host) => [{ address: host === 'inner.test' ? '127.0.0.2' : '127.0.0.1', family: 4 }],
  });
  fetchers.push(fetcher);
  const req = (path: string) => ({ ...local(path), allowPrivateNetwork: false });

  assert.equal((await fetcher(req('/ok'))).statusCode, 200); // the "public" server is reachable
  await rejectsWith(fetcher(req('/to-inner')), 'URL_BLOCKED', ScrapeCodes.SSRF_BLOCKED); // literal IP hop
  await rejectsWith(fetcher(req('/to-inner-name')), 'URL_BLOCKED', ScrapeCodes.SSRF_BLOCKED); // DNS hop
  assert.equal(innerHits, 0);

  // With private networks allowed the same redirect is followed.
  const page = await fetcher({ ...req('/to-inner'), allowPrivateNetwork: true });
  assert.equal(page.body.toString('utf8'), 'secret');
  assert.equal(innerHits, 1);
});

test('DNS failure for a .invalid name', async () => {
  for (const allowPrivateNetwork of [false, true]) {
    const err = await rejectsWith(
      fetchPage({ ...local('/'), url: 'http://wds-test.invalid/', allowPrivateNetwork }),
      'BAD_GATEWAY',
      ScrapeCodes.DNS_RESOLUTION_ERROR,
    );
    assert.equal(err.message, 'DNS resolution failed for wds-test.invalid');
    assert.equal(err.retryable, false);
  }
});

test('connection refused is a retryable CONNECTION_FAILED', async () => {
  const closed = http.createServer();
  const port = await listen(closed, '127.0.0.1');
  await new Promise<void>((r) => closed.close(() => r()));
  const err = await rejectsWith(
    fetchPage({ ...local('/'), url: `http://127.0.0.1:${port}/` }),
    'BAD_GATEWAY',
    ScrapeCodes.CONNECTION_FAILED,
  );
  assert.equal(err.retryable, true);
});

test('TLS: self-signed certificate fails verification unless skipTlsVerification', async (t) => {
  if (!tlsServer) return t.skip('openssl not available');
  const req = { ...local('/'), url: `https://127.0.0.1:${tlsPort}/` };
  const err = await rejectsWith(fetchPage(req), 'BAD_GATEWAY', ScrapeCodes.TLS_ERROR);
  assert.equal(err.retryable, false);
  const page = await fetchPage({ ...req, skipTlsVerification: true });
  assert.equal(page.body.toString('utf8'), HTML);
});

test('connections are reused across fetches', async () => {
  const before = mainConnections;
  for (let i = 0; i < 5; i++) await fetchPage(local('/ok'));
  assert.ok(mainConnections - before <= 1, `${mainConnections - before} connections for 5 fetches`);
});

test('connector refuses forbidden IP literals itself (defence in depth below fetchPage)', async () => {
  const connect = createConnector({ rejectUnauthorized: true, isForbidden: (ip) => ip === '127.0.0.1' });
  const err = await new Promise<Error | null>((resolve) =>
    connect({ hostname: '127.0.0.1', protocol: 'http:', port: String(mainPort) }, (...args) => resolve(args[0])),
  );
  assert.ok(err instanceof WdsError);
  assert.equal(err.code, ScrapeCodes.SSRF_BLOCKED);
});

test('credentials are not forwarded when a redirect leaves the origin', async () => {
  let seen: http.IncomingHttpHeaders | undefined;
  const other = http.createServer((req, res) => {
    seen = req.headers;
    res.end('other');
  });
  const otherPort = await listen(other, '127.0.0.3');
  const start = http.createServer((req, res) => {
    if (req.url === '/same') return void res.writeHead(302, { location: '/final' }).end();
    if (req.url === '/final') {
      seen = req.headers;
      return void res.end('same');
    }
    res.writeHead(302, { location: `http://127.0.0.3:${otherPort}/x` }).end();
  });
  const startPort = await listen(start, '127.0.0.1');
  try {
    const headers = { Authorization: 'Bearer secret', Cookie: 'sid=1', 'X-Keep': 'yes' };
    const req = (path: string): FetchRequest => ({ ...local(path), url: `http://127.0.0.1:${startPort}${path}`, headers });
    await fetchPage(req('/cross'));
    assert.equal(seen?.authorization, undefined);
    assert.equal(seen?.cookie, undefined);
    assert.equal(seen?.['x-keep'], 'yes');
    await fetchPage(req('/same'));
    assert.equal(seen?.authorization, 'Bearer secret', 'same-origin hops keep them');
    assert.equal(seen?.cookie, 'sid=1');
  } finally {
    for (const s of [other, start]) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }
});
