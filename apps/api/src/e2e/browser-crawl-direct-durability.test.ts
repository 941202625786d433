import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { ORIGIN_RENDERED_PAGES } from '@wds/db';
import { assertRenderedOncePerPage, assertRenderRetried, crawlBooks, crawlEnd, namespaceFor, startCrawlSite, startStack, until, untilActivityRuns, type CrawlSite, type Stack } from '@wds/test-utils';

// The direct-to-browser path (per-origin learning): once a crawl has seen enough script-rendered
// pages of an origin, its fetch batches hand the origin's pages to the browser without an HTTP
// fetch. Every worker — the one running the workflow and the fetch batches that hand pages
// over, and the browser worker rendering them — is SIGKILLed while pages go that way; new
// workers finish the job with exactly one document and one charge per page.
const PAGES = 50;
const HOST = 'app.site.test';
let stack: Stack;
let site: CrawlSite;

before(async () => {
  // Pages answer after 300 ms: renders take long enough to be caught mid-way.
  site = await startCrawlSite({ appPages: PAGES, appDelayMs: 300 });
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_HOST_OVERRIDES: site.hostOverrides } });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

/** Whether the job has decided that the origin's pages go to the browser without a fetch (crawl_origin_engines). */
async function originDecided(jobId: string): Promise<boolean> {
  const r = await stack.db.pool.query<{ rendered: number; static: boolean }>('SELECT rendered, static FROM crawl_origin_engines WHERE job_id = $1', [jobId]);
  return r.rows.some((o) => !o.static && o.rendered >= ORIGIN_RENDERED_PAGES);
}

test('SIGKILL of every worker while pages go straight to the browser loses, duplicates and double-bills no page', { timeout: 300_000 }, async () => {
  const browserEnv = { WDS_WORKER_QUEUES: 'wds-browser', WDS_PUBLIC_URL: stack.url, WDS_BROWSER_PAGES: '3' };
  const browser = await stack.addWorker(browserEnv);
  const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  const { id } = await fc.startCrawl(site.url('/app/0', HOST), { limit: PAGES, sitemap: 'skip', crawlEntireDomain: true, maxConcurrency: 6 } as never);
  const workflowId = `crawl-${id}`;

  // The origin is decided and the browser has requested a page no HTTP fetch came before: the
  // direct path is in use. Then kill while renders run, so the kill certainly interrupts one.
  await until(async () => (await originDecided(id)) && site.browserOnly('/app/', HOST) > 0, 'a page rendered without an HTTP fetch', { timeoutMs: 120_000, everyMs: 50 });
  await untilActivityRuns(stack, workflowId, 'renderCrawlPage', 2);
  browser.child.kill('SIGKILL');
  stack.worker.child.kill('SIGKILL');
  const atKill = { status: await fc.getCrawlStatus(id, { autoPaginate: false }), direct: site.browserOnly('/app/', HOST) };
  assert.ok(atKill.status.completed < PAGES * 0.8, `the kill must happen mid-crawl (completed ${atKill.status.completed})`);
  await Promise.all([stack.addWorker(), stack.addWorker(browserEnv)]);

  assert.equal((await crawlEnd(fc, id)).status, 'completed');
  await assertRenderedOncePerPage(fc, id, PAGES);
  assert.deepEqual(await crawlBooks(stack, id), { docs: PAGES, unfinished: 0, charges: PAGES }, 'each page stored and billed once');

  // The new workers went on the direct way: more pages rendered without a fetch than at the
  // kill, and no more HTTP fetches than an undecided origin costs (the threshold and siblings).
  assert.ok(site.browserOnly('/app/', HOST) > atKill.direct, `pages rendered without a fetch: ${atKill.direct} at the kill, ${site.browserOnly('/app/', HOST)} at the end`);
  const fetched = site.totalHits('/app/', HOST) - site.browserHits('/app/', HOST);
  assert.ok(fetched <= 2 * ORIGIN_RENDERED_PAGES, `HTTP fetches of /app/ pages: ${fetched}`);

  await assertRenderRetried(stack, workflowId, browser.child.pid!);
});
