import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { stopChild } from '@wds/launch';
import { workflowIds } from '@wds/workflows/common';
import { activityStarts, exitOf, namespaceFor, startFixtureSite, startStack, until, type FixtureSite, type Stack } from '@wds/test-utils';

// SIGTERM to a worker with an activity in flight: it finishes the activity within its grace time,
// or, past it, hands the activity back (cancelled → retried on another worker); either way the
// job completes and the process exits cleanly within a bounded time. SIGKILL: the scrape's
// heartbeat timeout hands the activity to another worker. The stack's own worker
// serves wds-control only, so the fetch workers started here are the only ones that scrape.
let stack: Stack;
let site: FixtureSite;
let answeredAt = 0;

/** A page that answers after `ms` on its first request and at once afterwards (the retry). */
function slowOnce(ms: number) {
  let served = 0;
  return (_req: unknown, res: ServerResponse) => {
    const n = served++;
    const body = () => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><head><title>Slow page</title></head><body><p>request ${n}</p></body></html>`);
      answeredAt = Date.now();
    };
    if (n) return body();
    const t = setTimeout(body, ms);
    res.on('close', () => clearTimeout(t));
  };
}

before(async () => {
  site = await startFixtureSite({ '/drains': slowOnce(4_000), '/hangs': slowOnce(120_000), '/killed': slowOnce(120_000) });
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_WORKER_QUEUES: 'wds-control' } });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

test('an activity shorter than the grace time finishes on the terminated worker, which then exits', { timeout: 180_000 }, async () => {
  const worker = await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-fetch', WDS_SHUTDOWN_GRACE_MS: '60000' });
  const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  const scraping = fc.scrape(site.url('/drains'), { formats: ['markdown'], maxAge: 0 });
  await until(() => site.hits('/drains') === 1, 'the scrape to reach the page', { timeoutMs: 90_000 });
  const exited = exitOf(worker.child);
  const signalledAt = Date.now();
  worker.child.kill('SIGTERM');

  const doc = await scraping;
  assert.match(doc.markdown ?? '', /request 0/, 'the first (slow) answer, not a retry');
  const exit = await exited;
  assert.equal(exit.code, 0, worker.output());
  assert.ok(exit.at >= answeredAt, 'the worker stayed until its activity was done');
  assert.ok(exit.at - signalledAt < 45_000, `exited ${exit.at - signalledAt} ms after SIGTERM, well inside its 60 s grace`);
  const starts = (await activityStarts(stack.namespace, workflowIds.scrape(doc.metadata!.scrapeId!), { closed: true })).filter((s) => s.type === 'scrapePage');
  assert.deepEqual(starts, [{ type: 'scrapePage', attempt: 1, pid: worker.child.pid }]);
  assert.equal(site.hits('/drains'), 1);
});

test('an activity outlasting the grace time is handed back and completes on another worker', { timeout: 180_000 }, async () => {
  const GRACE_MS = 1_500;
  const draining = await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-fetch', WDS_SHUTDOWN_GRACE_MS: String(GRACE_MS) });
  const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  const scraping = fc.scrape(site.url('/hangs'), { formats: ['markdown'], maxAge: 0 });
  await until(() => site.hits('/hangs') === 1, 'the scrape to reach the page', { timeoutMs: 90_000 });
  // Started only now, so the first attempt certainly runs on the worker that is terminated.
  const successor = await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-fetch' });
  const exited = exitOf(draining.child);
  const signalledAt = Date.now();
  draining.child.kill('SIGTERM');

  const exit = await exited;
  assert.equal(exit.code, 0, draining.output());
  // The page would hold the activity for two minutes; the worker left after its grace time.
  assert.ok(exit.at - signalledAt < GRACE_MS + 15_000, `exited ${exit.at - signalledAt} ms after SIGTERM`);
  const doc = await scraping;
  assert.match(doc.markdown ?? '', /request 1/, 'answered by the retry');
  const starts = (await activityStarts(stack.namespace, workflowIds.scrape(doc.metadata!.scrapeId!), { closed: true })).filter((s) => s.type === 'scrapePage');
  // History records the last attempt only: the second, on the successor.
  assert.deepEqual(starts, [{ type: 'scrapePage', attempt: 2, pid: successor.child.pid }]);
  assert.equal(site.hits('/hangs'), 2);
  await stopChild(successor.child); // the next test needs to know which workers poll wds-fetch
});

test('a SIGKILLed worker\'s scrape is retried elsewhere within seconds, not at the end of its timeout', { timeout: 180_000 }, async () => {
  const doomed = await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-fetch' });
  const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  const t0 = Date.now();
  const scraping = fc.scrape(site.url('/killed'), { formats: ['markdown'], maxAge: 0, timeout: 60_000 });
  await until(() => site.hits('/killed') === 1, 'the scrape to reach the page', { timeoutMs: 90_000 });
  const successor = await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-fetch' });
  doomed.child.kill('SIGKILL');

  const doc = await scraping;
  assert.match(doc.markdown ?? '', /request 1/, 'answered by the retry');
  // Without heartbeats the attempt would only time out after its 62 s start-to-close timeout.
  const tookMs = Date.now() - t0;
  assert.ok(tookMs < 45_000, `answered ${tookMs} ms after the request`);
  const starts = (await activityStarts(stack.namespace, workflowIds.scrape(doc.metadata!.scrapeId!), { closed: true })).filter((s) => s.type === 'scrapePage');
  assert.deepEqual(starts, [{ type: 'scrapePage', attempt: 2, pid: successor.child.pid }]);
  await stopChild(successor.child);
});
