import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import type { AppProcess } from '@wds/launch';
import {
  call,
  namespaceFor,
  promptText,
  startFakeOpenAI,
  startFixtureSite,
  startStack,
  until,
  type FakeChatRequest,
  type FakeOpenAI,
  type FakeReply,
  type FixtureSite,
  type Handler,
  type Stack,
} from '@wds/test-utils';

// Interact end to end: sessions on a real browser worker (its own task queue), code run in the
// page's sandbox, prompts through the fake OpenAI server, profiles, idle timeout, a killed worker.
let stack: Stack;
let site: FixtureSite;
let model: FakeOpenAI;
let browserWorker: AppProcess;
let fc: Firecrawl;
/** An API whose sessions idle out after 3 s (the idle timeout is the API's setting, per session). */
let shortIdle: { url: string; apiKey: string };

const doc = (title: string, body: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

const routes: Record<string, Handler> = {
  // Rendered by script (the scrape escalates to the browser); the price exists only after the click.
  '/app': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      doc(
        'Pricing',
        `<div id="root"></div><script>
          document.getElementById('root').innerHTML = '<main><h1>Plans</h1><button id="show">Show price</button></main>';
          document.getElementById('show').addEventListener('click', () => {
            const p = document.createElement('p'); p.id = 'price'; p.textContent = '$49 / month'; document.querySelector('main').appendChild(p);
          });
        </script>`,
      ),
    );
  },
  '/static': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(doc('Static page', `<main><h1>Server rendered</h1><p>${'Plain text for readers. '.repeat(20)}</p></main>`));
  },
  // Says whether the browser sent the cookie a session saved into its profile.
  '/account': (req, res) => {
    const saved = /(?:^|;\s*)saved=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(doc('Account', `<main><h1>Account</h1><p>${saved ? `Welcome back ${saved}` : 'Signed out'}</p></main>`));
  },
  '/secret': (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('secret'),
};

/** The model's replies to interact prompts, in order; other requests get the fake's default. */
const codeReplies: string[] = [];
function reply(r: FakeChatRequest): FakeReply | undefined {
  if (!promptText(r).includes('You write Playwright code')) return undefined;
  const code = codeReplies.shift();
  return code === undefined ? { error: { status: 500, message: 'no scripted reply' } } : { content: { code } };
}
const interactRequests = () => model.chatRequests().filter((r) => promptText(r).includes('You write Playwright code'));

/** A scrape rendered by the browser, once its worker has parked the page (the answer can come a moment before). */
const browserScrape = async (path: string, extra: Record<string, unknown> = {}) => {
  // `mobile` keeps the page on the browser whatever it looks like.
  const d = await fc.scrape(site.url(path), { formats: ['markdown'], mobile: true, maxAge: 0, ...extra });
  assert.equal(d.metadata!.engine, 'browser');
  const id = d.metadata!.scrapeId as string;
  await until(async () => (await sessionRow(id))?.state === 'parked', 'the worker keeps the rendered page');
  return id;
};
const sessionRow = async (scrapeId: string) =>
  (await stack.db.pool.query('SELECT state, end_reason, queue, slot_id FROM interact_sessions WHERE scrape_id = $1', [scrapeId])).rows[0] as
    | { state: string; end_reason: string | null; queue: string; slot_id: string | null }
    | undefined;
const metric = async (w: AppProcess, line: RegExp) => {
  const text = await (await fetch(w.metricsUrl!)).text();
  return Number(line.exec(text)?.[1] ?? NaN);
};
const addBrowserWorker = () =>
  stack.addWorker({ WDS_WORKER_QUEUES: 'wds-browser', WDS_BROWSER_PAGES: '2', WDS_HOST_OVERRIDES: 'ads.doubleclick.net=127.0.0.1' });

before(async () => {
  model = await startFakeOpenAI({ handler: reply });
  site = await startFixtureSite(routes);
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: { ...model.env, WDS_INTERACT_IDLE_SECONDS: '120' },
  });
  [browserWorker] = await Promise.all([addBrowserWorker(), stack.addApi({ WDS_INTERACT_IDLE_SECONDS: '3' }).then((a) => (shortIdle = { url: a.url!, apiKey: stack.apiKey }))]);
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
}, { timeout: 180_000 });
after(async () => {
  await stack?.stop();
  await site?.close();
  await model?.close();
}, { timeout: 60_000 });

describe('code', () => {
  test('click, then read a value that exists only after the click: continues from the scraped page, state kept between calls', { timeout: 90_000 }, async () => {
    const id = await browserScrape('/app');
    const hits = site.hits('/app');
    const r = await fc.interact(id, { code: `console.log('clicking'); await page.click('#show'); await page.textContent('#price')` });
    assert.equal(r.success, true, JSON.stringify(r));
    assert.equal(r.result, '$49 / month');
    assert.equal(r.stdout, 'clicking\n');
    assert.equal(r.exitCode, 0);
    assert.equal(site.hits('/app'), hits, 'the parked page was used: no replay');
    const row = await sessionRow(id);
    assert.equal(row?.state, 'live');
    assert.match(row!.queue, /^wds-browser-\d+-[0-9a-f]{8}$/, 'the row names the worker\'s own queue');
    assert.equal(await metric(browserWorker, /wds_browser_sessions\{state="live"\} (\d+)/), 1);
    const again = await fc.interact(id, { code: `({ prices: await page.locator('#price').count(), url: page.url() })` });
    assert.deepEqual(JSON.parse(again.result!), { prices: 1, url: site.url('/app') });

    const stopped = await fc.stopInteraction(id);
    assert.equal(stopped.success, true);
    assert.ok((stopped as { creditsBilled?: number }).creditsBilled! >= 2, 'a browser minute at least');
    assert.equal((await sessionRow(id))?.state, 'ended');
    assert.equal(await metric(browserWorker, /wds_browser_sessions\{state="live"\} (\d+)/), 0);
    const twice = await call(stack, 'DELETE', `/v2/scrape/${id}/interact`);
    assert.equal(twice.status, 410, twice.text);
  });

  test('a scrape rendered over HTTP is replayed in a browser on the first call', { timeout: 90_000 }, async () => {
    const d = await fc.scrape(site.url('/static'), { formats: ['markdown'], maxAge: 0 });
    assert.equal(d.metadata!.engine, 'http');
    const hits = site.hits('/static');
    const r = await fc.interact(d.metadata!.scrapeId!, { code: 'await page.title()' });
    assert.equal(r.result, 'Static page');
    assert.equal(site.hits('/static'), hits + 1, 'one replay');
    await fc.stopInteraction(d.metadata!.scrapeId!);
  });

  test('the code\'s exception and its timeout are answers (200, success false), not failures', { timeout: 90_000 }, async () => {
    const id = await browserScrape('/app');
    const thrown = await fc.interact(id, { code: `throw new Error('nope')` });
    assert.equal(thrown.success, false);
    assert.equal(thrown.exitCode, 1);
    assert.match(thrown.error!, /nope/);
    const loop = await fc.interact(id, { code: 'while (true) {}', timeout: 2 });
    assert.equal(loop.killed, true);
    assert.equal(loop.exitCode, 124);
    const after = await fc.interact(id, { code: 'await page.title()' });
    assert.equal(after.result, 'Pricing', 'the session survives its code');
    await fc.stopInteraction(id);
  });

  test('a busy session answers 409 to a second call', { timeout: 90_000 }, async () => {
    const id = await browserScrape('/app');
    const slow = fc.interact(id, { code: `await page.waitForTimeout(4000); 'done'` });
    await new Promise((r) => setTimeout(r, 1_000));
    const second = await call(stack, 'POST', `/v2/scrape/${id}/interact`, { code: '1 + 1' });
    assert.equal(second.status, 409, second.text);
    assert.equal(second.json.code, 'SESSION_BUSY');
    assert.equal((await slow).result, 'done');
    await fc.stopInteraction(id);
  });

  test('SSRF: requests of user code go through the session\'s request policy (an ad host is refused even with private networks allowed)', { timeout: 90_000 }, async () => {
    const id = await browserScrape('/app');
    const port = new URL(site.origin).port;
    const r = await fc.interact(id, {
      code: `await page.evaluate((u) => fetch(u).then((x) => 'status ' + x.status, () => 'failed'), 'http://ads.doubleclick.net:${port}/secret')`,
    });
    assert.ok(r.result === 'failed' || r.result === 'status 403', r.result!);
    assert.equal(site.hits('/secret'), 0, 'the host was never reached');
    const own = await fc.interact(id, { code: `[typeof process, typeof require].join()` });
    assert.equal(own.result, 'undefined,undefined', 'no Node in the code\'s sandbox');
    await fc.stopInteraction(id);
  });
});

describe('prompt', () => {
  test('the model writes the code, which runs; the answer carries it, and it replays as code without a model', { timeout: 90_000 }, async () => {
    const id = await browserScrape('/app');
    const code = `await page.click('#show');\nawait page.textContent('#price')`;
    codeReplies.push(code);
    const before = interactRequests().length;
    const r = (await fc.interact(id, { prompt: 'What does the plan cost once the price is shown?' })) as { output?: string; code?: string; success: boolean };
    assert.equal(r.success, true, JSON.stringify(r));
    assert.equal(r.output, '$49 / month');
    assert.equal(r.code, code);
    const asked = interactRequests().slice(before);
    assert.equal(asked.length, 1);
    assert.match(promptText(asked[0]!), /#show/, 'the model saw the page\'s elements');
    const replayed = await fc.interact(id, { code: r.code! });
    assert.equal(replayed.result, '$49 / month');
    await fc.stopInteraction(id);
  });

  test('code that fails gets one repair turn with its error', { timeout: 90_000 }, async () => {
    const id = await browserScrape('/app');
    codeReplies.push(`await page.click('#missing', { timeout: 500 })`, `await page.title()`);
    const before = interactRequests().length;
    const r = (await fc.interact(id, { prompt: 'Tell me the page title' })) as { output?: string; code?: string };
    assert.equal(r.output, 'Pricing');
    assert.equal(r.code, 'await page.title()');
    const asked = interactRequests().slice(before);
    assert.equal(asked.length, 2);
    assert.match(promptText(asked[1]!), /#missing[\s\S]*Timeout/, 'the repair turn saw the failed code and its error');
    await fc.stopInteraction(id);
  });

  test('without an LLM configured: 400 FEATURE_NOT_AVAILABLE naming the variable', { timeout: 90_000 }, async () => {
    const noLlm = await stack.addApi({ OPENAI_BASE_URL: '', OPENAI_API_KEY: '', MODEL_NAME: '' });
    const id = (await fc.scrape(site.url('/static'), { formats: ['markdown'] })).metadata!.scrapeId!;
    const r = await call({ url: noLlm.url!, apiKey: stack.apiKey }, 'POST', `/v2/scrape/${id}/interact`, { prompt: 'click it' });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.code, 'FEATURE_NOT_AVAILABLE');
    assert.match(r.json.error, /OPENAI_API_KEY/);
  });
});

describe('sessions', () => {
  test('stop with saveChanges saves the browser state; a new scrape with the profile sends the saved cookie', { timeout: 90_000 }, async () => {
    const id = await browserScrape('/account', { profile: { name: 'shop', saveChanges: true } });
    await fc.interact(id, { code: `await page.evaluate(() => { document.cookie = 'saved=yes; path=/; max-age=3600'; }); 'set'` });
    // One saving session per profile: a second saver waits for none, it is refused.
    const rival = await call(stack, 'POST', '/v2/scrape', { url: site.url('/account'), profile: { name: 'shop', saveChanges: true } });
    assert.equal(rival.status, 409, rival.text);
    assert.equal(rival.json.code, 'PROFILE_IN_USE');
    const stopped = (await fc.stopInteraction(id)) as { profileSaved?: boolean };
    assert.equal(stopped.profileSaved, true);
    const next = await fc.scrape(site.url('/account'), { formats: ['markdown'], profile: { name: 'shop', saveChanges: false } });
    assert.match(next.markdown!, /Welcome back yes/);
  });

  test('idle timeout ends the session; DELETE then says so, and the next call replays', { timeout: 90_000 }, async () => {
    const id = await browserScrape('/app');
    const r = await call(shortIdle, 'POST', `/v2/scrape/${id}/interact`, { code: `await page.click('#show'); 'ok'` });
    assert.equal(r.status, 200, r.text);
    await until(async () => (await sessionRow(id))?.end_reason === 'idle', 'the session idles out', { timeoutMs: 20_000 });
    const gone = await call(shortIdle, 'DELETE', `/v2/scrape/${id}/interact`);
    assert.equal(gone.status, 410, gone.text);
    const hits = site.hits('/app');
    const again = await call(shortIdle, 'POST', `/v2/scrape/${id}/interact`, { code: `await page.locator('#price').count()` });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json.result, '0', 'a fresh page: the click of the ended session is gone');
    assert.equal(site.hits('/app'), hits + 1);
  });

  test('errors: another team\'s scrape is 404, zero data retention 403, bad input 400', { timeout: 90_000 }, async () => {
    const id = await browserScrape('/app');
    const other = await stack.newTeam();
    const cross = await call({ url: stack.url, apiKey: other.apiKey }, 'POST', `/v2/scrape/${id}/interact`, { code: '1' });
    assert.equal(cross.status, 404, cross.text);
    assert.equal((await call({ url: stack.url, apiKey: other.apiKey }, 'DELETE', `/v2/scrape/${id}/interact`)).status, 404);
    assert.equal((await call(stack, 'POST', `/v2/scrape/${crypto.randomUUID()}/interact`, { code: '1' })).status, 404);
    assert.equal((await call(stack, 'POST', '/v2/scrape/not-a-uuid/interact', { code: '1' })).status, 400);
    assert.equal((await call(stack, 'POST', `/v2/scrape/${id}/interact`, {})).status, 400);
    const py = await call(stack, 'POST', `/v2/scrape/${id}/interact`, { code: 'print(1)', language: 'python' });
    assert.equal(py.status, 400);
    assert.equal(py.json.code, 'FEATURE_NOT_AVAILABLE');

    const zdrTeam = await stack.newTeam({ flags: { zeroDataRetention: true } });
    const zdr = await call({ url: stack.url, apiKey: zdrTeam.apiKey }, 'POST', '/v2/scrape', { url: site.url('/static'), zeroDataRetention: true });
    assert.equal(zdr.status, 200, zdr.text);
    const refused = await call({ url: stack.url, apiKey: zdrTeam.apiKey }, 'POST', `/v2/scrape/${zdr.json.data.metadata.scrapeId}/interact`, { code: '1' });
    assert.equal(refused.status, 403, refused.text);
  });
});

describe('durability', () => {
  test('the worker keeping a scrape\'s page is killed before the first call: the call replays the scrape on another worker', { timeout: 90_000 }, async () => {
    const id = await browserScrape('/app');
    const parkedOn = (await sessionRow(id))!.queue;
    browserWorker.child.kill('SIGKILL');
    browserWorker = await addBrowserWorker();
    const hits = site.hits('/app');
    const r = await fc.interact(id, { code: `await page.click('#show'); await page.textContent('#price')` });
    assert.equal(r.success, true, JSON.stringify(r));
    assert.equal(r.result, '$49 / month');
    assert.equal(site.hits('/app'), hits + 1, 'one replay');
    const row = await sessionRow(id);
    assert.equal(row?.state, 'live');
    assert.notEqual(row?.queue, parkedOn, 'the session lives on the new worker\'s queue');
    assert.equal(await metric(browserWorker, /wds_browser_sessions\{state="live"\} (\d+)/), 1);
    await fc.stopInteraction(id);
  });

  test('the session\'s browser worker is killed: a clear error, and the next call replays on another worker', { timeout: 90_000 }, async () => {
    const id = await browserScrape('/app');
    await fc.interact(id, { code: `await page.click('#show'); 'clicked'` });
    browserWorker.child.kill('SIGKILL');
    browserWorker = await addBrowserWorker();
    const lost = await call(stack, 'POST', `/v2/scrape/${id}/interact`, { code: `await page.textContent('#price')` });
    assert.equal(lost.status, 502, lost.text);
    assert.equal(lost.json.code, 'BROWSER_SESSION_LOST');
    assert.match(lost.json.error, /next call .* replaying/);
    assert.equal((await sessionRow(id))?.state, 'ended');
    const hits = site.hits('/app');
    const replayed = await fc.interact(id, { code: `await page.locator('#price').count()` });
    assert.equal(replayed.result, '0');
    assert.equal(site.hits('/app'), hits + 1);
    await fc.stopInteraction(id);
  });
});
