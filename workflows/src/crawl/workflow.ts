import {
  ActivityCancellationType,
  CancellationScope,
  continueAsNew,
  isCancellation,
  proxyActivities,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { CrawlActivities, CrawlControlActivities, CrawlProgress, CrawlWorkflowInput, CrawlWorkflowResult, ProcessBatchResult } from './contracts';
import { NON_RETRYABLE_KINDS, TaskQueues } from '../common';

/** Batches per run before continuing as new even if the server has not suggested it yet (plan.batchesPerRun overrides). */
const MAX_BATCHES_PER_RUN = 1_000;
/** Consecutive batch activities that fail for good before the whole job is declared failed. */
const MAX_CONSECUTIVE_BATCH_FAILURES = 5;

/**
 * A crawl or batch scrape. The frontier lives in Postgres; this workflow only keeps a bounded
 * window of batch activities busy until the frontier is empty, then ends the job. It carries
 * nothing but counters across continue-as-new, and drains its activities before doing so.
 */
export async function crawlWorkflow(input: CrawlWorkflowInput): Promise<CrawlWorkflowResult> {
  const { jobId, plan } = input;
  const progress: CrawlProgress = input.progress ?? { seeded: false, batches: 0, runs: 0 };
  const fetchActs = proxyActivities<CrawlActivities>({
    taskQueue: TaskQueues.fetch,
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '10s',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 8, nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] },
  });
  const control = proxyActivities<CrawlControlActivities>({
    taskQueue: TaskQueues.control,
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '500ms', maximumInterval: '10s', maximumAttempts: 20 },
  });

  try {
    if (!progress.seeded) {
      await fetchActs.seedJob({ jobId });
      progress.seeded = true;
    }
    if ((await runWindow()) === 'done') {
      const { status } = await control.finishJob({ jobId, outcome: 'completed' });
      return { status, batches: progress.batches };
    }
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => control.finishJob({ jobId, outcome: 'cancelled' }));
      throw err;
    }
    const message = err instanceof Error ? err.message : String(err);
    await CancellationScope.nonCancellable(() => control.finishJob({ jobId, outcome: 'failed', error: message }));
    throw err;
  }
  // Outside the try: continueAsNew works by throwing, and that must not end the job as failed.
  return await continueAsNew<typeof crawlWorkflow>({ ...input, progress: { ...progress, runs: progress.runs + 1 } });

  /** Runs batches until the frontier is empty ('done') or this run should hand over ('continue'). */
  async function runWindow(): Promise<'done' | 'continue'> {
    const inFlight = new Map<number, Promise<{ id: number; result: ProcessBatchResult | null }>>();
    let nextId = 0;
    let exhausted = false; // the last batch found nothing to claim
    let failures = 0;
    let batchesThisRun = 0;

    const launch = () => {
      const id = nextId++;
      batchesThisRun++;
      const p = fetchActs
        .processBatch({ jobId, batchSize: plan.batchSize, concurrency: plan.concurrency, delayMs: plan.delayMs })
        .then(
          (result) => ({ id, result }),
          (err) => {
            if (isCancellation(err)) throw err;
            return { id, result: null }; // a batch that failed for good: its URLs come back when their lease ends
          },
        );
      inFlight.set(id, p);
    };

    for (;;) {
      const handOver = workflowInfo().continueAsNewSuggested || batchesThisRun >= (plan.batchesPerRun ?? MAX_BATCHES_PER_RUN);
      while (!handOver && !exhausted && inFlight.size < plan.window) launch();

      if (inFlight.size === 0) {
        // Asked before handing over too, or a finished job would continue as new forever.
        const f = await control.frontierState({ jobId });
        if (f.status !== 'scraping') return 'done';
        if (f.queued === 0 && f.leased === 0) return 'done';
        if (handOver) return 'continue';
        // Only leases of vanished workers remain: wait for the first to expire, then retake it.
        if (f.queued === 0) await sleep(Math.min(Math.max(f.nextLeaseExpiryMs ?? 1_000, 250), 30_000));
        exhausted = false;
        continue;
      }

      const { id, result } = await Promise.race(inFlight.values());
      inFlight.delete(id);
      progress.batches++;
      if (!result) {
        if (++failures >= MAX_CONSECUTIVE_BATCH_FAILURES) throw new Error(`${failures} batches in a row failed`);
        continue;
      }
      failures = 0;
      if (result.stopped) {
        exhausted = true; // cancelled or ended elsewhere: let in-flight batches finish, then check
        continue;
      }
      // A batch that claimed nothing means the frontier is (momentarily) empty; batches still in
      // flight may add links, and their completion re-opens the window.
      exhausted = result.claimed === 0;
    }
  }
}
