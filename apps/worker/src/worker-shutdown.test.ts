import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { stopChild } from '@wds/launch';
import { workflowIds } from '@wds/workflows/common';
import { activityStarts, exitOf, namespaceFor, startFixtureSite, startStack, until, type FixtureSite, type Stack } from '@wds/test-utils';

// SIGTERM to a worker with a scrape in flight: it finishes the scrape within its grace time, or,
// past it, hands it back (retried on another worker at once); either way the job completes and
// the process exits cleanly within a bounded time. SIGKILL: the scrape is retried on another
// worker once its heartbeat timeout (workflow path) or lease (direct path) has passed. Both
// paths are tested: direct dispatch through Postgres (the default) and the scrape workflow with
// its fetch activity (WDS_SCRAPE_FETCH=queue). The stack's own worker serves wds-control only,
// so the fetch workers started here are the only ones that scrape.
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

/** Which worker ran a scrape's page step, by attempt: Temporal's history (workflow path) or the job's row (direct path). */
type Attempts = (scrapeId: string) => Promise<{ attempt: number; pid: number | undefined }[]>;
let apis: Record<Mode, { url: string; attempts: Attempts }>;
type Mode = 'direct' | 'queue';
const MODES: Mode[] = ['direct', 'queue'];

before(async () => {
  site = await startFixtureSite(
    Object.fromEntries(MODES.flatMap((m) => [[`/drains-${m}`, slowOnce(4_000)], [`/hangs-${m}`, slowOnce(120_000)], [`/killed-${m}`, slowOnce(120_000)]])),
  );
  // The stack's API dispatches scrapes directly (the default); a second one runs them as workflows.
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_WORKER_QUEUES: 'wds-control' } });
  const queueApi = await stack.addApi({ WDS_SCRAPE_FETCH: 'queue' });
  apis = {
    // History records the last attempt only.
    queue: {
      url: queueApi.url!,
      attempts: async (id) => (await activityStarts(stack.namespace, workflowIds.scrape(id), { closed: true })).filter((s) => s.type === 'scrapePage').map((s) => ({ attempt: s.attempt, pid: s.pid })),
    },
    // The row keeps the number of attempts and the worker of the last one (lease_owner host:pid:tag).
    direct: {
      url: stack.url,
      attempts: async (id) => {
        const r = await stack.db.pool.query('SELECT attempts, lease_owner FROM scrape_jobs WHERE id = $1', [id]);
        return r.rows.map((row) => ({ attempt: row.attempts, pid: Number(String(row.lease_owner).split(':')[1]) }));
      },
    },
  };
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

for (const mode of MODES) {
  const fcOf = () => new Firecrawl({ apiKey: stack.apiKey, apiUrl: apis[mode].url });

  test(`${mode}: a scrape shorter than the grace time finishes on the terminated worker, which then exits`, { timeout: 180_000 }, async () => {
    const worker = await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-fetch', WDS_SHUTDOWN_GRACE_MS: '60000' });
    const path = `/drains-${mode}`;
    const scraping = fcOf().scrape(site.url(path), { formats: ['markdown'], maxAge: 0 });
    await until(() => site.hits(path) === 1, 'the scrape to reach the page', { timeoutMs: 90_000 });
    const exited = exitOf(worker.child);
    const signalledAt = Date.now();
    worker.child.kill('SIGTERM');

    const doc = await scraping;
    assert.match(doc.markdown ?? '', /request 0/, 'the first (slow) answer, not a retry');
    const exit = await exited;
    assert.equal(exit.code, 0, worker.output());
    assert.ok(exit.at >= answeredAt, 'the worker stayed until its scrape was done');
    assert.ok(exit.at - signalledAt < 45_000, `exited ${exit.at - signalledAt} ms after SIGTERM, well inside its 60 s grace`);
    assert.deepEqual(await apis[mode].attempts(doc.metadata!.scrapeId!), [{ attempt: 1, pid: worker.child.pid }]);
    assert.equal(site.hits(path), 1);
  });

  test(`${mode}: a scrape outlasting the grace time is handed back and completes on another worker`, { timeout: 180_000 }, async () => {
    const GRACE_MS = 1_500;
    const draining = await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-fetch', WDS_SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    const path = `/hangs-${mode}`;
    const scraping = fcOf().scrape(site.url(path), { formats: ['markdown'], maxAge: 0 });
    await until(() => site.hits(path) === 1, 'the scrape to reach the page', { timeoutMs: 90_000 });
    // Started only now, so the first attempt certainly runs on the worker that is terminated.
    const successor = await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-fetch' });
    const exited = exitOf(draining.child);
    const signalledAt = Date.now();
    draining.child.kill('SIGTERM');

    const exit = await exited;
    assert.equal(exit.code, 0, draining.output());
    // The page would hold the scrape for two minutes; the worker left after its grace time.
    assert.ok(exit.at - signalledAt < GRACE_MS + 15_000, `exited ${exit.at - signalledAt} ms after SIGTERM`);
    const doc = await scraping;
    assert.match(doc.markdown ?? '', /request 1/, 'answered by the retry');
    assert.deepEqual(await apis[mode].attempts(doc.metadata!.scrapeId!), [{ attempt: 2, pid: successor.child.pid }]);
    assert.equal(site.hits(path), 2);
    await stopChild(successor.child); // the next test needs to know which workers fetch
  });

  test(`${mode}: a SIGKILLed worker's scrape is retried elsewhere within seconds, not at the end of its timeout`, { timeout: 180_000 }, async () => {
    const doomed = await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-fetch' });
    const path = `/killed-${mode}`;
    const t0 = Date.now();
    const scraping = fcOf().scrape(site.url(path), { formats: ['markdown'], maxAge: 0, timeout: 60_000 });
    await until(() => site.hits(path) === 1, 'the scrape to reach the page', { timeoutMs: 90_000 });
    const successor = await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-fetch' });
    doomed.child.kill('SIGKILL');

    const doc = await scraping;
    assert.match(doc.markdown ?? '', /request 1/, 'answered by the retry');
    // Without heartbeats (workflow) or leases (direct) the attempt would only end at the 60 s timeout.
    const tookMs = Date.now() - t0;
    assert.ok(tookMs < 45_000, `answered ${tookMs} ms after the request`);
    assert.deepEqual(await apis[mode].attempts(doc.metadata!.scrapeId!), [{ attempt: 2, pid: successor.child.pid }]);
    const charges = await stack.db.pool.query(`SELECT count(*)::int AS n FROM credit_ledger WHERE job_id = $1 AND entry = 'charge'`, [doc.metadata!.scrapeId]);
    assert.equal(charges.rows[0].n, 1, 'billed once');
    await stopChild(successor.child);
  });
}
