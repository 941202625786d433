import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { sql } from 'drizzle-orm';
import { namespaceFor, startStack, testInfra, type Stack } from '@wds/test-utils';
import { page, startMonitorSite, type MonitorSite } from './monitor-site';

// A worker SIGKILLed while it checks a monitor's pages, or while a crawl target's crawl runs: the
// check still ends once, with every page checked once and billed once, on the worker that takes over.
const PAGES = 120;
const CRAWLED = 40;
let stack: Stack;
let site: MonitorSite;

before(async () => {
  site = await startMonitorSite();
  for (let i = 0; i < PAGES; i++) {
    site.set(`/k/${i}`, page(`Page ${i}`, `text of page ${i}`));
    site.delay(`/k/${i}`, 400);
  }
  site.set('/c/', `<html><body><main><h1>Index</h1>${Array.from({ length: CRAWLED - 1 }, (_, i) => `<a href="/c/${i}">${i}</a>`).join(' ')}</main></body></html>`);
  for (let i = 0; i < CRAWLED - 1; i++) {
    site.set(`/c/${i}`, page(`Crawled ${i}`, `text of crawled page ${i}`));
    site.delay(`/c/${i}`, 300);
  }
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_STRANDED_JOB_SWEEP_MS: '1000' } });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

test('SIGKILL of the worker mid-check: the check ends once, each page checked and billed once', { timeout: 180_000 }, async () => {
  const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  const m = await fc.createMonitor({ name: 'kill', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'scrape', urls: Array.from({ length: PAGES }, (_, i) => site.url(`/k/${i}`)) }] });
  const check = await fc.runMonitor(m.id);

  // Kill while a batch of pages is being fetched.
  const connection = await Connection.connect({ address: testInfra().temporalAddress });
  const runId = (await stack.db.db.execute<{ run_id: string }>(sql`SELECT run_id FROM monitor_checks WHERE id = ${check.id}`)).rows[0]!.run_id;
  const handle = new Client({ connection, namespace: stack.namespace }).workflow.getHandle(`monitor-run-${runId}`);
  const STARTED = proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
  let batchRunning = false;
  for (let i = 0; i < 500 && !batchRunning; i++) {
    batchRunning = !!(await handle.describe()).raw.pendingActivities?.some((a) => a.activityType?.name === 'checkMonitorPages' && a.state === STARTED);
    if (!batchRunning) await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(batchRunning, 'a batch was running when the worker was killed');
  await new Promise((r) => setTimeout(r, 300));
  stack.worker.child.kill('SIGKILL');
  await stack.addWorker();

  let done = await fc.getMonitorCheck(m.id, check.id);
  for (let i = 0; i < 600 && done.status === 'running'; i++) {
    await new Promise((r) => setTimeout(r, 200));
    done = await fc.getMonitorCheck(m.id, check.id);
  }
  assert.equal(done.status, 'completed');
  assert.deepEqual(done.summary, { totalPages: PAGES, same: 0, changed: 0, new: PAGES, removed: 0, error: 0 });
  assert.equal(done.actualCredits, PAGES);
  assert.equal(done.pages.length, PAGES);

  const ledger = (await stack.db.db.execute<{ n: number; amount: number }>(sql`
    SELECT count(*)::int AS n, coalesce(sum(amount), 0)::int AS amount FROM credit_ledger WHERE job_id = ${check.id}`)).rows[0]!;
  assert.deepEqual(ledger, { n: 1, amount: PAGES }, 'billed once');
  const versions = (await stack.db.db.execute<{ n: number; keys: number }>(sql`
    SELECT count(*)::int AS n, count(DISTINCT url_key)::int AS keys FROM page_versions WHERE tag = ${`monitor:${m.id}`}`)).rows[0]!;
  assert.deepEqual(versions, { n: PAGES, keys: PAGES }, 'one version per page');
  const hist = await handle.fetchHistory();
  const retried = hist.events?.filter((e) => e.activityTaskStartedEventAttributes && (e.activityTaskStartedEventAttributes.attempt ?? 1) > 1) ?? [];
  assert.ok(retried.length > 0, 'a batch of the killed worker was retried by the other');
  assert.equal((await fc.getMonitor(m.id)).currentCheckId, null, 'the slot is free again');
  await connection.close();
});

test('SIGKILL of the worker while a crawl target crawls: the check ends once, each page once, the crawl billed once and the check not again', { timeout: 180_000 }, async () => {
  const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  const m = await fc.createMonitor({ name: 'kill-crawl', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'crawl', url: site.url('/c/'), crawlOptions: { limit: 100 } }] });
  const check = await fc.runMonitor(m.id);
  const connection = await Connection.connect({ address: testInfra().temporalAddress });
  try {
    const jobId = await (async () => {
      for (let i = 0; i < 500; i++) {
        const r = (await stack.db.db.execute<{ job_id: string | null }>(sql`SELECT job_id FROM monitor_check_targets WHERE check_id = ${check.id}`)).rows[0];
        if (r?.job_id) return r.job_id;
        await new Promise((res) => setTimeout(res, 20));
      }
      throw new Error('no crawl job for the check');
    })();
    const crawl = new Client({ connection, namespace: stack.namespace }).workflow.getHandle(`crawl-${jobId}`);
    const STARTED = proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
    let batchRunning = false;
    for (let i = 0; i < 500 && !batchRunning; i++) {
      batchRunning = !!(await crawl.describe().catch(() => null))?.raw.pendingActivities?.some((a) => a.activityType?.name === 'processBatch' && a.state === STARTED);
      if (!batchRunning) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(batchRunning, 'the crawl was fetching when the worker was killed');
    await new Promise((r) => setTimeout(r, 300));
    stack.worker.child.kill('SIGKILL');
    await stack.addWorker();

    let done = await fc.getMonitorCheck(m.id, check.id, { limit: 100 });
    for (let i = 0; i < 600 && done.status === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      done = await fc.getMonitorCheck(m.id, check.id, { limit: 100 });
    }
    assert.equal(done.status, 'completed', JSON.stringify(done.summary));
    assert.deepEqual(done.summary, { totalPages: CRAWLED, same: 0, changed: 0, new: CRAWLED, removed: 0, error: 0 });
    assert.equal(new Set(done.pages.map((p) => p.url)).size, CRAWLED);
    assert.equal(done.actualCredits, CRAWLED);
    const billed = (await stack.db.db.execute<{ job_id: string; amount: number }>(sql`
      SELECT job_id::text, coalesce(sum(amount), 0)::int AS amount FROM credit_ledger WHERE job_id IN (${check.id}, ${jobId}) AND entry = 'charge' AND amount <> 0 GROUP BY job_id`)).rows;
    assert.deepEqual(billed, [{ job_id: jobId, amount: CRAWLED }], 'the crawl billed its pages once; the check charged nothing more');
    const versions = (await stack.db.db.execute<{ n: number; keys: number }>(sql`
      SELECT count(*)::int AS n, count(DISTINCT url_key)::int AS keys FROM page_versions WHERE tag LIKE ${`monitor:${m.id}:crawl:%`}`)).rows[0]!;
    assert.deepEqual(versions, { n: CRAWLED, keys: CRAWLED }, 'one version per page');
    assert.equal((await fc.getMonitor(m.id)).currentCheckId, null, 'the slot is free again');
  } finally {
    await connection.close();
  }
});
