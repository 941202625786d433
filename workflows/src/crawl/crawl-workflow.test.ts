import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { until } from '@wds/test-utils';
import { nonRetryable, startFakeWorkers, untilCancelled, type FakeWorkers } from '@wds/test-utils/workflow-env';
import { TaskQueues, workflowIds } from '../common';
import type { CrawlPlan, FinishJobInput, FrontierState, ProcessBatchInput, ProcessBatchResult } from './contracts';

// The crawl workflow and its frontier loop (./loop.ts) against fake activities: which steps it
// calls, with what, and how it ends — the frontier itself is the fakes' counters.
const ACTIVITIES = ['seedJob', 'processBatch', 'runLlmBatch', 'renderCrawlPage', 'frontierState', 'finishJob'];
let w: FakeWorkers;
before(async () => void (w = await startFakeWorkers(import.meta.url, ACTIVITIES)));
after(async () => await w?.stop());

const plan: CrawlPlan = { window: 2, batchSize: 2, concurrency: 4, delayMs: 0 };
const empty: FrontierState = { queued: 0, leased: 0, nextLeaseExpiryMs: null, status: 'scraping' };
const batch = (claimed: number, extra: Partial<ProcessBatchResult> = {}): ProcessBatchResult => ({ claimed, succeeded: claimed, failed: 0, stopped: false, ...extra });

/** A frontier of `pages` URLs that batches claim from until it is empty. */
function frontier(pages: number) {
  let left = pages;
  return {
    processBatch: async (i: ProcessBatchInput) => {
      const n = Math.min(i.batchSize, left);
      left -= n;
      return batch(n);
    },
    frontierState: async () => ({ ...empty, queued: left }),
  };
}

async function start(jobId: string, p: CrawlPlan = plan) {
  return await w.client.workflow.start('crawlWorkflow', { taskQueue: TaskQueues.control, workflowId: workflowIds.crawl(jobId), args: [{ jobId, kind: 'crawl', plan: p }] });
}

test('crawl: seeds once, runs batches until the frontier is empty, then finishes the job as completed', async () => {
  const jobId = randomUUID();
  w.use({ seedJob: async () => 1, ...frontier(5), finishJob: async () => ({ status: 'completed' }) });
  const result = await (await start(jobId)).result();

  const batches = w.calls.filter((c) => c.name === 'processBatch');
  assert.deepEqual(w.calls[0]!.input, { jobId });
  assert.equal(w.calls[0]!.name, 'seedJob');
  for (const b of batches) assert.deepEqual(b.input, { jobId, batchSize: 2, concurrency: 4, delayMs: 0 });
  // 5 pages in batches of 2: three batches claim them, and at least one finds the frontier empty.
  assert.ok(batches.length >= 4 && batches.length <= 5, `batches: ${batches.length}`);
  assert.deepEqual(w.names().slice(-2), ['frontierState', 'finishJob']);
  assert.deepEqual(w.calls.at(-1)!.input, { jobId, outcome: 'completed' } satisfies FinishJobInput);
  assert.deepEqual(result, { status: 'completed', batches: batches.length });
  assert.equal(w.names('runLlmBatch', 'renderCrawlPage').length, 0, 'no model or browser work was reported');
});

test('crawl: pages handed to the model and the browser get their own windows before the job finishes', async () => {
  const jobId = randomUUID();
  let fetched = false;
  let llmPending = 2;
  let browserPending = 1;
  w.use({
    seedJob: async () => 1,
    processBatch: async () => {
      if (fetched) return batch(0);
      fetched = true;
      return batch(2, { llmQueued: 2, browserQueued: 1 });
    },
    runLlmBatch: async () => {
      const claimed = Math.min(1, llmPending);
      llmPending -= claimed;
      return { claimed, stored: claimed, failed: 0, deferred: 0, drained: llmPending === 0, stopped: false };
    },
    renderCrawlPage: async () => {
      browserPending = 0;
      return batch(1);
    },
    frontierState: async () => ({
      ...empty,
      ...(llmPending ? { llm: { pending: llmPending, ready: llmPending, nextReadyMs: null } } : {}),
      ...(browserPending ? { browser: { pending: browserPending, ready: browserPending, nextReadyMs: null } } : {}),
    }),
    finishJob: async () => ({ status: 'completed' }),
  });
  const result = await (await start(jobId, { ...plan, llm: { window: 1, batchSize: 1 }, browser: { window: 1 } })).result();

  assert.equal(result.status, 'completed');
  assert.equal(llmPending, 0, 'both model pages were enriched');
  assert.equal(browserPending, 0, 'the browser page was rendered');
  for (const c of w.calls.filter((x) => x.name === 'runLlmBatch')) assert.deepEqual(c.input, { jobId, batchSize: 1 });
  assert.deepEqual(w.calls.find((c) => c.name === 'renderCrawlPage')!.input, { jobId, delayMs: 0 });
  assert.equal(w.calls.at(-1)!.name, 'finishJob');
  assert.deepEqual(w.calls.at(-1)!.input, { jobId, outcome: 'completed' });
});

test('crawl: continues as new after batchesPerRun, carrying only counters, and seeds only once', async () => {
  const jobId = randomUUID();
  w.use({ seedJob: async () => 1, ...frontier(10), finishJob: async () => ({ status: 'completed' }) });
  const result = await (await start(jobId, { ...plan, window: 1, batchesPerRun: 2 })).result();

  const runsOf = (name: string) => [...new Set(w.calls.filter((c) => c.name === name).map((c) => c.runId))];
  // 10 pages, 2 a batch, 2 batches a run: runs 1 and 2 claim 4 each and hand over on a non-empty
  // frontier; run 3 claims the last 2, finds nothing more, and finishes.
  assert.equal(runsOf('processBatch').length, 3);
  assert.equal(runsOf('seedJob').length, 1, 'seeded by the first run only');
  assert.deepEqual(w.names('seedJob', 'finishJob'), ['seedJob', 'finishJob']);
  assert.deepEqual(runsOf('finishJob'), [runsOf('processBatch')[2]], 'the last run finishes the job');
  assert.deepEqual(result, { status: 'completed', batches: w.names('processBatch').length }, 'batch counts carried across runs');
});

test('crawl: a cancelled workflow stops its batches, then marks the job cancelled out of the cancelled scope', async () => {
  const jobId = randomUUID();
  w.use({ seedJob: async () => 1, processBatch: untilCancelled, frontierState: async () => ({ ...empty, queued: 1 }), finishJob: async () => ({ status: 'cancelled' }) });
  const handle = await start(jobId);
  await until(() => w.names('processBatch').length === 2, 'the window of two batches', { timeoutMs: 10_000 });
  await handle.cancel();
  const err = await handle.result().then(() => assert.fail('a cancelled crawl must not complete'), (e: unknown) => e);

  assert.ok(err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure, String(err));
  assert.deepEqual(w.names(), ['seedJob', 'processBatch', 'processBatch', 'finishJob']);
  assert.deepEqual(w.calls.at(-1)!.input, { jobId, outcome: 'cancelled' });
});

/** Five consecutive non-retryable batch failures (window 1: exactly five batches). */
async function failingBatches() {
  const jobId = randomUUID();
  w.use({
    seedJob: async () => 1,
    processBatch: async () => {
      throw nonRetryable('FORBIDDEN', 'Forbidden: the target refused');
    },
    frontierState: async () => ({ ...empty, queued: 1 }),
    finishJob: async () => ({ status: 'failed' }),
  });
  const handle = await start(jobId, { ...plan, window: 1 });
  await until(() => w.names('finishJob').length === 1, 'the job marked failed', { timeoutMs: 20_000 });
  return { jobId, handle };
}

test('crawl: batches that keep failing for good fail the job after five in a row, recorded by finishJob', async () => {
  const { jobId, handle } = await failingBatches();
  try {
    assert.deepEqual(w.names(), ['seedJob', ...Array(5).fill('processBatch'), 'finishJob']);
    assert.deepEqual(w.calls.at(-1)!.input, { jobId, outcome: 'failed', error: '5 batches in a row failed' });
  } finally {
    await handle.terminate('test over').catch(() => {});
  }
});

// A plain Error thrown by workflow code would fail the workflow *task*, which Temporal retries forever (the
// workflow stayed Running after its job row said failed until loop.ts threw a non-retryable ApplicationFailure).
test('crawl: after five failed batches the workflow itself ends failed', async () => {
  const { handle } = await failingBatches();
  try {
    const ended = await Promise.race([handle.result().then(() => 'completed', (e: unknown) => e), new Promise((r) => setTimeout(() => r('still running'), 10_000))]);
    assert.ok(ended instanceof WorkflowFailedError, `the workflow ended failed, not: ${String(ended)}`);
    assert.match(String((ended.cause as Error | undefined)?.message), /5 batches in a row failed/);
  } finally {
    await handle.terminate('test over').catch(() => {});
  }
});

test('crawl: a seed step that fails non-retryably fails the job at once, without retries', async () => {
  const jobId = randomUUID();
  w.use({
    seedJob: async () => {
      throw nonRetryable('URL_BLOCKED', 'This website is no longer supported', 'URL_BLOCKED');
    },
    finishJob: async () => ({ status: 'failed' }),
  });
  const err = await (await start(jobId)).result().then(() => assert.fail('the crawl must fail'), (e: unknown) => e);

  assert.ok(err instanceof WorkflowFailedError, String(err));
  assert.deepEqual(w.names(), ['seedJob', 'finishJob'], 'one attempt of the seed step, then the failure is recorded');
  const finish = w.calls[1]!.input as FinishJobInput;
  assert.equal(finish.outcome, 'failed');
  assert.equal(typeof finish.error, 'string');
});
