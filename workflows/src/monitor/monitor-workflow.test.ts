import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { CancelledFailure, defaultPayloadConverter, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { until } from '@wds/test-utils';
import { endedWithin, nonRetryable, startFakeWorkers, untilCancelled, type FakeWorkers } from '@wds/test-utils/workflow-env';
import { TaskQueues, workflowIds } from '../common';
import type { CrawlPlan, FinishJobInput, FrontierState, ProcessBatchResult } from '../crawl/contracts';
import type { ClaimDueInput, ClaimDueResult, MonitorRunInput, MonitorTargetTask, MonitorTickInput, TargetRef } from './contracts';

// The monitor tick and run workflows (./workflow.ts) against fake activities: how a tick claims
// and starts runs, and how a run's targets and pages go through the frontier loop.
const ACTIVITIES = [
  'claimDueMonitors', 'monitorRunState', 'finishMonitorRun', 'pruneMonitorChecks', 'startMonitorTargets',
  'checkMonitorPages', 'collectCrawlTarget', 'runSearchTarget', 'checkMonitorModelPages',
  // a crawl target's child crawl workflow
  'seedJob', 'processBatch', 'frontierState', 'finishJob',
];
let w: FakeWorkers;
before(async () => void (w = await startFakeWorkers(import.meta.url, ACTIVITIES)));
after(async () => await w?.stop());

const plan: CrawlPlan = { window: 4, batchSize: 100, concurrency: 50, delayMs: 0 };
const empty: FrontierState = { queued: 0, leased: 0, nextLeaseExpiryMs: null, status: 'scraping' };
const batch = (claimed: number): ProcessBatchResult => ({ claimed, succeeded: claimed, failed: 0, stopped: false });
const claim = (r: Partial<ClaimDueResult>): ClaimDueResult => ({ checks: 0, pages: 0, skipped: 0, more: false, ...r });

/** A run's pages: batches claim them until none is left; the run then finishes completed. */
function runPages(pages: number) {
  let left = pages;
  return {
    checkMonitorPages: async () => {
      const n = Math.min(100, left);
      left -= n;
      return batch(n);
    },
    monitorRunState: async () => ({ ...empty, queued: left }),
    finishMonitorRun: async (i: FinishJobInput) => ({ status: i.outcome }),
  };
}

/** The input a workflow was started with, read from its history. */
async function startInput<T>(h: WorkflowHandle): Promise<T> {
  const history = await h.fetchHistory();
  const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
  return defaultPayloadConverter.fromPayload(payload as never) as T;
}

const tickInput = (shard: number, extra: Partial<MonitorTickInput> = {}): MonitorTickInput => ({ shard, shards: 2, maxChecksPerRun: 50, catchupWindowMs: 60_000, plan, tickMs: 60_000, ...extra });
async function tick(input: MonitorTickInput) {
  return await w.client.workflow.execute('monitorTickWorkflow', { taskQueue: TaskQueues.control, workflowId: `monitor-tick-test-${randomUUID()}`, args: [input] });
}
const runHandle = (runId: string) => w.client.workflow.getHandle(workflowIds.monitorRun(runId));

test('monitor tick: claims until no more is due, starts one run per claim with checks (its window sized to its pages), and counts skips', async () => {
  const answers = [claim({ checks: 3, pages: 150, skipped: 1, more: true }), claim({ checks: 0, skipped: 2, more: true }), claim({ checks: 1, pages: 1, more: false })];
  w.use({ claimDueMonitors: async () => answers.shift()!, ...runPages(0) });
  const result = await tick(tickInput(1));

  assert.deepEqual(result, { runs: 2, checks: 4, skipped: 3 });
  const claims = w.calls.filter((c) => c.name === 'claimDueMonitors').map((c) => c.input as ClaimDueInput);
  assert.equal(claims.length, 3);
  for (const c of claims) assert.deepEqual({ ...c, runId: '' }, { runId: '', shard: 1, shards: 2, limit: 50, catchupWindowMs: 60_000 });
  assert.equal(new Set(claims.map((c) => c.runId)).size, 3, 'each claim names a new run');
  // 150 pages in batches of 100: two batches are all a window needs; one page needs one.
  const first = await startInput<MonitorRunInput>(runHandle(claims[0]!.runId));
  assert.deepEqual(first, { runId: claims[0]!.runId, plan: { ...plan, window: 2 } });
  assert.equal((await startInput<MonitorRunInput>(runHandle(claims[2]!.runId))).plan.window, 1);
  await assert.rejects(runHandle(claims[1]!.runId).describe(), 'a claim of no checks starts no run');
  for (const c of [claims[0]!, claims[2]!]) assert.deepEqual(await runHandle(c.runId).result(), { status: 'completed' });
  assert.deepEqual(w.names('pruneMonitorChecks'), [], 'shard 1 never prunes');
});

test('monitor tick: starts at most 20 runs however many monitors are due', async () => {
  w.use({ claimDueMonitors: async () => claim({ checks: 1, pages: 1, more: true }), ...runPages(0) });
  const result = await tick(tickInput(1));

  assert.deepEqual(result, { runs: 20, checks: 20, skipped: 0 });
  assert.equal(w.names('claimDueMonitors').length, 20);
  for (const c of w.calls.filter((x) => x.name === 'claimDueMonitors')) await runHandle((c.input as ClaimDueInput).runId).result();
});

test('monitor tick: a check with targets gets a run of its own, marked to run its targets first', async () => {
  const own = randomUUID();
  w.use({ claimDueMonitors: async () => claim({ targetRuns: [{ runId: own, pages: 0 }] }), startMonitorTargets: async () => [], ...runPages(0) });
  const result = await tick(tickInput(1));

  assert.deepEqual(result, { runs: 1, checks: 1, skipped: 0 });
  assert.deepEqual(await startInput<MonitorRunInput>(runHandle(own)), { runId: own, plan: { ...plan, window: 1 }, targets: true });
  assert.deepEqual(await runHandle(own).result(), { status: 'completed' });
  assert.deepEqual(
    w.calls.filter((c) => c.name === 'startMonitorTargets').map((c) => c.input),
    [{ jobId: own }],
  );
});

test('monitor tick: shard 0 prunes old checks on the hourly tick', async () => {
  w.use({ claimDueMonitors: async () => claim({}), pruneMonitorChecks: async () => ({ deleted: 0 }) });
  // An hourly schedule: every tick is the hour's.
  await tick(tickInput(0, { tickMs: 3_600_000 }));
  assert.deepEqual(
    w.calls.filter((c) => c.name === 'pruneMonitorChecks').map((c) => c.input),
    [{ limit: 5_000 }],
  );
  await tick(tickInput(1, { tickMs: 3_600_000 }));
  assert.equal(w.names('pruneMonitorChecks').length, 1, 'only shard 0');
});

async function startRun(runId: string, extra: Partial<MonitorRunInput> = {}) {
  return await w.client.workflow.start('monitorRunWorkflow', { taskQueue: TaskQueues.control, workflowId: workflowIds.monitorRun(runId), args: [{ runId, plan, ...extra }] });
}

test('monitor run: a crawl target runs its crawl as a child workflow before it is collected, a search target its queries, then the pages are checked', async () => {
  const runId = randomUUID();
  const crawlJob = randomUUID();
  const crawlPlan: CrawlPlan = { window: 1, batchSize: 5, concurrency: 2, delayMs: 0 };
  const targets: MonitorTargetTask[] = [
    { checkId: 'k1', targetId: 't-crawl', type: 'crawl', crawl: { jobId: crawlJob, plan: crawlPlan } },
    { checkId: 'k1', targetId: 't-search', type: 'search' },
  ];
  let crawlEnded = false;
  w.use({
    startMonitorTargets: async () => targets,
    seedJob: async () => 1,
    processBatch: async () => batch(0),
    frontierState: async () => empty,
    finishJob: async () => {
      crawlEnded = true;
      return { status: 'completed' };
    },
    collectCrawlTarget: async () => {
      assert.ok(crawlEnded, 'collected only after its crawl ended');
      return { pages: 2, hidden: 0 };
    },
    runSearchTarget: async () => ({ results: 1, toJudge: 0 }),
    ...runPages(3),
  });
  const result = await (await startRun(runId, { targets: true })).result();

  assert.deepEqual(result, { status: 'completed' });
  assert.deepEqual(w.calls.find((c) => c.name === 'seedJob')!.input, { jobId: crawlJob });
  assert.deepEqual(w.calls.find((c) => c.name === 'processBatch')!.input, { jobId: crawlJob, batchSize: 5, concurrency: 2, delayMs: 0 }, 'the crawl runs on its own plan');
  assert.deepEqual(w.calls.find((c) => c.name === 'collectCrawlTarget')!.input, { runId, checkId: 'k1', targetId: 't-crawl' } satisfies TargetRef);
  assert.deepEqual(w.calls.find((c) => c.name === 'runSearchTarget')!.input, { runId, checkId: 'k1', targetId: 't-search' } satisfies TargetRef);
  const names = w.names();
  assert.ok(names.indexOf('checkMonitorPages') > names.indexOf('collectCrawlTarget'), 'pages are checked after the targets ran');
  assert.deepEqual(w.calls.at(-1)!.input, { jobId: runId, outcome: 'completed' });
});

test('monitor run: a crawl target whose crawl fails is still collected, and the run completes', async () => {
  const runId = randomUUID();
  const crawlJob = randomUUID();
  w.use({
    startMonitorTargets: async () => [{ checkId: 'k1', targetId: 't1', type: 'crawl', crawl: { jobId: crawlJob, plan } }],
    seedJob: async () => {
      throw nonRetryable('URL_BLOCKED', 'This website is no longer supported', 'URL_BLOCKED');
    },
    finishJob: async () => ({ status: 'failed' }),
    collectCrawlTarget: async () => ({ pages: 0, hidden: 1 }),
    ...runPages(1),
  });
  const result = await (await startRun(runId, { targets: true })).result();

  assert.deepEqual(result, { status: 'completed' });
  assert.deepEqual(w.names('seedJob', 'finishJob', 'collectCrawlTarget'), ['seedJob', 'finishJob', 'collectCrawlTarget']);
  assert.equal((await w.client.workflow.getHandle(workflowIds.crawl(crawlJob)).describe()).status.name, 'FAILED');
});

test('monitor run: continues as new after batchesPerRun, running its targets only in the first run', async () => {
  const runId = randomUUID();
  w.use({ startMonitorTargets: async () => [], ...runPages(350) });
  const result = await (await startRun(runId, { targets: true, plan: { ...plan, window: 1, batchesPerRun: 2 } })).result();

  assert.deepEqual(result, { status: 'completed' });
  const runs = [...new Set(w.calls.filter((c) => c.name === 'checkMonitorPages').map((c) => c.runId))];
  // 350 pages, 100 a batch, two batches a run: the second run claims the last 150 and then finds none.
  assert.equal(runs.length, 2);
  assert.equal(w.names('startMonitorTargets').length, 1);
  assert.deepEqual(
    w.calls.filter((c) => c.name === 'finishMonitorRun').map((c) => c.runId),
    [runs[1]],
  );
});

test('monitor run: five failed page batches in a row fail the run and end its workflow failed', async () => {
  const runId = randomUUID();
  w.use({
    ...runPages(1),
    checkMonitorPages: async () => {
      throw nonRetryable('FORBIDDEN', 'Forbidden');
    },
  });
  const handle = await startRun(runId, { plan: { ...plan, window: 1 } });
  const ended = await endedWithin(handle, 15_000);
  await handle.terminate('test over').catch(() => {});

  assert.ok(ended instanceof WorkflowFailedError, `ended: ${String(ended)}`);
  assert.equal(w.names('checkMonitorPages').length, 5);
  assert.deepEqual(w.calls.filter((c) => c.name === 'finishMonitorRun').map((c) => c.input), [{ jobId: runId, outcome: 'failed', error: '5 batches in a row failed' }]);
});

test('monitor run: a cancelled run stops its batches and ends the run cancelled', async () => {
  const runId = randomUUID();
  w.use({ ...runPages(1), checkMonitorPages: untilCancelled });
  const handle = await startRun(runId, { plan: { ...plan, window: 1 } });
  await until(() => w.names('checkMonitorPages').length === 1, 'a page batch running', { timeoutMs: 10_000 });
  await handle.cancel();
  const err = await handle.result().then(() => assert.fail('a cancelled run must not complete'), (e: unknown) => e);

  assert.ok(err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure, String(err));
  assert.deepEqual(w.names(), ['checkMonitorPages', 'finishMonitorRun']);
  assert.deepEqual(w.calls.at(-1)!.input, { jobId: runId, outcome: 'cancelled' });
});
