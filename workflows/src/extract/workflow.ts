import { CancellationScope, continueAsNew, isCancellation, proxyActivities } from '@temporalio/workflow';
import { NON_RETRYABLE_KINDS, TaskQueues } from '../common';
import type { CrawlControlActivities } from '../crawl/contracts';
import { frontierBatchOptions, frontierControlOptions, runFrontierJob } from '../crawl/loop';
import { describeFailure } from '../failure';
import type { ExtractControlActivities, ExtractFetchActivities, ExtractLlmActivities, ExtractProgress, ExtractWorkflowInput, ExtractWorkflowResult } from './contracts';

/** Page steps on wds-llm in flight at once for one extract (the queue's slots bound the provider). */
const PAGE_WINDOW = 8;
/** Time the merge may take after the deadline: it needs at most one model call, and none past the deadline. */
const MERGE_GRACE_MS = 5 * 60_000;

/**
 * An extract: (1) the frontier fetches the named pages and what wildcards expand to, exactly
 * like a batch scrape (the shared frontier loop, continue-as-new included); (2) the model reads
 * each page on wds-llm, a bounded window at a time, until the pages or the time or the team's
 * credits run out; (3) one merge step combines the page results and completes the job. Only
 * ids, counters and page sequence numbers cross Temporal; a failure or cancellation ends the job
 * with its reason.
 */
export async function extractWorkflow(input: ExtractWorkflowInput): Promise<ExtractWorkflowResult> {
  const { jobId, plan, deadlineMs } = input;
  const progress: ExtractProgress = input.progress ?? { phase: 'scrape', frontier: { seeded: false, batches: 0, runs: 0 } };
  const fetchActs = proxyActivities<ExtractFetchActivities>(frontierBatchOptions(TaskQueues.fetch));
  const frontier = proxyActivities<CrawlControlActivities>(frontierControlOptions);
  const control = proxyActivities<ExtractControlActivities>(frontierControlOptions);

  try {
    if (progress.phase === 'scrape') {
      const outcome = await runFrontierJob(
        { jobId, plan, progress: progress.frontier },
        { seed: fetchActs.expandExtractUrls, runBatch: fetchActs.fetchExtractBatch, frontierState: frontier.frontierState, finishJob: control.endExtractScrape },
      );
      // Ended elsewhere while fetching (cancelled, or failed by the stranded-job sweep): nothing to extract.
      if (outcome.done && outcome.status !== 'completed') return { status: outcome.status, pages: 0 };
      if (outcome.done) progress.phase = 'extract';
    }
    if (progress.phase === 'extract') {
      const pages = await extractPages(jobId, deadlineMs, await control.extractPagesToDo({ jobId }));
      const llm = proxyActivities<ExtractLlmActivities>({
        taskQueue: TaskQueues.llm,
        scheduleToCloseTimeout: Math.max(0, deadlineMs - Date.now()) + MERGE_GRACE_MS,
        startToCloseTimeout: '5 minutes',
        heartbeatTimeout: '30s',
        retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] },
      });
      const { status } = await llm.mergeExtract({ jobId, deadlineMs });
      return { status, pages };
    }
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => control.endExtract({ jobId, outcome: 'cancelled' }));
      throw err;
    }
    const failure = describeFailure(err);
    const error = failure.kind === 'INTERNAL' && err instanceof Error ? err.message : failure.message;
    await CancellationScope.nonCancellable(() => control.endExtract({ jobId, outcome: 'failed', error }));
    throw err;
  }
  // The frontier loop handed over (long fetch phase). continueAsNew works by throwing: it must
  // happen out here, where the catch above cannot mistake it for a failure.
  return await continueAsNew<typeof extractWorkflow>({ ...input, progress: { ...progress, frontier: { ...progress.frontier, runs: progress.frontier.runs + 1 } } });
}

/**
 * One model step per page document, PAGE_WINDOW at a time. A step that is still failing when
 * the deadline comes (the provider down) ends there; its page is left out and the merge says so.
 * Once a step reports the team's credits exhausted, no more are started. Returns the steps run.
 */
async function extractPages(jobId: string, deadlineMs: number, seqs: number[]): Promise<number> {
  const inFlight = new Set<Promise<void>>();
  let next = 0;
  let outOfCredits = false;
  const launch = (docSeq: number) => {
    const { extractPage } = proxyActivities<ExtractLlmActivities>({
      taskQueue: TaskQueues.llm,
      // The deadline is the budget of every attempt together: no attempt limit before it.
      scheduleToCloseTimeout: Math.max(1_000, deadlineMs - Date.now()),
      startToCloseTimeout: '5 minutes',
      heartbeatTimeout: '30s',
      retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] },
    });
    const p: Promise<void> = extractPage({ jobId, docSeq, deadlineMs })
      .then(
        (r) => {
          if (r.outOfCredits) outOfCredits = true;
        },
        (err) => {
          if (isCancellation(err)) throw err;
          // Timed out or failed for good: the page is left out of the answer (the merge reports it).
        },
      )
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  for (;;) {
    while (next < seqs.length && !outOfCredits && inFlight.size < PAGE_WINDOW && Date.now() < deadlineMs) launch(seqs[next++]!);
    if (!inFlight.size) return next;
    await Promise.race(inFlight);
  }
}
