/**
 * BrowserPool against real Chromium and a local fixture server on 127.0.0.1 (and 127.0.0.2).
 *
 * "A public page whose subresources point inside" is served from this machine by giving the
 * test pool an address policy under which 127.0.0.2 counts as public: `public.test` resolves
 * to 127.0.0.2 (allowed), `private.test` to 10.1.2.3 and 127.0.0.1 stays forbidden.
 * Chromium's `--host-resolver-rules` (test pool only) maps `ads.doubleclick.net` to 127.0.0.1
 * and `public.test` to 127.0.0.2 for contexts that resolve names themselves (private network
 * allowed: no SSRF proxy in between).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WdsError } from '@wds/errors';
import { isForbiddenAddress } from '@wds/fetch';
import { BrowserPool, type RenderRequest } from './index';

let server: http.Server;
let server2: http.Server;
let tlsServers: https.Server[] = [];
let tlsPort = 0;
let port = 0;
let origin = '';
const hits = new Map<string, number>();
const seenHeaders = new Map<string, http.IncomingHttpHeaders>();
const fifoOrder: number[] = []; // server-side arrival order of /fifo requests
let wsUpgrades = 0;
const hanging = new Set<http.ServerResponse>();
const sockets = new Set<Duplex>();

const page = (body: string, head = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>Fixture</title>${head}</head><body>${body}</body></html>`;

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const p = url.pathname;
  hits.set(p, (hits.get(p) ?? 0) + 1);
  seenHeaders.set(p, req.headers);
  const send = (body: string, type = 'text/html; charset=utf-8', status = 200, extra: http.OutgoingHttpHeaders = {}) => {
    res.writeHead(status, { 'content-type': type, 'x-fixture': 'yes', ...extra });
    res.end(body);
  };
  switch (p) {
    case '/static':
      return send(page('<h1>Static page</h1><p>Nothing moves here.</p>'));
    case '/js-render':
      return send(
        page(
          '<div id="root"></div>',
          `<script>fetch('/api/data').then(r => r.json()).then(d => {
            document.getElementById('root').innerHTML = '<p id="data">' + d.message + '</p>';
          });</script>`,
        ),
      );
    case '/api/data':
      return void setTimeout(() => send(JSON.stringify({ message: 'Loaded from the API' }), 'application/json'), 300);
    case '/changes-at-600':
    case '/changes-at-900':
      // Busy until then: a request in flight keeps the settle from ending before the change.
      return send(page(`<p>first</p><script>fetch('/api/slow?ms=${p.slice(-3)}').then(() => { document.body.insertAdjacentHTML("beforeend", "<p id=changed>Changed</p>"); });</script>`));
    case '/api/slow':
      return void setTimeout(() => send('{}', 'application/json'), Number(url.searchParams.get('ms')));
    case '/late':
      return send(page('<p>early</p><script>setTimeout(() => { document.body.insertAdjacentHTML("beforeend", "<p id=late>Late content</p>"); }, 1200);</script>'));
    case '/form':
      return send(
        page(`<form id="f"><input id="name" autocomplete="off"><button id="go" type="submit">Go</button></form><p id="out">nobody</p>
          <script>document.getElementById('f').addEventListener('submit', (e) => {
            e.preventDefault();
            document.getElementById('out').textContent = 'Hello, ' + document.getElementById('name').value;
          });</script>`),
      );
    case '/scroll':
      return send(
        page(
          `<div id="list">${Array.from({ length: 10 }, (_, i) => `<div class="item" style="height:200px">Item ${i}</div>`).join('')}</div>
          <script>
            let loading = false, pageNo = 0;
            addEventListener('scroll', () => {
              if (loading || innerHeight + scrollY < document.body.scrollHeight - 1200) return;
              loading = true;
              fetch('/more?page=' + (++pageNo)).then(r => r.text()).then(h => {
                document.getElementById('list').insertAdjacentHTML('beforeend', h);
                loading = false;
              });
            });
          </script>`,
        ),
      );
    case '/more': {
      const n = Number(url.searchParams.get('page'));
      return void setTimeout(
        () => send(Array.from({ length: 10 }, (_, i) => `<div class="item" style="height:200px">Item ${n * 10 + i}</div>`).join('')),
        100,
      );
    }
    case '/actions':
      return send(
        page(`<h1 id="title">Actions page</h1>
          <div id="box" style="height:100px;overflow:auto"><div style="height:2000px">tall</div></div>
          <button class="b" onclick="this.textContent='clicked'">one</button>
          <div id="later"></div>
          <script>setTimeout(() => { document.getElementById('later').innerHTML = '<span id="appeared">here</span>'; }, 700);</script>`),
      );
    case '/headers':
      return send(page('<p>headers</p><script src="/headers-sub.js"></script>'));
    case '/headers-sub.js':
      return send('window.subLoaded = true;', 'text/javascript');
    case '/locale':
      return send(
        page(`<p id="tz"></p><p id="lang"></p><script>
          document.getElementById('tz').textContent = Intl.DateTimeFormat().resolvedOptions().timeZone;
          document.getElementById('lang').textContent = navigator.language;
        </script>`),
      );
    case '/ads':
      return send(
        page(
          `<div id="onetrust-banner-sdk">We use cookies</div><p>content</p>
           <script src="http://ads.doubleclick.net:${port}/ad.js"></script>`,
        ),
      );
    case '/ad.js':
      return send('document.body.dataset.ad = "loaded";', 'text/javascript');
    case '/public-page':
      return send(
        page(`<p id="pub">Public content</p>
          <img src="http://127.0.0.1:${port}/secret.png">
          <script src="http://private.test:${port}/secret.js"></script>
          <script>fetch('http://127.0.0.1:${port}/secret-fetch').catch(() => {});</script>`),
      );
    case '/tls-redirect-private':
      res.writeHead(302, { location: `https://127.0.0.1:${tlsPort}/secret-tls` });
      return void res.end();
    case '/redirect-private':
      res.writeHead(302, { location: `http://127.0.0.1:${port}/secret-redirect` });
      return void res.end();
    case '/ws-page':
      return send(
        page(`<p id="ws">pending</p><script>
          try {
            const ws = new WebSocket('ws://127.0.0.1:${port}/ws');
            ws.onopen = () => { document.getElementById('ws').textContent = 'open'; };
            ws.onclose = () => { document.getElementById('ws').textContent = 'closed'; };
            ws.onerror = () => { document.getElementById('ws').textContent = 'error'; };
          } catch (e) { document.getElementById('ws').textContent = 'threw'; }
        </script>`),
      );
    case '/state-set':
      return send(page(`<p>set</p><script>document.cookie = 'sess=abc123; path=/; max-age=3600'; localStorage.setItem('k', 'v42');</script>`));
    case '/state-read':
      return send(
        page(`<p id="c"></p><p id="l"></p><script>
          document.getElementById('c').textContent = 'cookie=' + document.cookie;
          document.getElementById('l').textContent = 'ls=' + localStorage.getItem('k');
        </script>`),
      );
    case '/fifo':
      fifoOrder.push(Number(url.searchParams.get('i')));
      return send(page('<p>fifo</p>'));
    case '/hang-img':
      return send(page('<h1>Main text</h1><img src="/hang">'));
    case '/dialogs':
      return send(page('<p id="d">before</p><script>alert("hi"); confirm("sure?"); document.getElementById("d").textContent = "after dialogs";</script>'));
    case '/js-redirect':
      return send(page('<p>moving</p><script>setTimeout(() => { location.href = "/static"; }, 100);</script>'));
    case '/hang':
      hanging.add(res);
      return;
    default:
      return send(page('<h1>404</h1>'), 'text/html', 404);
  }
}

const resolve = async (host: string): Promise<string[]> => {
  if (host === 'public.test') return ['127.0.0.2'];
  if (host === 'private.test') return ['10.1.2.3'];
  if (host === 'localhost') return ['127.0.0.1'];
  throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

const isForbidden = (ip: string) => ip !== '127.0.0.2' && isForbiddenAddress(ip);
const TEST_ARGS = ['--host-resolver-rules=MAP ads.doubleclick.net 127.0.0.1, MAP public.test 127.0.0.2'];
let pool: BrowserPool;

before(async () => {
  const make = () => {
    const srv = http.createServer(route);
    srv.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    srv.on('upgrade', (_req, socket: Duplex) => {
      wsUpgrades++;
      socket.destroy();
    });
    return srv;
  };
  server = make();
  server2 = make();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server2.listen(port, '127.0.0.2', r));
  origin = `http://127.0.0.1:${port}`;

  // HTTPS (self-signed) on 127.0.0.2 ("public") and 127.0.0.1, same port: exercises the proxy's
  // CONNECT tunnels. Skipped when openssl is missing.
  const dir = mkdtempSync(join(tmpdir(), 'wds-browser-test-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=public.test',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    const tls = { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
    const a = https.createServer(tls, route);
    const b = https.createServer(tls, route);
    await new Promise<void>((r) => a.listen(0, '127.0.0.2', r));
    tlsPort = (a.address() as AddressInfo).port;
    await new Promise<void>((r) => b.listen(tlsPort, '127.0.0.1', r));
    tlsServers = [a, b];
  } catch {
    tlsServers = [];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  pool = new BrowserPool({ maxConcurrentPages: 2, recycleAfterPages: 1000, launchArgs: TEST_ARGS, resolve, isForbidden });
});

after(async () => {
  await pool?.close();
  for (const r of hanging) r.destroy();
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
  await new Promise<void>((r) => server2.close(() => r()));
  for (const t of tlsServers) {
    t.closeAllConnections();
    await new Promise<void>((r) => t.close(() => r()));
  }
});

function req(path: string, extra: Partial<RenderRequest> = {}): RenderRequest {
  return {
    url: path.startsWith('http') ? path : origin + path,
    timeoutMs: 15_000,
    waitFor: 0,
    mobile: false,
    blockAds: true,
    skipTlsVerification: false,
    allowPrivateNetwork: true,
    ...extra,
  };
}

async function rejectsWith(p: Promise<unknown>, check: Partial<Pick<WdsError, 'kind' | 'code' | 'retryable'>> & { message?: RegExp }) {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof WdsError, `expected WdsError, got ${String(e)}`);
    if (check.kind) assert.equal(e.kind, check.kind);
    if (check.code) assert.equal(e.code, check.code);
    if (check.retryable !== undefined) assert.equal(e.retryable, check.retryable);
    if (check.message) assert.match(e.message, check.message);
    return true;
  });
}

const isPng = (b: Buffer) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
const isJpeg = (b: Buffer) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
const pngSize = (b: Buffer) => ({ width: b.readUInt32BE(16), height: b.readUInt32BE(20) });

test('content rendered by a script (after an API call) is in the html, with the response metadata', async () => {
  const r = await pool.render(req('/js-render'));
  assert.match(r.html, /<p id="data">Loaded from the API<\/p>/);
  assert.equal(r.statusCode, 200);
  assert.equal(r.contentType, 'text/html');
  assert.equal(r.headers['x-fixture'], 'yes');
  assert.equal(r.finalUrl, `${origin}/js-render`);
  assert.equal(r.actions, undefined);
  assert.ok(r.timings.totalMs > 0 && r.timings.settleMs >= 250, JSON.stringify(r.timings));
});

test('a status page is returned, not thrown; a static page is captured without settle delay', async () => {
  const r = await pool.render(req('/nowhere'));
  assert.equal(r.statusCode, 404);
  const s = await pool.render(req('/static'));
  assert.match(s.html, /Static page/);
  assert.ok(s.timings.settleMs < 200, `static settle took ${s.timings.settleMs} ms`);
  // The static fast path serialises the document itself: byte-identical to page.content().
  const viaContent = await pool.render(req('/static', { actions: [{ type: 'scrape' }] }));
  assert.equal(s.html, viaContent.actions!.scrapes[0]!.html);
  assert.equal(s.html, viaContent.html);
});

test('waitFor waits from navigation, and content that came during it is captured', async () => {
  const without = await pool.render(req('/late'));
  assert.doesNotMatch(without.html, /<p id="late">/);
  const withWait = await pool.render(req('/late', { waitFor: 1500 }));
  assert.match(withWait.html, /<p id="late">Late content<\/p>/);
  assert.ok(withWait.timings.waitForMs >= 1400);
});

test('the settle overlaps waitFor: a page that changes within the wait costs the wait, not wait + settle', async () => {
  // The page is busy (a request in flight) until it writes at 600 ms; settling alone would end at
  // ~850 ms (250 ms quiet). Run in sequence, settle then wait took ≥ 1,850 ms; overlapped, one
  // probe after the wait finds the page quiet for 400 ms and the render goes on.
  const r = await pool.render(req('/changes-at-600', { waitFor: 1000 }));
  assert.match(r.html, /<p id="changed">Changed<\/p>/);
  const waited = r.timings.waitForMs + r.timings.settleMs;
  assert.ok(r.timings.waitForMs >= 950, JSON.stringify(r.timings));
  assert.ok(waited < 1400, `wait + settle took ${waited} ms: ${JSON.stringify(r.timings)}`);
});

test('with waitFor, a page still changing when the wait ends is settled until quiet', async () => {
  // Busy until it writes at 900 ms: after a 1,000 ms wait it has been quiet only ~100 ms, so the
  // settle goes on until 250 ms of quiet have passed.
  const r = await pool.render(req('/changes-at-900', { waitFor: 1000 }));
  assert.match(r.html, /<p id="changed">Changed<\/p>/);
  assert.ok(r.timings.settleMs >= 100, JSON.stringify(r.timings));
});

test('click + write + press change the page, and a scrape action captures the new state', async () => {
  const r = await pool.render(
    req('/form', {
      actions: [
        { type: 'click', selector: '#name', all: false },
        { type: 'write', text: 'Ada' },
        { type: 'press', key: 'Enter' },
        { type: 'scrape' },
        { type: 'click', selector: '#name', all: false },
        { type: 'press', key: 'End' },
        { type: 'write', text: ' L' },
        { type: 'click', selector: '#go', all: false },
        { type: 'scrape' },
      ],
    }),
  );
  assert.equal(r.actions?.scrapes.length, 2);
  assert.equal(r.actions!.scrapes[0]!.url, `${origin}/form`);
  assert.match(r.actions!.scrapes[0]!.html, /<p id="out">Hello, Ada<\/p>/);
  assert.match(r.actions!.scrapes[1]!.html, /<p id="out">Hello, Ada L<\/p>/);
  assert.match(r.html, /Hello, Ada L/);
});

test('infinite scroll: a scroll action loads more items', async () => {
  const r = await pool.render(
    req('/scroll', {
      actions: [{ type: 'scrape' }, { type: 'scroll', direction: 'down' }, { type: 'scrape' }, { type: 'scroll', direction: 'down' }, { type: 'scrape' }],
    }),
  );
  const count = (h: string) => (h.match(/class="item"/g) ?? []).length;
  const [a, b, c] = r.actions!.scrapes.map((s) => count(s.html));
  assert.equal(a, 10);
  assert.ok(b! > a!, `after one scroll: ${b}`);
  assert.ok(c! > b!, `after two scrolls: ${c}`);
});

test('every action type, with result shapes in action order', async () => {
  const r = await pool.render(
    req('/actions', {
      actions: [
        { type: 'wait', milliseconds: 50 },
        { type: 'wait', selector: '#appeared' },
        { type: 'screenshot', fullPage: false },
        { type: 'screenshot', fullPage: true, quality: 60 },
        { type: 'screenshot', fullPage: false, viewport: { width: 800, height: 600 } },
        { type: 'click', selector: '.b', all: false },
        { type: 'write', text: 'x' },
        { type: 'press', key: 'Tab' },
        { type: 'scroll', direction: 'down', selector: '#box' },
        { type: 'executeJavascript', script: 'document.getElementById("box").scrollTop' },
        { type: 'scroll', direction: 'up', selector: '#box' },
        { type: 'executeJavascript', script: 'return document.querySelector(".b").textContent' },
        { type: 'scrape' },
        { type: 'pdf', format: 'A4', landscape: true, scale: 1 },
      ],
      screenshot: { fullPage: false },
    }),
  );
  const a = r.actions!;
  assert.equal(a.screenshots.length, 3);
  assert.ok(isPng(a.screenshots[0]!.bytes));
  assert.equal(a.screenshots[0]!.mime, 'image/png');
  assert.deepEqual(pngSize(a.screenshots[0]!.bytes), { width: 1920, height: 1080 });
  assert.ok(isJpeg(a.screenshots[1]!.bytes));
  assert.equal(a.screenshots[1]!.mime, 'image/jpeg');
  assert.deepEqual(pngSize(a.screenshots[2]!.bytes), { width: 800, height: 600 });
  assert.ok((a.javascriptReturns[0]!.value as number) > 0, 'element scrolled down');
  assert.equal(a.javascriptReturns[0]!.type, 'number');
  assert.deepEqual(a.javascriptReturns[1], { type: 'string', value: 'clicked' });
  assert.equal(a.scrapes.length, 1);
  assert.match(a.scrapes[0]!.html, /id="appeared"/);
  assert.equal(a.pdfs.length, 1);
  assert.equal(a.pdfs[0]!.subarray(0, 4).toString('latin1'), '%PDF');
  assert.ok(r.screenshot && isPng(r.screenshot.bytes));
  assert.deepEqual(pngSize(r.screenshot.bytes), { width: 800, height: 600 }, 'the viewport set by an action stays');
});

test('click all:true with nothing matching succeeds; all:false fails naming the index and type', async () => {
  const ok = await pool.render(req('/actions', { actions: [{ type: 'click', selector: '#nope', all: true }, { type: 'click', selector: '.b', all: true }, { type: 'scrape' }] }));
  assert.match(ok.actions!.scrapes[0]!.html, />clicked</);
  await rejectsWith(
    pool.render(req('/actions', { actions: [{ type: 'wait', milliseconds: 1 }, { type: 'click', selector: '#nope', all: false }] })),
    { kind: 'BAD_REQUEST', code: 'SCRAPE_ACTION_ERROR', message: /^Action 1 \(click\) failed: no element matches "#nope"$/ },
  );
  await rejectsWith(pool.render(req('/actions', { actions: [{ type: 'press', key: 'NoSuchKey' }] })), {
    code: 'SCRAPE_ACTION_ERROR',
    message: /^Action 0 \(press\) failed: .*NoSuchKey/,
  });
});

test('executeJavascript: return types, expressions and bodies, await, and a throwing script', async () => {
  const scripts = [
    '1 + 2',
    '"text"',
    'true',
    'null',
    'undefined',
    '[1, "a", {b: 2}]',
    '({a: 1, nested: {b: [true]}})',
    'const n = 6; return n * 7',
    'await new Promise(r => setTimeout(() => r("later"), 20))',
    'document.title',
    'document.querySelector("h1")',
    'window.__x = 1; void 0',
  ];
  const r = await pool.render(req('/actions', { actions: scripts.map((script) => ({ type: 'executeJavascript' as const, script })) }));
  assert.deepEqual(r.actions!.javascriptReturns, [
    { type: 'number', value: 3 },
    { type: 'string', value: 'text' },
    { type: 'boolean', value: true },
    { type: 'null', value: null },
    { type: 'undefined', value: null },
    { type: 'array', value: [1, 'a', { b: 2 }] },
    { type: 'object', value: { a: 1, nested: { b: [true] } } },
    { type: 'number', value: 42 },
    { type: 'string', value: 'later' },
    { type: 'string', value: 'Fixture' },
    { type: 'object', value: '<h1 id="title">Actions page</h1>' },
    { type: 'undefined', value: null },
  ]);
  await rejectsWith(
    pool.render(req('/actions', { actions: [{ type: 'scrape' }, { type: 'executeJavascript', script: 'throw new Error("boom from the page")' }] })),
    { kind: 'BAD_REQUEST', code: 'SCRAPE_ACTION_ERROR', message: /^Action 1 \(executeJavascript\) failed: .*boom from the page/ },
  );
  await rejectsWith(pool.render(req('/actions', { actions: [{ type: 'executeJavascript', script: 'this is not javascript' }] })), {
    code: 'SCRAPE_ACTION_ERROR',
    message: /^Action 0 \(executeJavascript\) failed: .*SyntaxError|Unexpected/,
  });
});

test('mobile: the server sees a mobile Chrome UA; custom headers reach subresources; User-Agent header wins', async () => {
  await pool.render(req('/headers', { mobile: true }));
  const ua = seenHeaders.get('/headers')!['user-agent']!;
  assert.match(ua, /Android.*Mobile Safari/);
  assert.doesNotMatch(ua, /HeadlessChrome/);

  await pool.render(req('/headers'));
  const desktop = seenHeaders.get('/headers')!['user-agent']!;
  assert.match(desktop, /X11; Linux x86_64.*Chrome\/\d+/);
  assert.doesNotMatch(desktop, /Mobile|HeadlessChrome/);

  await pool.render(req('/headers', { headers: { 'User-Agent': 'WDS-Test/1.0', 'X-Custom': 'abc' } }));
  for (const p of ['/headers', '/headers-sub.js']) {
    assert.equal(seenHeaders.get(p)!['user-agent'], 'WDS-Test/1.0', p);
    assert.equal(seenHeaders.get(p)!['x-custom'], 'abc', p);
  }
});

test('location: Accept-Language (languages in order), locale and timezone', async () => {
  const de = await pool.render(req('/locale', { location: { country: 'DE' } }));
  assert.equal(seenHeaders.get('/locale')!['accept-language'], 'de-DE,de;q=0.9');
  assert.match(de.html, /<p id="tz">Europe\/Berlin<\/p>/);
  assert.match(de.html, /<p id="lang">de-DE<\/p>/);

  const multi = await pool.render(req('/locale', { location: { country: 'CH', languages: ['fr-CH', 'en-US'] } }));
  assert.equal(seenHeaders.get('/locale')!['accept-language'], 'fr-CH,fr;q=0.9,en-US;q=0.8,en;q=0.7');
  assert.match(multi.html, /<p id="tz">Europe\/Zurich<\/p>/);
  assert.match(multi.html, /<p id="lang">fr-CH<\/p>/);

  await pool.render(req('/locale'));
  assert.equal(seenHeaders.get('/locale')!['accept-language'], 'en-US,en;q=0.9', 'default location is US');
});

test('blockAds: ad requests are aborted and cookie banners hidden; blockAds false lets both through', async () => {
  const display = { type: 'executeJavascript' as const, script: 'getComputedStyle(document.getElementById("onetrust-banner-sdk")).display' };
  hits.delete('/ad.js');
  const on = await pool.render(req('/ads', { blockAds: true, actions: [display] }));
  assert.equal(hits.get('/ad.js') ?? 0, 0);
  assert.equal(on.blocked.ads, 1);
  assert.doesNotMatch(on.html, /data-ad="loaded"/);
  assert.equal(on.actions!.javascriptReturns[0]!.value, 'none');
  assert.match(on.html, /We use cookies/, 'hidden, not removed');

  const off = await pool.render(req('/ads', { blockAds: false, actions: [display] }));
  assert.equal(hits.get('/ad.js'), 1);
  assert.equal(off.blocked.ads, 0);
  assert.match(off.html, /data-ad="loaded"/);
  assert.equal(off.actions!.javascriptReturns[0]!.value, 'block');
});

test('SSRF: a private target is refused before any request is made', async () => {
  hits.delete('/static');
  await rejectsWith(pool.render(req('/static', { allowPrivateNetwork: false })), { kind: 'URL_BLOCKED', code: 'SCRAPE_SSRF_BLOCKED', retryable: false });
  await rejectsWith(pool.render(req(`http://private.test:${port}/static`, { allowPrivateNetwork: false })), {
    kind: 'URL_BLOCKED',
    code: 'SCRAPE_SSRF_BLOCKED',
    message: /10\.1\.2\.3/,
  });
  assert.equal(hits.get('/static') ?? 0, 0);
  await rejectsWith(pool.render(req('file:///etc/passwd')), { kind: 'INVALID_URL' });
  await rejectsWith(pool.render(req('data:text/html,hi')), { kind: 'INVALID_URL' });
});

test('SSRF: subresources, fetch and WebSockets of a public page to private addresses are not fetched', async () => {
  for (const p of ['/secret.png', '/secret.js', '/secret-fetch']) hits.delete(p);
  const before = wsUpgrades;
  const r = await pool.render(req(`http://public.test:${port}/public-page`, { allowPrivateNetwork: false }));
  assert.match(r.html, /Public content/);
  assert.equal(hits.get('/public-page'), 1);
  for (const p of ['/secret.png', '/secret.js', '/secret-fetch']) assert.equal(hits.get(p) ?? 0, 0, p);
  assert.ok(r.blocked.ssrf >= 3, `blocked ${r.blocked.ssrf}`);

  const ws = await pool.render(req(`http://public.test:${port}/ws-page`, { allowPrivateNetwork: false }));
  assert.equal(wsUpgrades, before);
  assert.doesNotMatch(ws.html, /<p id="ws">open<\/p>/);
});

test('SSRF: a redirect of the top-level page to a private address is refused', async () => {
  hits.delete('/secret-redirect');
  await rejectsWith(pool.render(req(`http://public.test:${port}/redirect-private`, { allowPrivateNetwork: false })), {
    kind: 'URL_BLOCKED',
    code: 'SCRAPE_SSRF_BLOCKED',
    message: /127\.0\.0\.1/,
  });
  assert.equal(hits.get('/secret-redirect') ?? 0, 0);
  // The same through a later navigation (an action), and over an https-style CONNECT tunnel.
  await rejectsWith(
    pool.render(req(`http://public.test:${port}/static`, {
      allowPrivateNetwork: false,
      actions: [{ type: 'executeJavascript', script: `location.href = 'http://127.0.0.1:${port}/secret-redirect'` }, { type: 'scrape' }],
    })),
    { kind: 'URL_BLOCKED', code: 'SCRAPE_SSRF_BLOCKED' },
  );
  assert.equal(hits.get('/secret-redirect') ?? 0, 0);
  // With the private network allowed, the same redirect is followed.
  const ok = await pool.render(req(`http://public.test:${port}/redirect-private`, { allowPrivateNetwork: true }));
  assert.equal(ok.finalUrl, `${origin}/secret-redirect`);
  assert.equal(hits.get('/secret-redirect'), 1);
});

test('SSRF over HTTPS: CONNECT tunnels to public hosts work, to private hosts are refused; TLS errors are mapped', async (t) => {
  if (!tlsServers.length) return t.skip('openssl not available');
  const ok = await pool.render(req(`https://public.test:${tlsPort}/static`, { allowPrivateNetwork: false, skipTlsVerification: true }));
  assert.match(ok.html, /Static page/);
  assert.equal(ok.statusCode, 200);
  await rejectsWith(pool.render(req(`https://public.test:${tlsPort}/static`, { allowPrivateNetwork: false, skipTlsVerification: false })), {
    kind: 'BAD_GATEWAY',
    code: 'SCRAPE_TLS_ERROR',
  });
  hits.delete('/secret-tls');
  await rejectsWith(
    pool.render(req(`https://public.test:${tlsPort}/tls-redirect-private`, { allowPrivateNetwork: false, skipTlsVerification: true })),
    { kind: 'URL_BLOCKED', code: 'SCRAPE_SSRF_BLOCKED', message: /127\.0\.0\.1/ },
  );
  assert.equal(hits.get('/secret-tls') ?? 0, 0);
});

test('storageState round trip: cookies and localStorage captured, then loaded into a new render', async () => {
  const first = await pool.render(req('/state-set', { captureStorageState: true }));
  const state = first.storageState as { cookies: { name: string; value: string }[]; origins: { origin: string; localStorage: { name: string; value: string }[] }[] };
  assert.ok(state.cookies.some((c) => c.name === 'sess' && c.value === 'abc123'));
  assert.ok(state.origins.some((o) => o.localStorage.some((e) => e.name === 'k' && e.value === 'v42')));

  const fresh = await pool.render(req('/state-read'));
  assert.match(fresh.html, /cookie=<\/p>/, 'contexts are isolated');
  assert.match(fresh.html, /ls=null/);

  const second = await pool.render(req('/state-read', { storageState: state }));
  assert.match(second.html, /cookie=sess=abc123/);
  assert.match(second.html, /ls=v42/);
  assert.equal(seenHeaders.get('/state-read')!.cookie, 'sess=abc123');
});

test('timeout: a page that never answers fails with REQUEST_TIMEOUT within the budget', async () => {
  const t0 = performance.now();
  await rejectsWith(pool.render(req('/hang', { timeoutMs: 1500 })), { kind: 'REQUEST_TIMEOUT', code: 'SCRAPE_TIMEOUT', retryable: false });
  const took = performance.now() - t0;
  assert.ok(took >= 1450 && took < 4000, `took ${took} ms`);
  // An action that outlives the budget times out too (not an action error). The budget leaves
  // a loaded machine the time to set the context up, so the timeout lands in the action.
  await rejectsWith(pool.render(req('/static', { timeoutMs: 5000, actions: [{ type: 'wait', selector: '#never' }] })), {
    kind: 'REQUEST_TIMEOUT',
    message: /during action 0 \(wait\)/,
  });
  assert.equal(pool.stats().inUse, 0);
});

test('robustness: a hanging subresource, JS dialogs and a client-side redirect', async () => {
  const t0 = performance.now();
  const hung = await pool.render(req('/hang-img', { timeoutMs: 4000 }));
  assert.match(hung.html, /Main text/);
  assert.ok(performance.now() - t0 < 4000, 'returned within the budget');

  const dialogs = await pool.render(req('/dialogs'));
  assert.match(dialogs.html, /after dialogs/);

  const moved = await pool.render(req('/js-redirect'));
  assert.equal(moved.finalUrl, `${origin}/static`);
  assert.match(moved.html, /Static page/);
  assert.equal(moved.statusCode, 200);
});

test('a refused connection is an error with or without the proxy in between', async () => {
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const deadPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  for (const blockAds of [true, false]) {
    await rejectsWith(pool.render(req(`http://127.0.0.1:${deadPort}/`, { blockAds })), {
      kind: 'BAD_GATEWAY',
      code: 'SCRAPE_CONNECTION_FAILED',
      retryable: true,
    });
  }
});

test('abort signal: the render stops with the signal reason', async () => {
  const ac = new AbortController();
  const t0 = performance.now();
  const p = pool.render(req('/static', { waitFor: 10_000, signal: ac.signal }));
  setTimeout(() => ac.abort(new Error('cancelled by caller')), 300);
  await assert.rejects(p, /cancelled by caller/);
  assert.ok(performance.now() - t0 < 2000);
});

test('at most maxConcurrentPages renders run; the rest wait in FIFO order', async () => {
  let maxInUse = 0;
  let maxQueued = 0;
  const watch = setInterval(() => {
    const s = pool.stats();
    maxInUse = Math.max(maxInUse, s.inUse);
    maxQueued = Math.max(maxQueued, s.queued);
  }, 10);
  const submitted: number[] = [];
  const renders = [];
  for (let i = 0; i < 5; i++) {
    submitted.push(performance.now());
    renders.push(pool.render(req(`/fifo?i=${i}`, { waitFor: 300 })));
    await new Promise((r) => setTimeout(r, 5));
  }
  const results = await Promise.all(renders);
  clearInterval(watch);
  assert.equal(maxInUse, 2);
  assert.equal(maxQueued, 3);
  // When each render got its slot: in submission order, and the queued ones only after a wait.
  const granted = results.map((r, i) => submitted[i]! + r.timings.queueMs);
  for (let i = 1; i < granted.length; i++) assert.ok(granted[i]! >= granted[i - 1]! - 1, `slot order ${granted.join(', ')}`);
  for (const i of [2, 3, 4]) assert.ok(results[i]!.timings.queueMs > 250, `render ${i} queued ${results[i]!.timings.queueMs} ms`);
  assert.equal(fifoOrder.length >= 5, true);
});

test('a browser is recycled after recycleAfterPages renders', async () => {
  const small = new BrowserPool({ maxConcurrentPages: 1, recycleAfterPages: 2 });
  try {
    await small.render(req('/static'));
    const first = small.browserPids();
    await small.render(req('/static'));
    await small.render(req('/static'));
    const second = small.browserPids();
    assert.equal(first.length, 1);
    assert.equal(second.length, 1);
    assert.notEqual(first[0], second[0]);
    assert.equal(small.stats().pagesServed, 3);
  } finally {
    await small.close();
  }
});

test('close(): running and queued renders fail with BROWSER_POOL_CLOSED; later renders are refused', async () => {
  const closing = new BrowserPool({ maxConcurrentPages: 1, recycleAfterPages: 1000 });
  const running = closing.render(req('/static', { waitFor: 5000 }));
  const queued = closing.render(req('/static'));
  await new Promise((r) => setTimeout(r, 800));
  try {
    assert.deepEqual({ ...closing.stats(), pagesServed: 0 }, { inUse: 1, queued: 1, browsers: 1, pagesServed: 0, livePages: 0 });
  } catch (e) {
    // An open pool keeps the test process alive forever: a failed check must not hang the run.
    await Promise.allSettled([closing.close(), running, queued]);
    throw e;
  }
  const outcomes = Promise.all([
    rejectsWith(running, { kind: 'SERVICE_UNAVAILABLE', code: 'BROWSER_POOL_CLOSED' }),
    rejectsWith(queued, { kind: 'SERVICE_UNAVAILABLE', code: 'BROWSER_POOL_CLOSED' }),
  ]);
  await closing.close();
  await outcomes;
  await rejectsWith(closing.render(req('/static')), { code: 'BROWSER_POOL_CLOSED' });
  assert.equal(closing.browserPids().length, 0);
});

test('a hung browser fails only the renders on it, and the pool replaces it', async () => {
  const hung = new BrowserPool({ maxConcurrentPages: 2, recycleAfterPages: 1000, contextTimeoutMs: 1000 });
  try {
    await hung.render(req('/static'));
    const [pid] = hung.browserPids();
    const a = hung.render(req('/static', { timeoutMs: 2000, waitFor: 5000 }));
    const b = hung.render(req('/static', { timeoutMs: 20_000, waitFor: 5000 }));
    await new Promise((r) => setTimeout(r, 600));
    process.kill(pid!, 'SIGSTOP');
    await rejectsWith(a, { kind: 'REQUEST_TIMEOUT' });
    await rejectsWith(b, { kind: 'BAD_GATEWAY', code: 'BROWSER_CRASHED', retryable: true });
    const c = await hung.render(req('/static'));
    assert.match(c.html, /Static page/);
    assert.notEqual(hung.browserPids()[0], pid);
  } finally {
    await hung.close();
  }
});

test('killing Chromium mid-render fails that render with BROWSER_CRASHED; the next render succeeds', async () => {
  await pool.render(req('/static'));
  const [pid] = pool.browserPids();
  assert.ok(pid, 'pool knows its browser pid');
  const p = pool.render(req('/static', { waitFor: 5000 }));
  await new Promise((r) => setTimeout(r, 700));
  process.kill(pid!, 'SIGKILL');
  await rejectsWith(p, { kind: 'BAD_GATEWAY', code: 'BROWSER_CRASHED', retryable: true });
  const next = await pool.render(req('/static'));
  assert.match(next.html, /Static page/);
  assert.notEqual(pool.browserPids()[0], pid);
  assert.equal(pool.stats().browsers, 1);
});
