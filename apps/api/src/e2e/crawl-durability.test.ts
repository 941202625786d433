import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { namespaceFor, testInfra, startCrawlSite, startStack, type CrawlSite, type Stack } from '@wds/test-utils';

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

test('SIGKILL of a worker mid-crawl loses and duplicates nothing', { timeout: 240_000 }, async () => {
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
  for (let i = 0; i < 300; i++) {
    const s = await fc.getCrawlStatus(id, { autoPaginate: false });
    if (s.completed >= 20) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // Kill at a moment when a batch activity is running (not between batches), so the kill
  // certainly interrupts work in flight.
  const connection = await Connection.connect({ address: testInfra().temporalAddress });
  const handle = new Client({ connection, namespace: stack.namespace }).workflow.getHandle(`crawl-${id}`);
  for (let i = 0; i < 500; i++) {
    const d = await handle.describe();
    const STARTED = proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
    if (d.raw.pendingActivities?.some((a) => a.activityType?.name === 'processBatch' && a.state === STARTED)) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const before = await fc.getCrawlStatus(id, { autoPaginate: false });
  assert.ok(before.completed < PAGES * 0.8, `the kill must happen mid-crawl (completed ${before.completed})`);
  stack.worker.child.kill('SIGKILL');
  await stack.addWorker();

  let status = before;
  for (let i = 0; i < 1_800 && status.status === 'scraping'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = await fc.getCrawlStatus(id, { autoPaginate: false });
  }
  assert.equal(status.status, 'completed');
  const all = await fc.getCrawlStatus(id);
  const urls = all.data.map((d) => d.metadata!.sourceURL!);
  if (urls.length !== PAGES) {
    const dbg = await stack.db.pool.query('SELECT status, count(*)::int AS n, min(error) AS e FROM crawl_urls WHERE job_id = $1 GROUP BY status', [id]);
    console.log('DEBUG', JSON.stringify({ completed: all.completed, total: all.total, docs: urls.length, frontier: dbg.rows }));
  }
  assert.equal(urls.length, PAGES, 'every page has a document');
  assert.equal(new Set(urls).size, PAGES, 'no page has two documents');
  assert.equal(all.completed, PAGES);

  const rows = await stack.db.pool.query(
    `SELECT (SELECT count(*)::int FROM crawl_documents WHERE job_id = $1) AS docs,
            (SELECT count(*)::int FROM crawl_urls WHERE job_id = $1 AND status <> 'done') AS unfinished`,
    [id],
  );
  assert.deepEqual(rows.rows[0], { docs: PAGES, unfinished: 0 });

  // Proof that the kill interrupted real work: some batch activity needed a second attempt.
  try {
    const history = await handle.fetchHistory();
    const retried = history.events!.filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);
    assert.ok(retried.length > 0, 'an activity of the killed worker was retried elsewhere');
  } finally {
    await connection.close();
  }
});
