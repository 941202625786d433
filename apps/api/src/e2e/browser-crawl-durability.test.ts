import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { activityStarts, namespaceFor, runningActivities, startCrawlSite, startStack, type CrawlSite, type Stack } from '@wds/test-utils';

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

  for (let i = 0; i < 600; i++) {
    const s = await fc.getCrawlStatus(id, { autoPaginate: false });
    if (s.completed >= 8) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // Kill while a render is running on the browser worker, so the kill certainly interrupts one.
  const workflowId = `crawl-${id}`;
  for (let i = 0; i < 500; i++) {
    if ((await runningActivities(stack.namespace, workflowId)).some((a) => a.type === 'renderCrawlPage')) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const before = await fc.getCrawlStatus(id, { autoPaginate: false });
  assert.ok(before.completed < PAGES * 0.8, `the kill must happen mid-crawl (completed ${before.completed})`);
  first.child.kill('SIGKILL');
  await stack.addWorker(browserEnv);

  let status = before;
  for (let i = 0; i < 2_400 && status.status === 'scraping'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = await fc.getCrawlStatus(id, { autoPaginate: false });
  }
  assert.equal(status.status, 'completed');
  const all = await fc.getCrawlStatus(id);
  const urls = all.data.map((d) => d.metadata!.sourceURL!);
  assert.equal(urls.length, PAGES, 'every page has a document');
  assert.equal(new Set(urls).size, PAGES, 'no page has two documents');
  for (const d of all.data) {
    const i = Number(new URL(d.metadata!.sourceURL!).pathname.split('/').pop());
    assert.match(d.markdown!, new RegExp(`Rendered page ${i}\\b`), `${d.metadata!.sourceURL} has its rendered content`);
  }
  const rows = await stack.db.pool.query(
    `SELECT (SELECT count(*)::int FROM crawl_documents WHERE job_id = $1) AS docs,
            (SELECT count(*)::int FROM crawl_urls WHERE job_id = $1 AND status <> 'done') AS unfinished,
            (SELECT count(*)::int FROM credit_ledger WHERE job_id = $1) AS charges`,
    [id],
  );
  assert.deepEqual(rows.rows[0], { docs: PAGES, unfinished: 0, charges: PAGES }, 'each page stored and billed once');

  // Proof that the kill interrupted a render: a browser page activity needed a second attempt.
  const retried = (await activityStarts(stack.namespace, workflowId)).filter((a) => a.type === 'renderCrawlPage' && a.attempt > 1);
  assert.ok(retried.length > 0, 'a render of the killed worker was retried');
  assert.ok(retried.every((a) => a.pid !== first.child.pid), 'on the new browser worker');
});
