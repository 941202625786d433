import { ActivityCancellationType, ApplicationFailure, CancellationScope, isCancellation, patched, sleep, TemporalFailure, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import { NON_RETRYABLE_KINDS, TaskQueues, type JobRef, type TaskQueue } from '../common';
import type { BrowserPageInput, BrowserPlan, CrawlPlan, CrawlProgress, FinishJobInput, FrontierState, LlmBatchInput, LlmBatchResult, LlmPlan, ProcessBatchInput, ProcessBatchResult } from './contracts';

/** Batches per run before continuing as new even if the server has not suggested it yet (plan.batchesPerRun overrides). */
const MAX_BATCHES_PER_RUN = 1_000;
/** Consecutive batch activities that fail for good before the whole job is declared failed. */
const MAX_CONSECUTIVE_BATCH_FAILURES = 5;
/** LLM window of a job whose plan has none (a job kind whose own handler stores pending LLM work). */
const DEFAULT_LLM_PLAN: LlmPlan = { window: 4, batchSize: 5 };
/** Browser window of a job whose plan has none (started before the browser window existed). */
const DEFAULT_BROWSER_PLAN: BrowserPlan = { window: 4 };
/**
 * The fetch window re-opens by need (runWindow): runs started before it existed replay without
 * it, re-opening the whole window on every render that added links and every batch that claimed.
 */
export const FETCH_BY_NEED_PATCH = 'crawl-fetch-window-by-need';

/**
 * The steps a frontier job is made of. Each is an activity stub of the calling workflow, so a job
 * kind brings its own page handler (what `runBatch` does with each page: scrape and store it,
 * extract from it, compare it with the last check) and reuses the loop around it.
 */
/**
 * Activity options of a frontier job's batch steps (fetch batches, LLM batches): long, heartbeating
 * (a dead worker's batch is leased again within seconds), and drained on cancellation so a
 * cancelled job never leaves a batch writing behind it.
 */
export function frontierBatchOptions(taskQueue: TaskQueue): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '10s',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 8, nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] },
  };
}

/** Activity options of a frontier job's short control steps (frontier state, finishing the job). */
export const frontierControlOptions: ActivityOptions = {
  taskQueue: TaskQueues.control,
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '500ms', maximumInterval: '10s', maximumAttempts: 20 },
};

export interface FrontierSteps {
  /** Fills the frontier once (start URL, sitemap, a batch's URL list); skipped after the first run. */
  seed?(input: JobRef): Promise<unknown>;
  /** Leases up to `batchSize` URLs, handles each page, and returns counts only. */
  runBatch(input: ProcessBatchInput): Promise<ProcessBatchResult>;
  /**
   * Enriches pages the page handler stored as pending LLM work (wds-llm). Without it, pending
   * LLM work is not waited for.
   */
  runLlmBatch?(input: LlmBatchInput): Promise<LlmBatchResult>;
  /**
   * Renders one page the page handler handed to the browser engine (wds-browser). Without it,
   * no page may be handed over.
   */
  runBrowserPage?(input: BrowserPageInput): Promise<ProcessBatchResult>;
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
 * Runs a frontier job until the frontier is empty and no page waits for its model step (the job
 * is finished: `done`) or this run should hand over to a new one (`done: false`: the caller
 * continues as new with `progress`; continueAsNew works by throwing, so it must not happen in
 * here, where a throw ends the job as failed). Cancellation marks the job cancelled and is
 * rethrown; any other failure marks it failed and ends the workflow failed.
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
    // A plain Error thrown by workflow code fails the workflow *task*, which Temporal retries forever: the
    // workflow would stay Running after its job ended. The job's own verdicts ("5 batches in a row failed")
    // end the workflow as failed instead; failures from activities already do.
    if (err instanceof TemporalFailure) throw err;
    throw ApplicationFailure.nonRetryable(message, 'FrontierJobFailed');
  }
}

type Settled =
  | { kind: 'fetch' | 'browser'; id: number; result: ProcessBatchResult | null }
  | { kind: 'llm'; id: number; result: LlmBatchResult | null }
  | { kind: 'wake'; error?: unknown };

/**
 * Keeps three bounded windows busy until the frontier is empty and no page waits for the browser
 * or the model ('done'), or this run has started enough activities ('continue'): fetch batches
 * (wds-fetch) over the frontier; browser pages (wds-browser, one page per activity) over the
 * pages the fetch batches handed to the browser engine; and — for jobs whose pages need
 * model-made formats — LLM batches (wds-llm) over the pages waiting for their model step. The
 * windows are independent: fetching goes on at full speed while renders queue for browser slots
 * or the model provider is slow, failing or rate-limited (the LLM window then pauses, with a
 * timer, for as long as the batches report). Drains every window before either answer.
 *
 * A job without browser or LLM work issues exactly the commands it did before those windows
 * existed (committed histories replay unchanged): they only act on counts activities report.
 * Runs since the fetch window re-opens by need record its patch marker first; older histories
 * replay without it, on the full re-openings.
 */
async function runWindow({ jobId, plan, progress }: FrontierJob, steps: FrontierSteps): Promise<'done' | 'continue'> {
  const inFlight = new Map<number, Promise<Settled>>();
  const llmInFlight = new Map<number, Promise<Settled>>();
  const browserInFlight = new Map<number, Promise<Settled>>();
  let nextId = 0;
  let exhausted = false; // the last batch found nothing to claim
  // By need: links a render added (`linksReported`) start one fetch batch once none is in flight
  // (one in flight claims what the renders add while its pages run), not a full window; and a
  // batch that handed all it claimed to the browser (or failed it) while claiming less than it
  // could added nothing to claim, so it re-opens nothing. On a script-rendered site the full
  // re-openings started fetch batches that found nothing: ~210 of ~325.
  const byNeed = patched(FETCH_BY_NEED_PATCH);
  let linksReported = false;
  let failures = 0;
  let batchesThisRun = 0;

  const llm = steps.runLlmBatch ? (plan.llm ?? DEFAULT_LLM_PLAN) : null;
  /** Pages known to wait for their model step (a hint: LLM batches claim what is really there). */
  let llmKnown = plan.llm && progress.runs > 0 ? plan.llm.window : 0; // a new run resumes a previous run's backlog
  let llmPausedUntil = 0;
  let llmFailures = 0;
  let llmStopped = false;
  let wake: Promise<Settled> | null = null;

  const browser = steps.runBrowserPage ? (plan.browser ?? DEFAULT_BROWSER_PLAN) : null;
  /** Pages known to wait for the browser (a hint, like llmKnown); a new run starts on what the last one left. */
  let browserKnown = progress.browserReady ?? 0;
  let browserFailures = 0;
  let browserStopped = false;

  const track = <R>(kind: Settled['kind'], into: Map<number, Promise<Settled>>, run: () => Promise<R>) => {
    const id = nextId++;
    batchesThisRun++;
    const p = run().then(
      (result) => ({ kind, id, result }) as Settled,
      (err): Settled => {
        if (isCancellation(err)) throw err;
        return { kind, id, result: null } as Settled; // failed for good: its leased pages come back when their lease ends
      },
    );
    into.set(id, p);
  };
  const launch = () => track('fetch', inFlight, () => steps.runBatch({ jobId, batchSize: plan.batchSize, concurrency: plan.concurrency, delayMs: plan.delayMs }));
  const launchLlm = (l: LlmPlan) => track('llm', llmInFlight, () => steps.runLlmBatch!({ jobId, batchSize: l.batchSize }));
  const launchBrowser = () => track('browser', browserInFlight, () => steps.runBrowserPage!({ jobId, delayMs: plan.delayMs }));

  for (;;) {
    const handOver = workflowInfo().continueAsNewSuggested || batchesThisRun >= (plan.batchesPerRun ?? MAX_BATCHES_PER_RUN);
    while (!handOver && (!exhausted || (linksReported && inFlight.size === 0)) && inFlight.size < plan.window) {
      launch();
      linksReported = false;
    }
    if (llm && !handOver && !llmStopped && Date.now() >= llmPausedUntil) {
      while (llmKnown > 0 && llmInFlight.size < llm.window) {
        launchLlm(llm);
        llmKnown--;
      }
    }
    if (browser && !handOver && !browserStopped) {
      while (browserKnown > 0 && browserInFlight.size < browser.window) {
        launchBrowser();
        browserKnown--;
      }
    }

    if (inFlight.size === 0 && llmInFlight.size === 0 && browserInFlight.size === 0) {
      // Asked before handing over too, or a finished job would continue as new forever.
      const f = await steps.frontierState({ jobId });
      if (f.status !== 'scraping') return 'done';
      const backlog = llm ? f.llm : undefined;
      const rendering = browser ? f.browser : undefined;
      if (f.queued === 0 && f.leased === 0 && !backlog?.pending && !rendering?.pending) return 'done';
      if (handOver) {
        if (rendering?.ready) progress.browserReady = rendering.ready;
        else delete progress.browserReady;
        return 'continue';
      }
      if (backlog?.ready) llmKnown = Math.max(llmKnown, backlog.ready);
      if (rendering?.ready) browserKnown = Math.max(browserKnown, rendering.ready);
      // Nothing claimable now: wait for the first lease (of vanished workers), back-off or pause to end.
      if (f.queued === 0 && !rendering?.ready) {
        const waits: number[] = [];
        if (f.leased > 0 || (!backlog?.pending && !rendering?.pending)) waits.push(f.nextLeaseExpiryMs ?? 1_000);
        if (backlog?.pending) waits.push(backlog.ready ? Math.max(0, llmPausedUntil - Date.now()) : (backlog.nextReadyMs ?? 1_000));
        if (rendering?.pending) waits.push(rendering.nextReadyMs ?? 1_000);
        const ms = Math.min(...waits);
        if (!backlog?.ready || ms > 0) await sleep(Math.min(Math.max(ms, 250), 30_000));
        if (backlog?.pending && !backlog.ready) llmKnown = Math.max(llmKnown, 1);
        if (rendering?.pending) browserKnown = Math.max(browserKnown, 1);
      }
      // Only browser pages left: no fetch batch until a render adds links.
      exhausted = !!rendering?.pending && f.queued === 0 && f.leased === 0;
      if (f.queued === 0) linksReported = false;
      continue;
    }

    // While the LLM window pauses and other work is in flight, a timer ends the pause.
    if (llm && !wake && llmKnown > 0 && llmPausedUntil > Date.now()) {
      const w: Promise<Settled> = sleep(llmPausedUntil - Date.now()).then(
        (): Settled => ({ kind: 'wake' }),
        (error): Settled => ({ kind: 'wake', error }),
      );
      wake = w;
    }
    const racing = [...inFlight.values(), ...llmInFlight.values(), ...browserInFlight.values()];
    if (wake) racing.push(wake);
    const settled = await Promise.race(racing);

    if (settled.kind === 'wake') {
      wake = null;
      if (settled.error) throw settled.error;
      continue;
    }
    if (settled.kind === 'llm') {
      llmInFlight.delete(settled.id);
      progress.batches++;
      const r = settled.result;
      if (!r) {
        if (++llmFailures >= MAX_CONSECUTIVE_BATCH_FAILURES) throw new Error(`${llmFailures} LLM batches in a row failed`);
        continue;
      }
      llmFailures = 0;
      if (r.stopped) {
        llmStopped = true;
        exhausted = true;
        linksReported = false;
        continue;
      }
      if (r.waitMs) {
        llmPausedUntil = Math.max(llmPausedUntil, Date.now() + r.waitMs);
        llmKnown = Math.max(llmKnown, 1);
      } else if (r.drained) {
        llmKnown = 0; // whatever else is pending is leased to a sibling batch
      } else {
        llmKnown = Math.max(llmKnown, 1); // it stopped at its batch size: more may be waiting
      }
      continue;
    }
    if (settled.kind === 'browser') {
      browserInFlight.delete(settled.id);
      progress.batches++;
      const r = settled.result;
      if (!r) {
        if (++browserFailures >= MAX_CONSECUTIVE_BATCH_FAILURES) throw new Error(`${browserFailures} browser page activities in a row failed`);
        continue;
      }
      browserFailures = 0;
      if (r.llmQueued) llmKnown += r.llmQueued;
      if (r.stopped) {
        browserStopped = true;
        llmStopped = true;
        exhausted = true;
        linksReported = false;
        continue;
      }
      // The rendered DOM's links: the fetch window may have work again.
      if (r.linksAdded && byNeed) linksReported = true;
      else if (r.linksAdded) exhausted = false;
      // More pages waiting: each finished render starts the next (fetch batches report theirs only when they return).
      if (r.moreBrowserPages) browserKnown = Math.max(browserKnown, 1);
      continue;
    }

    const { id, result } = settled;
    inFlight.delete(id);
    progress.batches++;
    if (!result) {
      if (++failures >= MAX_CONSECUTIVE_BATCH_FAILURES) throw new Error(`${failures} batches in a row failed`);
      continue;
    }
    failures = 0;
    if (result.llmQueued) llmKnown += result.llmQueued;
    if (result.browserQueued) browserKnown += result.browserQueued;
    if (result.stopped) {
      exhausted = true; // cancelled or ended elsewhere: let in-flight batches finish, then check
      linksReported = false;
      llmStopped = true;
      browserStopped = true;
      continue;
    }
    // A batch that claimed nothing means the frontier is (momentarily) empty; batches still in
    // flight may add links, and their completion re-opens the window.
    exhausted = result.claimed === 0 || (byNeed && addedNothing(result, plan.batchSize));
  }
}

/**
 * A fetch batch that ran the frontier dry (claimed less than its size) and stored no page itself
 * (each went to the browser or failed for good) left nothing new to claim: links come from the
 * renders, which report them. A page skipped or given back may still be claimable: not this.
 */
function addedNothing(r: ProcessBatchResult, batchSize: number): boolean {
  return r.claimed < batchSize && (r.browserQueued ?? 0) + r.failed === r.claimed;
}
