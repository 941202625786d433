import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { activityStarts, crawlBooks, crawlEnd, namespaceFor, startCrawlSite, startStack, untilActivityRuns, untilCrawled, type CrawlSite, type Stack } from '@wds/test-utils';

// A worker SIGKILLed in the middle of a crawl: the job finishes on the surviving worker with
// exactly one document per URL — nothing lost, nothing duplicated.
const PAGES = 300;
let stack: Stack;
let site: CrawlSite;

before(async () => {
  site = await startCrawlSite({ genPages: PAGES, genDelayMs: 40 });
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_HOST_OVERRIDES: site.hostOverrides } });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

test('SIGKILL of a worker mid-crawl loses and duplicates nothing', { timeout: 300_000 }, async () => {
  const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  const { id } = await fc.startCrawl(site.url('/gen/0'), {
    limit: PAGES,
    sitemap: 'skip',
    crawlEntireDomain: true,
    includePaths: ['^/gen/'],
    maxConcurrency: 10,
  } as never);

  // The first worker runs the crawl alone and is killed without warning while it holds the
  // in-flight batches and the workflow; a second worker then has to finish everything.
  await untilCrawled(fc, id, 20);
  // Kill at a moment when a batch activity is running (not between batches), so the kill
  // certainly interrupts work in flight.
  const workflowId = `crawl-${id}`;
  await untilActivityRuns(stack, workflowId, 'processBatch');
  stack.worker.child.kill('SIGKILL');
  const before = await fc.getCrawlStatus(id, { autoPaginate: false });
  assert.ok(before.completed < PAGES * 0.8, `the kill must happen mid-crawl (completed ${before.completed})`);
  await stack.addWorker();

  assert.equal((await crawlEnd(fc, id, 270_000)).status, 'completed');
  const all = await fc.getCrawlStatus(id);
  const urls = all.data.map((d) => d.metadata!.sourceURL!);
  if (urls.length !== PAGES) {
    const dbg = await stack.db.pool.query('SELECT status, count(*)::int AS n, min(error) AS e FROM crawl_urls WHERE job_id = $1 GROUP BY status', [id]);
    console.log('DEBUG', JSON.stringify({ completed: all.completed, total: all.total, docs: urls.length, frontier: dbg.rows }));
  }
  assert.equal(urls.length, PAGES, 'every page has a document');
  assert.equal(new Set(urls).size, PAGES, 'no page has two documents');
  assert.equal(all.completed, PAGES);

  const { docs, unfinished } = await crawlBooks(stack, id);
  assert.deepEqual({ docs, unfinished }, { docs: PAGES, unfinished: 0 });

  // Proof that the kill interrupted real work: some batch activity needed a second attempt.
  const retried = (await activityStarts(stack.namespace, workflowId)).filter((a) => a.attempt > 1);
  assert.ok(retried.length > 0, 'an activity of the killed worker was retried elsewhere');
});
