import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Firecrawl, { SdkError } from '@mendable/firecrawl-js';
import { call, html, namespaceFor, startFixtureSite, startStack, type FixtureSite, type Handler, type Stack } from '@wds/test-utils';
import type { AppProcess } from '@wds/launch';

// The browser engine end to end: real Chromium on a worker serving wds-browser, driven through
// the JS SDK (raw HTTP where status codes and bodies matter) against pages on 127.0.0.1.
const TTL_S = 8;
const dataDir = mkdtempSync(join(tmpdir(), 'wds-browser-e2e-'));
let stack: Stack;
let browserWorker: AppProcess;
let site: FixtureSite;
let fc: Firecrawl;

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG = [0xff, 0xd8, 0xff];
const startsWith = (b: Buffer, magic: number[]) => magic.every((m, i) => b[i] === m);

/** GET a file link without any Authorization header. */
async function getFile(url: string) {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const doc = (title: string, body: string, head = '') =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${head}</head><body>${body}</body></html>`;

// Hooks the crash test sets: the first request of /crash-once waits for them.
let onCrashPage: (() => void) | undefined;

const routes: Record<string, Handler> = {
  // Text a script writes 3 s after the page loaded: long after the automatic settle (quiet 250 ms).
  '/late': html(doc('Late', '<main><p>first text</p><p id="late">not yet</p></main><script>setTimeout(() => { document.getElementById("late").textContent = "appeared late"; }, 3000);</script>')),
  '/static': html(doc('Static', `<main><h1>Server rendered</h1><p>${'Plain server-side text for readers. '.repeat(12)}</p></main>`)),
  '/spa': html(
    doc(
      'SPA',
      `<div id="root"></div><script>
        setTimeout(() => {
          document.getElementById('root').innerHTML = '<main><h1>Rendered by script</h1><p id="lang">' + navigator.language + '|' +
            Intl.DateTimeFormat().resolvedOptions().timeZone + '</p></main>';
        }, 50);
      </script>`,
    ),
  ),
  '/form': html(
    doc(
      'Form',
      `<main><form id="f"><input id="name" name="name"><button id="go" type="submit">Go</button></form><p id="out">nobody yet</p></main>
      <script>
        document.getElementById('f').addEventListener('submit', (e) => {
          e.preventDefault();
          const out = document.getElementById('out');
          out.textContent = 'Hello, ' + document.getElementById('name').value + '!';
          out.className = 'done';
        });
      </script>`,
    ),
  ),
  '/scroll': html(
    doc(
      'Feed',
      `<main><h1>Feed</h1><ul id="feed"></ul></main><script>
        let n = 0;
        const more = () => { for (let i = 0; i < 20 && n < 100; i++) { const li = document.createElement('li'); li.textContent = 'Item ' + (++n); li.style.height = '60px'; document.getElementById('feed').appendChild(li); } };
        more();
        window.addEventListener('scroll', () => { if (window.innerHeight + window.scrollY >= document.body.scrollHeight - 200) more(); });
      </script>`,
    ),
  ),
  '/actions': html(
    doc(
      'Actions page',
      `<main><h1>Actions</h1><input id="field"><button id="btn" onclick="document.getElementById('clicked').textContent='clicked!'">Press</button>
      <p id="clicked">not clicked</p><div style="height:3000px">tall</div></main>
      <script>setTimeout(() => { const d = document.createElement('div'); d.id = 'ready'; d.textContent = 'ready'; document.body.appendChild(d); }, 100);</script>`,
    ),
  ),
  '/ua': (req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    const body = `<main><p>UA: ${req.headers['user-agent']}</p><p id="w"></p></main><script>document.getElementById('w').textContent = 'width ' + innerWidth;</script>`;
    res.end(doc('UA', body, '<meta name="viewport" content="width=device-width, initial-scale=1">'));
  },
  '/ads': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    const port = new URL(site.origin).port;
    res.end(doc('Ads', `<main><h1>Page with an ad</h1><p>${'Content text. '.repeat(30)}</p><img src="http://ads.doubleclick.net:${port}/ad-pixel.gif" alt="ad"></main>`));
  },
  '/ad-pixel.gif': (_req, res) => void res.writeHead(200, { 'content-type': 'image/gif' }).end(Buffer.from('GIF89a')),
  '/profile': (req, res) => {
    const session = /(?:^|;\s*)session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    const headers: Record<string, string> = { 'content-type': 'text/html' };
    if (!session) headers['set-cookie'] = 'session=abc123; Path=/; Max-Age=3600';
    res.writeHead(200, headers);
    res.end(
      doc(
        'Profile',
        `<main><p>${session ? `Welcome back ${session}` : 'New visitor'}</p><p id="visits"></p></main>
        <script>const v = Number(localStorage.getItem('visits') || 0) + 1; localStorage.setItem('visits', v); document.getElementById('visits').textContent = 'visits ' + v;</script>`,
      ),
    );
  },
  '/slow-profile': (_req, res) => {
    const t = setTimeout(() => html(doc('Slow', '<main><p>slow page done</p></main>'))(_req, res), 3000);
    res.on('close', () => clearTimeout(t));
  },
  '/crash-once': (req, res) => {
    if (onCrashPage) {
      const hook = onCrashPage;
      onCrashPage = undefined;
      hook();
      return; // never answered: the browser dies first
    }
    html(doc('Survivor', '<main><h1>Rendered after the crash</h1><p>second attempt</p></main>'))(req, res);
  },
};

before(async () => {
  [stack, site] = await Promise.all([
    startStack({
      namespace: namespaceFor(import.meta.url),
      env: { WDS_DATA_DIR: dataDir, WDS_FILE_SIGNING_SECRET: 'browser-e2e-signing-secret', WDS_FILE_URL_TTL_SECONDS: String(TTL_S) },
    }),
    startFixtureSite(routes),
  ]);
  // The browser worker needs the API's address for file links (npm start passes it the same way);
  // WDS_HOST_OVERRIDES reaches Chromium as --host-resolver-rules, so the "ad host" is this fixture.
  browserWorker = await stack.addWorker({
    WDS_WORKER_QUEUES: 'wds-browser',
    WDS_PUBLIC_URL: stack.url,
    WDS_HOST_OVERRIDES: 'ads.doubleclick.net=127.0.0.1',
    WDS_BROWSER_PAGES: '3',
  });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('engine choice', () => {
  test('a server-rendered page stays on the HTTP engine', async () => {
    const d = await fc.scrape(site.url('/static'), { maxAge: 0 });
    assert.equal(d.metadata!.engine, 'http');
    assert.match(d.markdown!, /Server rendered/);
  });

  test('a script-rendered page escalates to the browser; formats come from the DOM after scripts; cached as browser', async () => {
    const d = await fc.scrape(site.url('/spa'), { formats: ['markdown', 'rawHtml'] });
    assert.equal(d.metadata!.engine, 'browser');
    assert.equal(d.metadata!.statusCode, 200);
    assert.match(d.markdown!, /^# Rendered by script/m);
    assert.match(d.rawHtml!, /<h1>Rendered by script<\/h1>/);
    const hits = site.hits('/spa');
    const again = await fc.scrape(site.url('/spa'), { formats: ['markdown'] });
    assert.equal(again.metadata!.cacheState, 'hit');
    assert.equal(again.metadata!.engine, 'browser');
    assert.match(again.markdown!, /Rendered by script/);
    assert.equal(site.hits('/spa'), hits, 'no outbound request on the hit');
  });

  test('location: Accept-Language, navigator.language and timezone follow it in the browser', async () => {
    const d = await fc.scrape(site.url('/spa'), { location: { country: 'DE', languages: ['de-DE'] }, maxAge: 0 });
    assert.equal(d.metadata!.engine, 'browser');
    assert.match(String(site.lastHeaders('/spa')!['accept-language']), /^de-DE/);
    assert.match(d.markdown!, /de-DE\|Europe\/Berlin/);
  });

  test('waitFor: the browser waits before reading the DOM (text written 3 s after load is there, and not without it)', async () => {
    // mobile keeps both requests on the browser, so waitFor is the only difference.
    const without = await fc.scrape(site.url('/late'), { mobile: true, maxAge: 0 });
    assert.equal(without.metadata!.engine, 'browser');
    assert.match(without.markdown!, /not yet/);
    const waited = await fc.scrape(site.url('/late'), { mobile: true, waitFor: 4500, maxAge: 0 });
    assert.equal(waited.metadata!.engine, 'browser');
    assert.match(waited.markdown!, /appeared late/);
  });

  test('mobile: a phone UA and viewport', async () => {
    const d = await fc.scrape(site.url('/ua'), { mobile: true, maxAge: 0 });
    assert.equal(d.metadata!.engine, 'browser');
    const ua = String(site.lastHeaders('/ua')!['user-agent']);
    assert.match(ua, /Android.*Mobile/);
    assert.doesNotMatch(ua, /HeadlessChrome/);
    assert.match(d.markdown!, /width 412/);
  });
});

describe('actions', () => {
  test('click + write + press submits a form; the scrape action captures the changed page', async () => {
    const d = await fc.scrape(site.url('/form'), {
      actions: [
        { type: 'click', selector: '#name' },
        { type: 'write', text: 'Ada' },
        { type: 'press', key: 'Enter' },
        { type: 'wait', selector: '#out.done' },
        { type: 'scrape' },
      ],
    });
    const a = d.actions as { scrapes: { url: string; html: string }[] };
    assert.equal(a.scrapes.length, 1);
    assert.equal(a.scrapes[0]!.url, site.url('/form'));
    assert.match(a.scrapes[0]!.html, /Hello, Ada!/);
    assert.match(d.markdown!, /Hello, Ada!/);
    assert.equal(d.metadata!.engine, 'browser');
  });

  test('infinite scroll: scroll actions load more items', async () => {
    const count = 'return document.querySelectorAll("#feed li").length';
    const d = await fc.scrape(site.url('/scroll'), {
      actions: [
        { type: 'executeJavascript', script: count },
        { type: 'scroll', direction: 'down' },
        { type: 'wait', milliseconds: 200 },
        { type: 'scroll', direction: 'down' },
        { type: 'wait', milliseconds: 200 },
        { type: 'executeJavascript', script: count },
      ],
    });
    const r = (d.actions as { javascriptReturns: { type: string; value: number }[] }).javascriptReturns;
    assert.deepEqual(r[0], { type: 'number', value: 20 });
    assert.ok(r[1]!.value >= 40, `items after scrolling: ${r[1]!.value}`);
    assert.match(d.markdown!, /Item 40/);
  });

  test('every action type, results in action order with the documented shape; files fetchable without auth', async () => {
    const r = await call(stack, 'POST', '/v2/scrape', {
      url: site.url('/actions'),
      formats: ['markdown'],
      actions: [
        { type: 'wait', milliseconds: 50 },
        { type: 'wait', selector: '#ready' },
        { type: 'screenshot' },
        { type: 'click', selector: '#btn' },
        { type: 'click', selector: '#field' },
        { type: 'write', text: 'typed text' },
        { type: 'press', key: 'Tab' },
        { type: 'scroll', direction: 'down' },
        { type: 'scroll', direction: 'up' },
        { type: 'scrape' },
        { type: 'executeJavascript', script: 'return [document.title, document.getElementById("field").value]' },
        { type: 'executeJavascript', script: 'document.getElementById("clicked").textContent' },
        { type: 'screenshot', quality: 60, fullPage: true, viewport: { width: 800, height: 600 } },
        { type: 'pdf', format: 'A4', landscape: true },
      ],
    });
    assert.equal(r.status, 200, r.text);
    const a = r.json.data.actions;
    assert.deepEqual(Object.keys(a).sort(), ['javascriptReturns', 'pdfs', 'scrapes', 'screenshots']);
    assert.equal(a.screenshots.length, 2);
    assert.equal(a.pdfs.length, 1);
    assert.equal(a.scrapes.length, 1);
    assert.match(a.scrapes[0].html, /clicked!/);
    assert.deepEqual(a.javascriptReturns, [
      { type: 'array', value: ['Actions page', 'typed text'] },
      { type: 'string', value: 'clicked!' },
    ]);
    const [png, jpeg, pdf] = await Promise.all([getFile(a.screenshots[0]), getFile(a.screenshots[1]), getFile(a.pdfs[0])]);
    assert.equal(png.status, 200);
    assert.equal(png.type, 'image/png');
    assert.ok(startsWith(png.body, PNG), 'PNG magic');
    assert.equal(jpeg.type, 'image/jpeg');
    assert.ok(startsWith(jpeg.body, JPEG), 'JPEG magic');
    assert.equal(pdf.type, 'application/pdf');
    assert.equal(pdf.body.subarray(0, 5).toString(), '%PDF-');
  });

  test('a failing action → 400 SCRAPE_ACTION_ERROR naming its index and type', async () => {
    const r = await call(stack, 'POST', '/v2/scrape', {
      url: site.url('/actions'),
      actions: [{ type: 'wait', milliseconds: 10 }, { type: 'click', selector: '#does-not-exist' }],
    });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.success, false);
    assert.equal(r.json.code, 'SCRAPE_ACTION_ERROR');
    assert.match(r.json.error, /Action 1 \(click\)/);
  });
});

// Made by the first screenshot test, checked for expiry by the last test of the file.
let linkMadeAt = 0;
let expiring = '';

describe('screenshot format and file links', () => {

  test('screenshot (string form) is a PNG link; the object form with quality is a JPEG', async () => {
    const d = await fc.scrape(site.url('/static'), { formats: ['markdown', 'screenshot'] });
    assert.equal(d.metadata!.engine, 'browser');
    assert.match(d.markdown!, /Server rendered/);
    assert.match(d.screenshot!, new RegExp(`^${stack.url}/v2/files/scrapes/[0-9a-f-]+/screenshot\\.png\\?expires=\\d+&sig=`));
    linkMadeAt = Date.now();
    expiring = d.screenshot!;
    const png = await getFile(d.screenshot!);
    assert.equal(png.status, 200);
    assert.ok(startsWith(png.body, PNG));

    const j = await fc.scrape(site.url('/static'), { formats: [{ type: 'screenshot', fullPage: true, quality: 40 }] });
    const jpeg = await getFile(j.screenshot!);
    assert.equal(jpeg.type, 'image/jpeg');
    assert.ok(startsWith(jpeg.body, JPEG));
    assert.equal(j.markdown, undefined);
  });

  test('a screenshot request is not answered from a cached copy without one', async () => {
    await fc.scrape(site.url('/static'), {}); // cached by a plain request
    const d = await fc.scrape(site.url('/static'), { formats: ['screenshot'] });
    assert.ok(d.screenshot, 'screenshot present');
    assert.equal(d.metadata!.cacheState, 'miss');
  });

  test('tampered or unsigned links are refused with 403 and the error body', async () => {
    const u = new URL(expiring);
    const variants = [
      (() => { const x = new URL(u); x.searchParams.set('sig', x.searchParams.get('sig')!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))); return x; })(),
      (() => { const x = new URL(u); x.searchParams.set('expires', String(Number(x.searchParams.get('expires')) + 3600)); return x; })(),
      (() => { const x = new URL(u); x.pathname = x.pathname.replace('screenshot.png', 'action-screenshot-0.png'); return x; })(),
      (() => { const x = new URL(u); x.search = ''; return x; })(),
    ];
    for (const v of variants) {
      const r = await fetch(v);
      assert.equal(r.status, 403, v.toString());
      const body = (await r.json()) as { success: boolean; error: string };
      assert.equal(body.success, false);
      assert.match(body.error, /^Forbidden/);
    }
  });

});

describe('ad blocking', () => {
  test('an ad request is blocked with blockAds on (default) and let through with it off', async () => {
    const on = await fc.scrape(site.url('/ads'), { waitFor: 100, maxAge: 0 });
    assert.equal(on.metadata!.engine, 'browser');
    assert.equal(site.hits('/ad-pixel.gif'), 0, 'blocked');
    const off = await fc.scrape(site.url('/ads'), { waitFor: 100, maxAge: 0, blockAds: false });
    assert.equal(off.metadata!.engine, 'browser');
    assert.ok(site.hits('/ad-pixel.gif') >= 1, 'let through');
  });
});

describe('profiles', () => {
  test('state saved by one scrape is loaded by the next; other scrapes stay isolated', async () => {
    const first = await fc.scrape(site.url('/profile'), { profile: { name: 'shop' } });
    assert.match(first.markdown!, /New visitor/);
    assert.match(first.markdown!, /visits 1/);
    const second = await fc.scrape(site.url('/profile'), { profile: { name: 'shop', saveChanges: false } });
    assert.match(second.markdown!, /Welcome back abc123/);
    assert.match(second.markdown!, /visits 2/, 'localStorage came along');
    const third = await fc.scrape(site.url('/profile'), { profile: { name: 'shop', saveChanges: false } });
    assert.match(third.markdown!, /visits 2/, 'a read-only session saved nothing');
    const stranger = await fc.scrape(site.url('/profile'), { maxAge: 0 });
    assert.match(stranger.markdown!, /New visitor/);
    const other = await stack.newTeam();
    const otherFc = new Firecrawl({ apiKey: other.apiKey, apiUrl: stack.url });
    const otherTeam = await otherFc.scrape(site.url('/profile'), { profile: { name: 'shop', saveChanges: false } });
    assert.match(otherTeam.markdown!, /New visitor/, 'profiles are per team');
  });

  test('a second concurrent saving session gets 409; readers are never blocked', async () => {
    const profile = { name: 'busy' };
    const hitsBefore = site.hits('/slow-profile');
    const slow = call(stack, 'POST', '/v2/scrape', { url: site.url('/slow-profile'), profile });
    while (site.hits('/slow-profile') === hitsBefore) await sleep(25);
    const [saver, reader] = await Promise.all([
      call(stack, 'POST', '/v2/scrape', { url: site.url('/static'), profile }),
      call(stack, 'POST', '/v2/scrape', { url: site.url('/static'), profile: { name: 'busy', saveChanges: false } }),
    ]);
    assert.equal(saver.status, 409, saver.text);
    assert.equal(saver.json.success, false);
    assert.equal(saver.json.code, 'PROFILE_IN_USE');
    assert.match(saver.json.error, /^Conflict/);
    assert.equal(reader.status, 200, reader.text);
    assert.equal((await slow).status, 200);
    const after = await call(stack, 'POST', '/v2/scrape', { url: site.url('/static'), profile });
    assert.equal(after.status, 200, 'the lease is free again');
  });

  test('through the SDK the 409 surfaces as an SdkError', async () => {
    const hitsBefore = site.hits('/slow-profile');
    const slow = fc.scrape(site.url('/slow-profile'), { profile: { name: 'sdk-busy' } });
    while (site.hits('/slow-profile') === hitsBefore) await sleep(25);
    await assert.rejects(fc.scrape(site.url('/static'), { profile: { name: 'sdk-busy' } }), (e: unknown) => {
      assert.ok(e instanceof SdkError);
      assert.equal(e.status, 409);
      return true;
    });
    await slow;
  });
});

describe('failures', () => {
  test('Chromium killed mid-render: the scrape is retried and succeeds', async () => {
    const killed: number[] = [];
    onCrashPage = () => {
      for (const pid of childPids(browserWorker.child.pid!)) {
        if (!/chrom|headless/i.test(comm(pid))) continue;
        try {
          process.kill(pid, 'SIGKILL');
          killed.push(pid);
        } catch {
          // gone already
        }
      }
    };
    const d = await fc.scrape(site.url('/crash-once'), { mobile: true, maxAge: 0 });
    assert.ok(killed.length >= 1, 'a browser process was killed');
    assert.match(d.markdown!, /Rendered after the crash/);
    assert.equal(site.hits('/crash-once'), 2);
  });
});

describe('file link lifetime', () => {
  test(`links expire after WDS_FILE_URL_TTL_SECONDS (${TTL_S} s here): 410 with the error body`, async () => {
    const wait = linkMadeAt + (TTL_S + 1.5) * 1000 - Date.now();
    if (wait > 0) await sleep(wait);
    const r = await fetch(expiring);
    assert.equal(r.status, 410);
    const body = (await r.json()) as { success: boolean; error: string; code: string };
    assert.equal(body.success, false);
    assert.equal(body.code, 'FILE_LINK_EXPIRED');
  });
});

describe('shutdown', () => {
  test('SIGTERM: the browser worker drains, closes Chromium and exits', async () => {
    const chromium = childPids(browserWorker.child.pid!).filter((p) => /chrom|headless/i.test(comm(p)));
    assert.ok(chromium.length >= 1, 'a browser is running after the renders above');
    const exited = new Promise<number | null>((r) => browserWorker.child.once('exit', (code) => r(code)));
    const t0 = Date.now();
    browserWorker.child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.ok(Date.now() - t0 < 15_000, 'exits within the grace time');
    const alive = chromium.filter((p) => {
      try {
        process.kill(p, 0);
        return !/^Z/.test(readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1] ?? '');
      } catch {
        return false;
      }
    });
    assert.deepEqual(alive, [], 'no Chromium process left behind');
  });
});

function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Direct children of a process (Playwright starts Chromium as a child of the worker). */
function childPids(parent: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) out.push(Number(d));
    } catch {
      // exited
    }
  }
  return out;
}
