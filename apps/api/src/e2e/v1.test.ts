import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { FirecrawlAppV1 } from '@mendable/firecrawl-js';
import { call, html, namespaceFor, startFixtureSite, startStack, type FixtureSite, type Stack } from '@wds/test-utils';
import { WebSocket } from 'ws';
import { requireVenv, runTool } from '../../../../tests/venv';

// Firecrawl's v1 API (routes/v1.ts: adapters over the v2 controllers) through the clients that
// speak it: the JS SDK's FirecrawlAppV1 and firecrawl-py's V1FirecrawlApp, plus raw HTTP for its
// errors. A status page holds ~1 KiB (WDS_STATUS_PAGE_BYTES), so every crawl and batch answer is
// paginated and the clients must follow `next` to the end.
let stack: Stack;
let site: FixtureSite;
let fc: FirecrawlAppV1;

const page = (title: string, body: string) => html(`<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`);
const PAGES = {
  '/': page('Home', '<p>The home page.</p><a href="/a">A</a> <a href="/b">B</a>'),
  '/a': page('Page A', '<p>A zebrafish swims here.</p><a href="/a/deep">deeper</a>'),
  '/b': page('Page B', '<p>Nothing about fish.</p>'),
  // Two path segments: left out of a crawl with maxDepth 1.
  '/a/deep': page('Deep page', '<p>Two levels down.</p>'),
};
const paths = (urls: string[]) => urls.map((u) => new URL(u).pathname).sort();

before(async () => {
  site = await startFixtureSite(PAGES);
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_STATUS_PAGE_BYTES: '1024' } });
  fc = new FirecrawlAppV1({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

describe('v1 through the JS SDK (FirecrawlAppV1)', () => {
  test('scrapeUrl: formats as strings, links as strings', async () => {
    const r = await fc.scrapeUrl(site.url('/a'), { formats: ['markdown', 'html', 'links'] });
    assert.equal(r.success, true);
    if (!r.success) return;
    assert.match(r.markdown ?? '', /zebrafish/);
    assert.match(r.html ?? '', /<h1>Page A<\/h1>/);
    assert.deepEqual(r.links, [site.url('/a/deep')]);
    assert.equal(r.metadata?.sourceURL, site.url('/a'));
  });

  test('mapUrl: links are strings (v1), the sitemap ignored by default', async () => {
    const r = await fc.mapUrl(site.url('/'), {});
    assert.equal(r.success, true);
    if (!r.success) return;
    assert.ok(r.links?.every((l) => typeof l === 'string'), JSON.stringify(r.links));
    for (const p of ['/a', '/b']) assert.ok(r.links?.includes(site.url(p)), `${p} in ${r.links?.join(' ')}`);
  });

  test('crawlUrl: maxDepth (path depth), ignoreSitemap; the paginated status followed to its end', async () => {
    const deepHits = site.hits('/a/deep');
    const r = await fc.crawlUrl(site.url('/'), { limit: 10, maxDepth: 1, ignoreSitemap: true }, 1);
    assert.equal(r.success, true);
    if (!r.success) return;
    assert.equal(r.status, 'completed');
    // Followed through `next` to the last page: every page of the crawl, once.
    assert.deepEqual(paths(r.data.map((d) => d.metadata!.sourceURL!)), ['/', '/a', '/b']);
    assert.equal(site.hits('/a/deep'), deepHits, 'maxDepth 1 keeps two-segment paths out');
  });

  test('asyncCrawlUrl: v1 polling URL, a next link on every page but the last, errors read with DELETE as the SDK sends it', async () => {
    const started = await fc.asyncCrawlUrl(site.url('/'), { limit: 3, ignoreSitemap: true });
    assert.equal(started.success, true);
    if (!started.success) return;
    assert.equal(started.url, `${stack.url}/v1/crawl/${started.id}`);
    let s = await call(stack, 'GET', `/v1/crawl/${started.id}`);
    for (let i = 0; i < 60 && s.json.status === 'scraping'; i++) {
      await new Promise((r) => setTimeout(r, 500));
      s = await call(stack, 'GET', `/v1/crawl/${started.id}`);
    }
    assert.equal(s.json.status, 'completed');
    const seen: string[] = [];
    let body = s.json;
    while (true) {
      seen.push(...body.data.map((d: { metadata: { sourceURL: string } }) => d.metadata.sourceURL));
      if (!('next' in body)) break;
      assert.match(body.next, new RegExp(`^${stack.url}/v1/crawl/${started.id}\\?skip=\\d+$`));
      body = (await call(stack, 'GET', body.next.slice(stack.url.length))).json;
    }
    assert.equal(seen.length, 3);
    const errors = await fc.checkCrawlErrors(started.id!);
    assert.deepEqual(errors, { success: true, errors: [], robotsBlocked: [] });
    // The same job on v2: one store, one engine.
    const v2 = await call(stack, 'GET', `/v2/crawl/${started.id}`);
    assert.equal(v2.status, 200);
    assert.equal(v2.json.total, s.json.total);
  });

  test('batchScrapeUrls (polled on /v1/crawl/{id}, as the SDK does), then search finds the stored page', async () => {
    const r = await fc.batchScrapeUrls([site.url('/a'), site.url('/b')], { formats: ['markdown'] }, 1);
    assert.equal(r.success, true);
    if (!r.success) return;
    assert.equal(r.status, 'completed');
    assert.deepEqual(paths(r.data.map((d) => d.metadata!.sourceURL!)), ['/a', '/b']);
    const found = await fc.search('zebrafish', { limit: 5 });
    assert.equal(found.success, true);
    assert.ok(Array.isArray(found.data), 'v1 search answers one list');
    assert.ok(found.data.some((d) => d.url === site.url('/a')), JSON.stringify(found.data));
  });

  test('crawlUrlAndWatch and batchScrapeUrlsAndWatch: the v1 WebSocket (batches watched on /v1/crawl/{id}, as the SDK does)', async () => {
    // The SDK's CrawlWatcher uses the global WebSocket (Node 22+); on older Node a user supplies one, as here.
    (globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;
    // The watcher's `done` carries only what `catchup` held: users collect the `document` events.
    const watch = (w: Awaited<ReturnType<FirecrawlAppV1['crawlUrlAndWatch']>>) =>
      new Promise<{ status: string; urls: string[] }>((resolve, reject) => {
        const urls: string[] = [];
        w.addEventListener('document', (e) => {
          urls.push(e.detail.metadata!.sourceURL!);
        });
        w.addEventListener('done', (e) => resolve({ status: e.detail.status, urls }));
        w.addEventListener('error', (e) => reject(new Error(JSON.stringify(e.detail))));
      });
    const crawl = await watch(await fc.crawlUrlAndWatch(site.url('/'), { limit: 3, ignoreSitemap: true }));
    assert.equal(crawl.status, 'completed');
    assert.deepEqual(paths(crawl.urls), ['/', '/a', '/b']);
    const batch = await watch(await fc.batchScrapeUrlsAndWatch([site.url('/b')], { formats: ['markdown'] }));
    assert.equal(batch.status, 'completed');
    assert.deepEqual(paths(batch.urls), ['/b']);
  });

  test('team usage in v1 field names', async () => {
    const c = await call(stack, 'GET', '/v1/team/credit-usage');
    assert.equal(c.status, 200);
    assert.equal(typeof c.json.data.remaining_credits, 'number');
    assert.equal(typeof c.json.data.plan_credits, 'number');
    const t = await call(stack, 'GET', '/v1/team/token-usage');
    assert.equal(typeof t.json.data.remaining_tokens, 'number');
  });
});

describe('v1 errors (raw HTTP)', () => {
  test('bad bodies name the v1 field', async () => {
    const bad = await call(stack, 'POST', '/v1/scrape', { url: site.url('/a'), formats: ['markdown', 'bogus'] });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.success, false);
    assert.deepEqual(bad.json.details[0].path, ['formats', 1]);
    const noOptions = await call(stack, 'POST', '/v1/scrape', { url: site.url('/a'), formats: ['json'] });
    assert.equal(noOptions.status, 400);
    assert.deepEqual(noOptions.json.details[0].path, ['jsonOptions']);
    const unknown = await call(stack, 'POST', '/v1/crawl', { url: site.url('/'), nope: 1 });
    assert.equal(unknown.status, 400);
    assert.match(JSON.stringify(unknown.json.details), /nope/);
    const mapBad = await call(stack, 'POST', '/v1/map', { url: site.url('/'), ignoreSitemap: 'yes' });
    assert.equal(mapBad.status, 400);
    assert.deepEqual(mapBad.json.details[0].path, ['ignoreSitemap']);
    const notJson = await call(stack, 'POST', '/v1/scrape', '{', { 'content-type': 'application/json' });
    assert.equal(notJson.status, 400);
  });

  test('unknown job ids, no key, endpoints WDS does not run', async () => {
    const id = '2b6d8a4e-2d1f-4e0a-9a53-2f1c3b9d7e11';
    for (const path of [`/v1/crawl/${id}`, `/v1/batch/scrape/${id}`, `/v1/extract/${id}`]) {
      const r = await call(stack, 'GET', path);
      assert.equal(r.status, 404, path);
      assert.equal(r.json.success, false);
    }
    const cancel = await call(stack, 'DELETE', `/v1/crawl/${id}`);
    assert.equal(cancel.status, 404);
    const noKey = await call({ url: stack.url, apiKey: 'wrong' }, 'POST', '/v1/scrape', { url: site.url('/a') });
    assert.equal(noKey.status, 401);
    assert.equal(noKey.json.success, false);
    const dr = await call(stack, 'POST', '/v1/deep-research', { query: 'x' });
    assert.equal(dr.status, 400);
    assert.equal(dr.json.code, 'FEATURE_NOT_AVAILABLE');
    assert.match(dr.json.error, /\/v2\/agent/);
    const llms = await call(stack, 'POST', '/v1/llmstxt', { url: site.url('/') });
    assert.equal(llms.json.code, 'FEATURE_NOT_AVAILABLE');
  });

  test('extract without a model answers as v2 does (FEATURE_NOT_AVAILABLE)', async () => {
    const body = { urls: [site.url('/a')], prompt: 'the animal', scrapeOptions: { formats: ['markdown'] } };
    const v1 = await call(stack, 'POST', '/v1/extract', body);
    const v2 = await call(stack, 'POST', '/v2/extract', { ...body, scrapeOptions: { formats: ['markdown'], skipTlsVerification: false } });
    assert.equal(v1.status, v2.status);
    assert.deepEqual(v1.json, v2.json);
  });
});

test('firecrawl-py V1FirecrawlApp: scrape, map, crawl, batch scrape, search, credit usage', async () => {
  const python = requireVenv('python');
  const script = fileURLToPath(new URL('./v1-client.py', import.meta.url));
  const r = await runTool(python, [script], { WDS_API_URL: stack.url, WDS_API_KEY: stack.apiKey, WDS_SITE_URL: site.origin }, 120_000);
  assert.equal(r.code, 0, r.output.slice(-4000));
  const out = JSON.parse(r.output.trim().split('\n').at(-1)!);
  assert.match(out.scrape.markdown, /zebrafish/);
  assert.deepEqual(out.scrape.links, [site.url('/a/deep')]);
  assert.ok(out.map.includes(site.url('/b')));
  assert.equal(out.crawl.status, 'completed');
  assert.deepEqual(paths(out.crawl.urls), ['/', '/a', '/b']);
  assert.deepEqual(paths(out.batch.urls), ['/a', '/b']);
  assert.ok(out.search.includes(site.url('/a')), JSON.stringify(out.search));
  assert.equal(typeof out.credits, 'number');
});
