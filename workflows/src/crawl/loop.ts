import { CancellationScope, isCancellation, sleep, workflowInfo } from '@temporalio/workflow';
import type { JobRef } from '../common';
import type { CrawlPlan, CrawlProgress, FinishJobInput, FrontierState, ProcessBatchInput, ProcessBatchResult } from './contracts';

/** Batches per run before continuing as new even if the server has not suggested it yet (plan.batchesPerRun overrides). */
const MAX_BATCHES_PER_RUN = 1_000;
/** Consecutive batch activities that fail for good before the whole job is declared failed. */
const MAX_CONSECUTIVE_BATCH_FAILURES = 5;

/**
 * The steps a frontier job is made of. Each is an activity stub of the calling workflow, so a job
 * kind brings its own page handler (what `runBatch` does with each page: scrape and store it,
 * extract from it, compare it with the last check) and reuses the loop around it.
 */
export interface FrontierSteps {
  /** Fills the frontier once (start URL, sitemap, a batch's URL list); skipped after the first run. */
  seed?(input: JobRef): Promise<unknown>;
  /** Leases up to `batchSize` URLs, handles each page, and returns counts only. */
  runBatch(input: ProcessBatchInput): Promise<ProcessBatchResult>;
  frontierState(input: JobRef): Promise<FrontierState>;
  finishJob(input: FinishJobInput): Promise<{ status: string }>;
}

export interface FrontierJob {
  jobId: string;
  plan: CrawlPlan;
  /** Carried across continue-as-new; updated in place. */
  progress: CrawlProgress;
}

export type FrontierOutcome = { done: true; status: string } | { done: false };

/**
 * Runs a frontier job until the frontier is empty (the job is finished: `done`) or this run
 * should hand over to a new one (`done: false`: the caller continues as new with `progress`;
 * continueAsNew works by throwing, so it must not happen in here, where a throw ends the job as
 * failed). Cancellation marks the job cancelled and is rethrown; any other failure marks it
 * failed and is rethrown.
 */
export async function runFrontierJob(job: FrontierJob, steps: FrontierSteps): Promise<FrontierOutcome> {
  const { jobId } = job;
  try {
    if (!job.progress.seeded) {
      await steps.seed?.({ jobId });
      job.progress.seeded = true;
    }
    if ((await runWindow(job, steps)) === 'continue') return { done: false };
    const { status } = await steps.finishJob({ jobId, outcome: 'completed' });
    return { done: true, status };
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => steps.finishJob({ jobId, outcome: 'cancelled' }));
      throw err;
    }
    const message = err instanceof Error ? err.message : String(err);
    await CancellationScope.nonCancellable(() => steps.finishJob({ jobId, outcome: 'failed', error: message }));
    throw err;
  }
}

/**
 * Keeps a bounded window of batch activities busy until the frontier is empty ('done') or this
 * run has started enough batches ('continue'). Drains its activities before either answer.
 */
async function runWindow({ jobId, plan, progress }: FrontierJob, steps: FrontierSteps): Promise<'done' | 'continue'> {
  const inFlight = new Map<number, Promise<{ id: number; result: ProcessBatchResult | null }>>();
  let nextId = 0;
  let exhausted = false; // the last batch found nothing to claim
  let failures = 0;
  let batchesThisRun = 0;

  const launch = () => {
    const id = nextId++;
    batchesThisRun++;
    const p = steps.runBatch({ jobId, batchSize: plan.batchSize, concurrency: plan.concurrency, delayMs: plan.delayMs }).then(
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
      const f = await steps.frontierState({ jobId });
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
