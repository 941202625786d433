/**
 * Interact against real Chromium: pages kept after their render, code run in the page's sandbox
 * through the bridge, the session store. Fixtures on 127.0.0.2 ("public" under the test pool's
 * address policy) and 127.0.0.1 (forbidden: the private address the code must not reach), as in
 * pool.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WdsError } from '@wds/errors';
import { isForbiddenAddress } from '@wds/fetch';
import { EGRESS_KINDS, egressProbe, startEgressListeners, turnTcpProbe } from '@wds/test-utils/egress-probe';
import { peakRss, resetPeakRss } from '@wds/test-utils/rss';
import { BrowserPool, KILLED_EXIT_CODE, runInteraction, SessionStore, snapshotPage, type LivePage, type RenderRequest } from './index';

let server: http.Server;
let privateServer: http.Server;
let pool: BrowserPool;
let origin = '';
let privateOrigin = '';
const secretHits = { n: 0 };

const doc = (body: string) => `<!doctype html><html><head><meta charset="utf-8"><title>Interact</title></head><body>${body}</body></html>`;

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const p = new URL(req.url ?? '/', 'http://x').pathname;
  const send = (body: string, headers: http.OutgoingHttpHeaders = {}) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers });
    res.end(body);
  };
  if (p === '/secret') {
    secretHits.n++;
    return send('top secret');
  }
  if (p === '/tabs') {
    return send(
      doc(`<button id="show">Show price</button><ul><li>one</li><li>two</li></ul><input id="q">
      <script>document.getElementById('show').addEventListener('click', () => {
        const p = document.createElement('p'); p.id = 'price'; p.textContent = '$49 / month'; document.body.appendChild(p);
      });</script>`),
      // Strict CSP: page.evaluate and $eval still work (CDP evaluation), as for executeJavascript.
      { 'content-security-policy': "script-src 'self' 'unsafe-inline'" },
    );
  }
  if (p === '/other') return send(doc('<h1>Other page</h1>'));
  // 5 MB of HTML, 30,000 px tall: over every limit of what one page call may return.
  if (p === '/big') return send(doc(`<div style="height:30000px"><p id="big">${'x'.repeat(5_000_000)}</p></div>`));
  send(doc('<p>fixture</p>'));
}

// 127.0.0.2 is public for this pool; 127.0.0.1 stays forbidden (it is loopback).
const isForbidden = (ip: string) => ip !== '127.0.0.2' && isForbiddenAddress(ip);

const base = (url: string): RenderRequest => ({
  url, timeoutMs: 20_000, waitFor: 0, mobile: false, blockAds: false, skipTlsVerification: false, allowPrivateNetwork: false, keepPage: true,
});

async function live(path = '/tabs'): Promise<LivePage> {
  const r = await pool.render(base(`${origin}${path}`));
  assert.ok(r.page, 'keepPage returns the page');
  return r.page;
}

const run = (page: LivePage, code: string, timeoutMs = 10_000) => runInteraction(page, { code, timeoutMs });


before(async () => {
  server = http.createServer(route);
  privateServer = http.createServer(route);
  await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
  await new Promise<void>((r) => privateServer.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.2:${(server.address() as AddressInfo).port}`;
  privateOrigin = `http://127.0.0.1:${(privateServer.address() as AddressInfo).port}`;
  pool = new BrowserPool({ maxConcurrentPages: 2, recycleAfterPages: 1000, isForbidden });
}, { timeout: 120_000 });
after(async () => {
  await pool?.close();
  for (const s of [server, privateServer]) {
    s?.closeAllConnections();
    s?.close();
  }
}, { timeout: 60_000 });

describe('code on a live page', () => {
  test('click, then read a value that exists only after the click; the last expression is the result; console is captured', { timeout: 60_000 }, async () => {
    const p = await live();
    assert.equal(pool.stats().livePages, 1);
    assert.equal(pool.stats().inUse, 0, 'a kept page holds no render slot');
    const before = await run(p, `await page.locator('#price').count()`);
    assert.equal(before.result, '0');
    const r = await run(p, `console.log('clicking', {n: 1}); await page.click('#show'); console.error('done'); await page.textContent('#price')`);
    assert.equal(r.exitCode, 0, r.error);
    assert.equal(r.result, '$49 / month');
    assert.equal(r.stdout, 'clicking {"n":1}\n');
    assert.equal(r.stderr, 'done\n');
    assert.equal(r.killed, false);
    // The session's state stays between calls; objects come back as JSON.
    const again = await run(p, `const t = await page.locator('#price').innerText(); ({ t, url: page.url() })`);
    assert.deepEqual(JSON.parse(again.result!), { t: '$49 / month', url: `${origin}/tabs` });
    await p.close();
    assert.equal(pool.stats().livePages, 0);
  });

  test('locators, evaluate with arguments, $eval, keyboard, navigation, screenshots', { timeout: 60_000 }, async () => {
    const p = await live();
    const r = await run(
      p,
      `const items = await page.locator('li').allTextContents();
       const second = await page.locator('li').nth(1).textContent();
       const viaEval = await page.$eval('ul', (el, sep) => [...el.children].map((c) => c.textContent).join(sep), '+');
       const sum = await page.evaluate(([a, b]) => a + b, [2, 3]);
       const byRole = await page.getByRole('button', { name: /show/i }).count();
       await page.locator('#q').click();
       await page.keyboard.type('typed');
       const typed = await page.inputValue('#q');
       const shot = await page.screenshot();
       await page.goto(${JSON.stringify(`${origin}/other`)});
       ({ items, second, viaEval, sum, byRole, typed, png: shot.toString('base64').startsWith('iVBOR'), title: await page.textContent('h1'), url: page.url() })`,
    );
    assert.equal(r.exitCode, 0, r.error);
    assert.deepEqual(JSON.parse(r.result!), {
      items: ['one', 'two'], second: 'two', viaEval: 'one+two', sum: 5, byRole: 1, typed: 'typed', png: true, title: 'Other page', url: `${origin}/other`,
    });
    await p.close();
  });

  test('an exception is the answer (exitCode 1), not a failure; unknown methods and file options are refused', { timeout: 60_000 }, async () => {
    const p = await live();
    const thrown = await run(p, `throw new Error('boom')`);
    assert.equal(thrown.exitCode, 1);
    assert.match(thrown.error!, /Error: boom/);
    const path = await run(p, `await page.screenshot({ path: '/tmp/wds-interact-escape.png' })`);
    assert.match(path.error!, /option "path" is not available/);
    const ctx = await run(p, `typeof page.context + '/' + typeof page.route + '/' + typeof page.request`);
    assert.equal(ctx.result, 'undefined/undefined/undefined');
    const file = await run(p, `await page.goto('file:///etc/passwd')`);
    assert.match(file.error!, /page\.goto: .*unsupported scheme file:/);
    await p.close();
  });

  test('the code runs in Chromium, not in the worker: no process, require or file access, and no network of its own', { timeout: 60_000 }, async () => {
    const p = await live();
    const r = await run(p, `[typeof process, typeof require, typeof module, typeof Buffer].join(',')`);
    assert.equal(r.result, 'undefined,undefined,undefined,undefined');
    const net = await run(p, `try { await fetch(${JSON.stringify(`${origin}/secret`)}); 'reached' } catch (e) { 'refused' }`);
    assert.equal(net.result, 'refused');
    assert.equal(secretHits.n, 0);
    await p.close();
  });

  test('SSRF: the page reaches no private address from user code (navigation or fetch), through the session proxy', { timeout: 60_000 }, async () => {
    const p = await live();
    const nav = await run(p, `await page.goto(${JSON.stringify(`${privateOrigin}/secret`)})`);
    assert.equal(nav.exitCode, 1);
    assert.match(nav.error!, /URL blocked/);
    const fetched = await run(
      p,
      `await page.goBack(); await page.evaluate((u) => fetch(u).then((r) => 'status ' + r.status, (e) => 'failed'), ${JSON.stringify(`${privateOrigin}/secret`)})`,
    );
    assert.equal(fetched.exitCode, 0, fetched.error);
    assert.notEqual(fetched.result, 'status 200');
    assert.equal(secretHits.n, 0, 'the private server was never reached');
    await p.close();
  });

  test('the code sandbox opens no socket of any kind (WebRTC TURN over TCP and TLS included); the session page\'s go through its SSRF proxy', { timeout: 90_000 }, async () => {
    const l = await startEgressListeners();
    try {
      // Control: a page without a proxy (private networks allowed, no ad blocking) does connect, TURN/TCP included.
      const open = await pool.render({ ...base(`${origin}/`), allowPrivateNetwork: true, keepPage: true });
      await open.page!.page.evaluate(turnTcpProbe(l.tcpPort));
      assert.ok(l.accepts() > 0, 'the listener hears a page that is not held back');
      await open.page!.close();
      const heard = l.accepts();

      const p = await live();
      try {
        const inSandbox = await run(p, `await ${egressProbe(l)}`, 30_000);
        assert.equal(inSandbox.exitCode, 0, inSandbox.error);
        assert.deepEqual(JSON.parse(inSandbox.result!), [...EGRESS_KINDS], 'every kind was tried');
        const onPage = await run(p, `await page.evaluate(${JSON.stringify(turnTcpProbe(l.tcpPort))}); 'done'`, 30_000);
        assert.equal(onPage.exitCode, 0, onPage.error);
        assert.equal(l.accepts() - heard, 0, 'no TCP connection reached 127.0.0.1');
        assert.equal(l.datagrams(), 0, 'no UDP datagram reached 127.0.0.1');
      } finally {
        await p.close();
      }
    } finally {
      await l.close();
    }
  });

  test('page values are bounded in the page: a call whose value is too large is refused before it crosses, and the answer says so', { timeout: 120_000 }, async () => {
    const p = await live('/big');
    try {
      resetPeakRss();
      const before = peakRss();
      const refused: Record<string, string> = {
        evaluate: `await page.evaluate(() => 'A'.repeat(1e8))`,
        content: `await page.content()`,
        innerHTML: `await page.innerHTML('body')`,
        textContent: `await page.locator('#big').textContent()`,
        allTextContents: `await page.locator('p').allTextContents()`,
        $eval: `await page.$eval('body', (b) => b.innerHTML)`,
        waitForFunction: `await page.waitForFunction(() => 'W'.repeat(5e6))`,
        title: `await page.evaluate(() => { document.title = 'T'.repeat(5e6); }); await page.title()`,
        fullPage: `await page.screenshot({ fullPage: true })`,
      };
      for (const [name, code] of Object.entries(refused)) {
        const r = await run(p, code, 30_000);
        assert.equal(r.exitCode, 1, `${name}: ${r.result?.slice(0, 100)}`);
        assert.match(r.error!, /refused: /, name);
        assert.match(r.stderr, /^\[wds\] .*refused: /m, `${name}: stderr says so`);
      }
      const thrown = await run(p, `await page.evaluate(() => { throw new Error('E'.repeat(1e8)); })`);
      assert.match(thrown.error!, /an error whose message is 100000007 characters long/);
      // The code's own result and exception are cut in the sandbox.
      const result = await run(p, `'A'.repeat(1e8)`);
      assert.equal(result.exitCode, 0);
      assert.equal(result.result!.length, 1 << 20);
      assert.equal(result.truncated, true);
      const own = await run(p, `throw new Error('B'.repeat(1e8))`);
      assert.equal(own.exitCode, 1);
      assert.ok(own.error!.length <= 10_000 && own.error!.startsWith('Error: BBB'));
      // Caught by the code, the refusal still shows in stderr; what fits comes back whole.
      const caught = await run(p, `let n; try { await page.content(); } catch (e) { n = (await page.evaluate(() => document.documentElement.outerHTML.slice(0, 100000))).length; } n`);
      assert.equal(caught.result, '100000');
      assert.match(caught.stderr, /\[wds\] page\.content: refused/);
      const shot = await run(p, `(await page.screenshot()).length`);
      assert.ok(Number(shot.result) > 1000, shot.error);
      const grew = peakRss() - before;
      assert.ok(grew < 150 * 2 ** 20, `the worker's peak RSS grew by ${Math.round(grew / 2 ** 20)} MiB`);
    } finally {
      await p.close();
    }
  });

  test('timeout: a busy loop or a promise that never settles is killed; the next call runs in a fresh sandbox', { timeout: 60_000 }, async () => {
    const p = await live();
    const loop = await run(p, `console.log('before'); while (true) {}`, 1_500);
    assert.equal(loop.killed, true);
    assert.equal(loop.exitCode, KILLED_EXIT_CODE);
    const pending = await run(p, `await new Promise(() => {})`, 1_000);
    assert.equal(pending.killed, true);
    const late = await run(p, `setTimeout(() => page.click('#show'), 1500); 'scheduled'`, 5_000);
    assert.equal(late.result, 'scheduled');
    const next = await run(p, `await page.title()`);
    assert.equal(next.result, 'Interact');
    await p.close();
  });

  test('a crashed page fails the call with the page\'s reason', { timeout: 60_000 }, async () => {
    const p = await live();
    const crashing = runInteraction(p, { code: `await page.waitForTimeout(3000); 'survived'`, timeoutMs: 10_000 });
    await new Promise((res) => setTimeout(res, 300));
    const cdp = await p.context.newCDPSession(p.page);
    void cdp.send('Page.crash').catch(() => {});
    const err = await crashing.then(() => null, (e) => e);
    assert.ok(err instanceof WdsError, String(err));
    assert.equal(err.kind, 'BAD_GATEWAY');
    assert.ok(p.gone);
  });

  test('snapshot for prompts and storage state for profiles', { timeout: 60_000 }, async () => {
    const p = await live();
    const s = await snapshotPage(p);
    assert.equal(s.title, 'Interact');
    assert.ok(s.elements.some((e) => e.selector === '#show' && e.text === 'Show price'), JSON.stringify(s.elements));
    await run(p, `await page.evaluate(() => { document.cookie = 'k=v; path=/'; localStorage.setItem('a', '1'); })`);
    const state = (await p.storageState()) as { cookies: { name: string }[]; origins: { localStorage: { name: string }[] }[] };
    assert.ok(state.cookies.some((c) => c.name === 'k'));
    assert.ok(state.origins.some((o) => o.localStorage.some((l) => l.name === 'a')));
    await p.close();
  });
});

describe('session store', () => {
  test('one team holds at most its share of a worker\'s live sessions (429), others still get theirs; a session past its life is closed', { timeout: 60_000 }, async () => {
    let now = 1_000;
    const ended: string[] = [];
    const store = new SessionStore<{ teamId: string }>({
      maxParked: 0, maxLive: 3, maxLivePerTeam: 2, teamOf: (m) => m.teamId, idleMs: 60_000, liveGraceMs: 5_000,
      onEnd: (s, why) => void ended.push(`${s.key}:${why}`), now: () => now,
    });
    const [a, b, c, d] = await Promise.all([live('/'), live('/'), live('/'), live('/')]);
    store.open('a', a, { teamId: 'greedy' }, now + 10_000);
    store.open('b', b, { teamId: 'greedy' });
    const refused = (() => {
      try {
        store.open('c', c, { teamId: 'greedy' });
      } catch (e) {
        return e;
      }
    })();
    assert.ok(refused instanceof WdsError && refused.kind === 'CONCURRENCY_LIMITED', String(refused));
    assert.match(refused.message, /already holds 2 .*WDS_INTERACT_SESSIONS_PER_TEAM = 2/);
    assert.equal(store.hasRoom({ teamId: 'greedy' }), false);
    assert.equal(store.hasRoom({ teamId: 'other' }), true, 'another team still has room');
    store.open('d', d, { teamId: 'other' });
    assert.deepEqual(store.stats(), { parked: 0, live: 3 });
    now += 10_000 + 4_999;
    store.sweep();
    assert.deepEqual(ended, [], 'the workflow gets the grace to close it itself');
    now += 1;
    store.sweep();
    assert.deepEqual(ended, ['a:expired']);
    await store.close();
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(pool.stats().livePages, 0);
  });

  test('parked pages: least recently used evicted first, idle ones closed; live sessions are never evicted', { timeout: 60_000 }, async () => {
    let now = 1_000;
    const ended: string[] = [];
    const store = new SessionStore<null>({ maxParked: 2, maxLive: 1, idleMs: 10_000, liveGraceMs: 5_000, onEnd: (s, why) => void ended.push(`${s.key}:${why}`), now: () => now });
    const [a, b, c] = await Promise.all([live('/'), live('/'), live('/')]);
    store.park('a', a, null);
    now += 1;
    store.park('b', b, null);
    now += 1;
    assert.ok(store.adopt('a', null), 'a becomes a session');
    store.park('c', c, null);
    assert.deepEqual(store.stats(), { parked: 2, live: 1 });
    const d = await live('/');
    store.park('d', d, null);
    assert.deepEqual(ended, ['b:evicted'], 'the oldest parked page went, never the session');
    assert.throws(() => store.adopt('c', null), /interact sessions/);
    now += 10_000;
    store.sweep();
    assert.deepEqual(ended.sort(), ['b:evicted', 'c:idle', 'd:idle']);
    assert.ok(store.get('a'), 'a session gets its grace beyond the idle timeout');
    now += 5_000;
    store.sweep();
    assert.ok(ended.includes('a:idle'));
    await store.close();
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(pool.stats().livePages, 0);
  });
});
