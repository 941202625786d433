import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { until } from '@wds/test-utils';
import { endedWithin, nonRetryable, startFakeWorkers, untilCancelled, type FakeWorkers } from '@wds/test-utils/workflow-env';
import { TaskQueues, workflowIds } from '../common';
import type { CrawlPlan, FrontierState, ProcessBatchInput, ProcessBatchResult } from '../crawl/contracts';
import type { EndExtractInput, EndScrapePhaseInput, ExtractPageInput, ExtractPageResult } from './contracts';

// The extract workflow (./workflow.ts) against fake activities: the fetch phase (the frontier
// loop), the model's page steps in a bounded window, the merge, and how a failure or a
// cancellation ends the job.
const ACTIVITIES = ['expandExtractUrls', 'fetchExtractBatch', 'frontierState', 'endExtractScrape', 'extractPagesToDo', 'endExtract', 'extractPage', 'mergeExtract'];
let w: FakeWorkers;
before(async () => void (w = await startFakeWorkers(import.meta.url, ACTIVITIES)));
after(async () => await w?.stop());

const plan: CrawlPlan = { window: 2, batchSize: 10, concurrency: 4, delayMs: 0 };
const empty: FrontierState = { queued: 0, leased: 0, nextLeaseExpiryMs: null, status: 'scraping' };
const batch = (claimed: number): ProcessBatchResult => ({ claimed, succeeded: claimed, failed: 0, stopped: false });
const seqs = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** A fetch phase over `pages` URLs that ends completed, then `todo` page documents for the model. */
function extractJob(pages: number, todo: number[]) {
  let left = pages;
  return {
    expandExtractUrls: async () => pages,
    fetchExtractBatch: async (i: ProcessBatchInput) => {
      const n = Math.min(i.batchSize, left);
      left -= n;
      return batch(n);
    },
    frontierState: async () => ({ ...empty, queued: left }),
    endExtractScrape: async (i: EndScrapePhaseInput) => ({ status: i.outcome }),
    extractPagesToDo: async () => todo,
    extractPage: async (): Promise<ExtractPageResult> => ({ status: 'extracted' }),
    mergeExtract: async () => ({ status: 'completed' }),
    endExtract: async () => undefined,
  };
}

async function start(jobId: string, opts: { p?: CrawlPlan; deadlineMs?: number } = {}) {
  return await w.client.workflow.start('extractWorkflow', {
    taskQueue: TaskQueues.control,
    workflowId: workflowIds.extract(jobId),
    args: [{ jobId, plan: opts.p ?? plan, deadlineMs: opts.deadlineMs ?? Date.now() + 120_000 }],
  });
}
const inputsOf = <T>(name: string) => w.calls.filter((c) => c.name === name).map((c) => c.input as T);

test('extract: fetches the pages through the frontier, hands each page document to the model, then merges', async () => {
  const jobId = randomUUID();
  const deadlineMs = Date.now() + 120_000;
  w.use(extractJob(3, [4, 7, 9]));
  const result = await (await start(jobId, { deadlineMs })).result();

  assert.deepEqual(result, { status: 'completed', pages: 3 });
  assert.deepEqual(inputsOf('expandExtractUrls'), [{ jobId }]);
  assert.deepEqual(inputsOf('endExtractScrape'), [{ jobId, outcome: 'completed' }]);
  assert.deepEqual(
    inputsOf<ExtractPageInput>('extractPage').sort((a, b) => a.docSeq - b.docSeq),
    [4, 7, 9].map((docSeq) => ({ jobId, docSeq, deadlineMs })),
  );
  assert.deepEqual(w.calls.at(-1)!, { name: 'mergeExtract', input: { jobId, deadlineMs }, runId: w.calls.at(-1)!.runId });
  const names = w.names();
  assert.ok(names.lastIndexOf('fetchExtractBatch') < names.indexOf('extractPagesToDo'), 'the model steps start after the fetch phase');
  assert.deepEqual(w.names('endExtract'), [], 'a job that completes is not ended by the workflow');
});

test('extract: at most 8 page steps run at once', async () => {
  const jobId = randomUUID();
  let running = 0;
  let most = 0;
  w.use({
    ...extractJob(1, seqs(20)),
    extractPage: async () => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 100));
      running--;
      return { status: 'extracted' };
    },
  });
  const result = await (await start(jobId)).result();

  assert.deepEqual(result, { status: 'completed', pages: 20 });
  assert.equal(most, 8);
});

test('extract: once a page step reports the credits used up, no further page step starts; the merge still runs', async () => {
  const jobId = randomUUID();
  w.use({
    ...extractJob(1, seqs(20)),
    extractPage: async (i: ExtractPageInput) => {
      if (i.docSeq === 1) return { status: 'skipped', outOfCredits: true };
      await new Promise((r) => setTimeout(r, 300));
      return { status: 'extracted' };
    },
  });
  const result = await (await start(jobId)).result();

  // The first window (8) was started before the answer came; none after it.
  assert.deepEqual(result, { status: 'completed', pages: 8 });
  assert.equal(w.names('extractPage').length, 8);
  assert.equal(w.names('mergeExtract').length, 1);
});

test('extract: past the deadline no page step starts, and the merge answers with what there is', async () => {
  const jobId = randomUUID();
  w.use(extractJob(1, seqs(5)));
  const result = await (await start(jobId, { deadlineMs: Date.now() - 1 })).result();

  assert.deepEqual(result, { status: 'completed', pages: 0 });
  assert.deepEqual(w.names('extractPage'), []);
  assert.equal(w.names('mergeExtract').length, 1);
});

test('extract: a page step that fails for good leaves its page out; the others and the merge go on', async () => {
  const jobId = randomUUID();
  w.use({
    ...extractJob(1, [1, 2, 3]),
    extractPage: async (i: ExtractPageInput) => {
      if (i.docSeq === 2) throw nonRetryable('UNPROCESSABLE', 'the model could not read the page');
      return { status: 'extracted' };
    },
  });
  const result = await (await start(jobId)).result();

  assert.deepEqual(result, { status: 'completed', pages: 3 });
  assert.equal(w.names('extractPage').length, 3, 'the failed step was tried once');
  assert.deepEqual(w.names('endExtract'), []);
});

test('extract: a fetch phase ended elsewhere (cancelled) hands nothing to the model', async () => {
  const jobId = randomUUID();
  w.use({ ...extractJob(2, [1]), endExtractScrape: async () => ({ status: 'cancelled' }) });
  const result = await (await start(jobId)).result();

  assert.deepEqual(result, { status: 'cancelled', pages: 0 });
  assert.deepEqual(w.names('extractPagesToDo', 'extractPage', 'mergeExtract'), []);
});

test('extract: the fetch phase continues as new after batchesPerRun; the URLs are expanded once and the model steps run in the last run', async () => {
  const jobId = randomUUID();
  w.use(extractJob(45, [1, 2]));
  const result = await (await start(jobId, { p: { ...plan, window: 1, batchesPerRun: 2 } })).result();

  assert.deepEqual(result, { status: 'completed', pages: 2 });
  const runsOf = (name: string) => [...new Set(w.calls.filter((c) => c.name === name).map((c) => c.runId))];
  // 45 URLs, 10 a batch, two batches a run: runs 1 and 2 claim 20 each, run 3 the last 5.
  assert.equal(runsOf('fetchExtractBatch').length, 3);
  assert.equal(w.names('expandExtractUrls').length, 1);
  assert.deepEqual(runsOf('extractPage'), [runsOf('fetchExtractBatch')[2]]);
});

test('extract: a merge that fails for good ends the job failed with its message and the workflow failed', async () => {
  const jobId = randomUUID();
  w.use({
    ...extractJob(1, [1]),
    mergeExtract: async () => {
      throw nonRetryable('UNPROCESSABLE', 'Unprocessable: the schema is invalid');
    },
  });
  const err = await (await start(jobId)).result().then(() => assert.fail('the extract must fail'), (e: unknown) => e);

  assert.ok(err instanceof WorkflowFailedError, String(err));
  assert.equal(w.names('mergeExtract').length, 1, 'not retried');
  assert.deepEqual(inputsOf<EndExtractInput>('endExtract'), [{ jobId, outcome: 'failed', error: 'Unprocessable: the schema is invalid' }]);
});

test('extract: five failed fetch batches end the fetch phase and the job failed, and the workflow ends failed', async () => {
  const jobId = randomUUID();
  w.use({
    ...extractJob(1, [1]),
    frontierState: async () => ({ ...empty, queued: 1 }),
    fetchExtractBatch: async () => {
      throw nonRetryable('FORBIDDEN', 'Forbidden');
    },
  });
  const handle = await start(jobId, { p: { ...plan, window: 1 } });
  const ended = await endedWithin(handle, 15_000);
  await handle.terminate('test over').catch(() => {});

  assert.ok(ended instanceof WorkflowFailedError, `ended: ${String(ended)}`);
  assert.equal(w.names('fetchExtractBatch').length, 5);
  assert.deepEqual(inputsOf('endExtractScrape'), [{ jobId, outcome: 'failed', error: '5 batches in a row failed' }]);
  assert.deepEqual(inputsOf('endExtract'), [{ jobId, outcome: 'failed', error: '5 batches in a row failed' }]);
  assert.deepEqual(w.names('extractPage', 'mergeExtract'), []);
});

test('extract: cancelling during the model steps ends the job cancelled, and the workflow ends cancelled', async () => {
  const jobId = randomUUID();
  w.use({ ...extractJob(1, [1, 2]), extractPage: untilCancelled });
  const handle = await start(jobId);
  await until(() => w.names('extractPage').length === 2, 'the page steps running', { timeoutMs: 10_000 });
  await handle.cancel();
  const err = await handle.result().then(() => assert.fail('a cancelled extract must not complete'), (e: unknown) => e);

  assert.ok(err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure, String(err));
  assert.deepEqual(inputsOf('endExtract'), [{ jobId, outcome: 'cancelled' }]);
  assert.deepEqual(w.names('mergeExtract'), []);
});
