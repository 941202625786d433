import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { assertRenderedOncePerPage, assertRenderRetried, crawlBooks, crawlEnd, namespaceFor, startCrawlSite, startStack, untilActivityRuns, untilCrawled, type CrawlSite, type Stack } from '@wds/test-utils';

// The browser worker SIGKILLed in the middle of a crawl of a JavaScript-rendered site: its
// renders are retried on a new browser worker (their pages' leases taken back), and the job
// ends with exactly one document per URL, every one rendered.
const PAGES = 40;
let stack: Stack;
let site: CrawlSite;

before(async () => {
  // Pages answer after 400 ms: renders take long enough to be caught mid-way.
  site = await startCrawlSite({ jsPages: PAGES, jsDelayMs: 400 });
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_HOST_OVERRIDES: site.hostOverrides } });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

test('SIGKILL of the browser worker mid-crawl loses and duplicates no page', { timeout: 300_000 }, async () => {
  const browserEnv = { WDS_WORKER_QUEUES: 'wds-browser', WDS_PUBLIC_URL: stack.url, WDS_BROWSER_PAGES: '3' };
  const first = await stack.addWorker(browserEnv);
  const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  const { id } = await fc.startCrawl(site.url('/js/0'), { limit: PAGES, sitemap: 'skip', crawlEntireDomain: true, includePaths: ['^/js/'], maxConcurrency: 6 } as never);

  await untilCrawled(fc, id, 8);
  // Kill while renders are running on the browser worker, so the kill certainly interrupts one.
  const workflowId = `crawl-${id}`;
  await untilActivityRuns(stack, workflowId, 'renderCrawlPage', 2);
  first.child.kill('SIGKILL');
  const before = await fc.getCrawlStatus(id, { autoPaginate: false });
  assert.ok(before.completed < PAGES * 0.8, `the kill must happen mid-crawl (completed ${before.completed})`);
  await stack.addWorker(browserEnv);

  assert.equal((await crawlEnd(fc, id)).status, 'completed');
  await assertRenderedOncePerPage(fc, id, PAGES);
  assert.deepEqual(await crawlBooks(stack, id), { docs: PAGES, unfinished: 0, charges: PAGES }, 'each page stored and billed once');

  await assertRenderRetried(stack, workflowId, first.child.pid!);
});
