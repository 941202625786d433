import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { ORIGIN_RENDERED_PAGES } from '@wds/db';
import type { CrawlWorkflowInput, ProcessBatchResult } from '@wds/workflows/crawl';
import { activityResults, call, namespaceFor, startCrawlSite, startFixtureSite, startStack, workflowInput, type CrawlSite, type FixtureSite, type Stack } from '@wds/test-utils';

// Browser pages inside crawl and batch scrape, end to end through the JS SDK: a worker serving
// wds-fetch/wds-control (the stack's) and one serving wds-browser (real Chromium), a fixture
// site whose pages write their content and links with JavaScript.
const JS_PAGES = 15;
const APP_PAGES = 31;
const dataDir = mkdtempSync(join(tmpdir(), 'wds-browser-crawl-e2e-'));
let stack: Stack;
let site: CrawlSite;
let pages: FixtureSite;
let fc: Firecrawl;

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const doc = (title: string, body: string, head = '') =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${head}</head><body>${body}</body></html>`;

before(async () => {
  [site, pages] = await Promise.all([
    startCrawlSite({ jsPages: JS_PAGES, appPages: APP_PAGES }),
    startFixtureSite({
      // A page whose counter only changes when its button is clicked: what actions are for.
      '/counter/a': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end(counter('A')),
      '/counter/b': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end(counter('B')),
      // Cookie + localStorage: what a profile carries from one render to the next.
      '/profile': (req, res) => {
        const session = /(?:^|;\s*)session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
        const headers: Record<string, string> = { 'content-type': 'text/html' };
        if (!session) headers['set-cookie'] = 'session=abc123; Path=/; Max-Age=3600';
        res.writeHead(200, headers);
        const script = `const v = Number(localStorage.getItem('visits') || 0) + 1; localStorage.setItem('visits', v); document.getElementById('visits').textContent = 'visits ' + v;`;
        res.end(doc('Profile', `<main><p>${session ? `Welcome back ${session}` : 'New visitor'}</p><p id="visits"></p></main><script>${script}</script>`));
      },
      '/ua': (req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        const body = `<main><h1>Device</h1><p>UA: ${req.headers['user-agent']}</p><p id="w"></p></main><script>document.getElementById('w').textContent = 'width ' + innerWidth;</script>`;
        res.end(doc('UA', body, '<meta name="viewport" content="width=device-width, initial-scale=1">'));
      },
    }),
  ]);
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: { WDS_HOST_OVERRIDES: site.hostOverrides, WDS_DATA_DIR: dataDir, WDS_FILE_SIGNING_SECRET: 'browser-crawl-e2e-secret' },
  });
  await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-browser', WDS_PUBLIC_URL: stack.url, WDS_BROWSER_PAGES: '3' });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
  await pages?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * A crawl's fetch batches (and those that claimed nothing: each a wasted activity and its history
 * events), its fetch window, and its renders that added links to the frontier.
 */
async function fetchBatches(id: string) {
  const workflowId = `crawl-${id}`;
  const completed = (rs: (ProcessBatchResult | undefined)[]) => rs.filter((r): r is ProcessBatchResult => !!r);
  const batches = completed(await activityResults<ProcessBatchResult>(stack.namespace, workflowId, 'processBatch'));
  const renders = completed(await activityResults<ProcessBatchResult>(stack.namespace, workflowId, 'renderCrawlPage'));
  const { plan } = await workflowInput<CrawlWorkflowInput>(stack.namespace, workflowId);
  return { batches: batches.length, empty: batches.filter((b) => b.claimed === 0).length, window: plan.window, rendersWithLinks: renders.filter((r) => r.linksAdded).length };
}

function counter(name: string): string {
  return doc(
    `Counter ${name}`,
    `<main><h1>Counter ${name}</h1><button id="inc" onclick="document.getElementById('n').textContent = 'clicked ${name}'">Click</button><p id="n">not clicked</p>
     <a href="/counter/b">next</a></main>`,
  );
}

describe('crawl of a JavaScript-rendered site', () => {
  test('every page comes back with its rendered content; links only the scripts write are followed', { timeout: 180_000 }, async () => {
    const job = await fc.crawl(site.url('/js/0'), { limit: 100, sitemap: 'skip', crawlEntireDomain: true, includePaths: ['^/js/'], scrapeOptions: { formats: ['markdown', 'links'] }, pollInterval: 1 } as never);
    assert.equal(job.status, 'completed');
    const byPath = new Map(job.data.map((d) => [new URL(d.metadata!.sourceURL!).pathname, d]));
    assert.equal(byPath.size, JS_PAGES, `pages: ${[...byPath.keys()].sort().join(' ')}`);
    assert.equal(job.data.length, JS_PAGES, 'one document per page');
    for (let i = 0; i < JS_PAGES; i++) {
      const d = byPath.get(`/js/${i}`);
      assert.ok(d, `/js/${i} crawled`);
      assert.match(d.markdown!, new RegExp(`Rendered page ${i}\\b`), `/js/${i} has its rendered content`);
      assert.match(d.markdown!, /only exists after the script ran/);
      // Per page: script-rendered shells escalate, server-rendered pages stay on HTTP (the site is
      // mixed, so the crawl never sends its pages to the browser without fetching them first).
      assert.equal(d.metadata!.engine, i % 5 === 1 ? 'http' : 'browser', `/js/${i} engine`);
      const kids = [2 * i + 1, 2 * i + 2].filter((c) => c < JS_PAGES).map((c) => site.url(`/js/${c}`));
      for (const k of kids) assert.ok(d.links!.includes(k), `/js/${i} links to ${k}`);
    }
    assert.equal(job.creditsUsed, JS_PAGES);
  });

  test('a site whose pages are all script-rendered: once the crawl has seen a few, the rest go to the browser without an HTTP fetch', { timeout: 180_000 }, async () => {
    const job = await fc.crawl(site.url('/app/0', 'app.site.test'), { limit: 100, sitemap: 'skip', crawlEntireDomain: true, scrapeOptions: { formats: ['markdown', 'links'] }, pollInterval: 1 } as never);
    assert.equal(job.status, 'completed');
    const byPath = new Map(job.data.map((d) => [new URL(d.metadata!.sourceURL!).pathname, d]));
    assert.equal(byPath.size, APP_PAGES, `pages: ${[...byPath.keys()].sort().join(' ')}`);
    for (let i = 0; i < APP_PAGES; i++) {
      const d = byPath.get(`/app/${i}`);
      assert.ok(d, `/app/${i} crawled`);
      assert.match(d.markdown!, new RegExp(`Rendered page ${i}\\b`), `/app/${i} has its rendered content`);
      assert.equal(d.metadata!.engine, 'browser', `/app/${i} engine`);
      // Links still come from the rendered DOM.
      for (const c of [2 * i + 1, 2 * i + 2].filter((k) => k < APP_PAGES)) assert.ok(d.links!.includes(site.url(`/app/${c}`, 'app.site.test')), `/app/${i} links to /app/${c}`);
    }
    const rendered = site.browserHits('/app/', 'app.site.test');
    const fetched = site.totalHits('/app/', 'app.site.test') - rendered;
    assert.equal(rendered, APP_PAGES, 'each page rendered once');
    // The pages fetched while the origin was undecided (the threshold, and siblings fetched alongside), no more.
    assert.ok(fetched >= ORIGIN_RENDERED_PAGES && fetched <= 2 * ORIGIN_RENDERED_PAGES, `HTTP fetches of /app/ pages: ${fetched}`);
    // The fetch window re-opens by need (workflows/src/crawl/loop.ts): here every fetch batch is
    // the first window's or follows a render that added links — a count, whatever the timing.
    // Before, each such render and each batch that claimed re-opened the whole window: 42 fetch
    // batches, 30 of them empty, for these 31 pages (window 2, 15 renders with links; f6c90d3).
    const f = await fetchBatches(job.id);
    assert.ok(f.batches <= f.window + f.rendersWithLinks, `fetch batches ${JSON.stringify(f)}`);
  });
});

describe('browser options in scrapeOptions', () => {
  test('crawl with actions and screenshot: each page clicked and shot; shots are signed links', { timeout: 120_000 }, async () => {
    const job = await fc.crawl(pages.url('/counter/a'), {
      limit: 5,
      sitemap: 'skip',
      crawlEntireDomain: true,
      scrapeOptions: {
        formats: ['markdown', 'links', { type: 'screenshot', fullPage: false }],
        actions: [{ type: 'click', selector: '#inc' }, { type: 'executeJavascript', script: 'return document.getElementById("n").textContent' }],
      },
      pollInterval: 1,
    } as never);
    assert.equal(job.status, 'completed');
    const paths = job.data.map((d) => new URL(d.metadata!.sourceURL!).pathname).sort();
    assert.deepEqual(paths, ['/counter/a', '/counter/b'], 'the second page was found in the rendered page');
    for (const d of job.data) {
      const name = d.metadata!.sourceURL!.endsWith('/a') ? 'A' : 'B';
      assert.equal(d.metadata!.engine, 'browser');
      assert.match(d.markdown!, new RegExp(`clicked ${name}`), 'formats come from the DOM after the actions');
      const returns = (d.actions as { javascriptReturns: { type: string; value: unknown }[] }).javascriptReturns;
      assert.deepEqual(returns, [{ type: 'string', value: `clicked ${name}` }]);
      assert.match(d.screenshot!, /\/v2\/files\//);
      const shot = await fetch(d.screenshot!);
      assert.equal(shot.status, 200, 'the link works without an API key');
      const bytes = Buffer.from(await shot.arrayBuffer());
      assert.ok(PNG.every((m, i) => bytes[i] === m), 'a PNG');
      const forged = new URL(d.screenshot!);
      forged.searchParams.set('expires', String(Number(forged.searchParams.get('expires')) + 3600));
      const tampered = await fetch(forged);
      assert.equal(tampered.status, 403, 'a tampered link is refused');
    }
  });

  test('batch scrape with mobile: a phone UA and viewport on every page', { timeout: 120_000 }, async () => {
    const urls = [pages.url('/ua'), pages.url('/ua?x=1'), pages.url('/ua?x=2')];
    const job = await fc.batchScrape(urls, { options: { formats: ['markdown'], mobile: true }, pollInterval: 1 } as never);
    assert.equal(job.status, 'completed');
    assert.equal(job.data.length, 3);
    for (const d of job.data) {
      assert.equal(d.metadata!.engine, 'browser');
      assert.match(d.markdown!, /UA: .*Android.*Mobile/);
      assert.match(d.markdown!, /width 412/);
    }
  });

  test('profile in a batch scrape: every page has its cookies and storage; nothing is written back', { timeout: 120_000 }, async () => {
    const first = await fc.scrape(pages.url('/profile'), { profile: { name: 'batch-profile', saveChanges: true }, maxAge: 0 } as never);
    assert.match(first.markdown!, /New visitor[\s\S]*visits 1/);
    const job = await fc.batchScrape([pages.url('/profile?a'), pages.url('/profile?b')], { options: { formats: ['markdown'], profile: { name: 'batch-profile', saveChanges: true } }, pollInterval: 1 } as never);
    assert.equal(job.status, 'completed');
    assert.equal(job.data.length, 2);
    for (const d of job.data) assert.match(d.markdown!, /Welcome back abc123[\s\S]*visits 2/, 'the saved cookie and localStorage are loaded');
    const after = await fc.scrape(pages.url('/profile'), { profile: { name: 'batch-profile', saveChanges: false }, maxAge: 0 } as never);
    assert.match(after.markdown!, /visits 2/, 'the batch did not write the profile back (read-only)');
  });

  test('a crawl page that fails in the browser is a failed page with its error; the job completes', { timeout: 60_000 }, async () => {
    const r = await call(stack, 'POST', '/v2/batch/scrape', { urls: [pages.url('/counter/a')], actions: [{ type: 'click', selector: '#missing' }], timeout: 10_000 });
    assert.equal(r.status, 200, r.text);
    let s = await fc.getBatchScrapeStatus(r.json.id);
    for (let i = 0; i < 300 && s.status === 'scraping'; i++) {
      await new Promise((res) => setTimeout(res, 200));
      s = await fc.getBatchScrapeStatus(r.json.id);
    }
    assert.equal(s.status, 'completed');
    assert.equal(s.data.length, 0);
    const errors = await fc.getBatchScrapeErrors(r.json.id);
    assert.equal(errors.errors.length, 1);
    assert.match(errors.errors[0]!.error, /action/i);
  });
});
