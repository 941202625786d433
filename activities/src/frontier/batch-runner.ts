import { Context } from '@temporalio/activity';
import { claimUrls, jobStatus, othersFetching, type ClaimedUrl, type Db } from '@wds/db';
import type { ProcessBatchInput, ProcessBatchResult } from '@wds/workflows/crawl';

/**
 * One batch activity of a frontier job, whatever the job kind: lease URLs as slots free up,
 * hand each page to the kind's page handler with bounded concurrency, and return counts only.
 * Heartbeats every second double as the cancellation check (job row status), so a cancelled
 * job starts no new page and aborts the ones in flight.
 */
const HEARTBEAT_MS = 1_000;
/**
 * How soon an idle slot asks again while pages in flight may still discover links: at once when
 * one of this batch's own pages is stored (its links are then claimable), else after this long,
 * growing by half each empty round up to CLAIM_RETRY_MAX_MS (other batches' pages are only seen
 * by asking).
 */
const CLAIM_RETRY_MS = 50;
const CLAIM_RETRY_MAX_MS = 500;
/**
 * How long a crawl batch with nothing of its own in flight waits for other batches' pages to add
 * links. Long enough for a level of a site's pages while the frontier widens at a crawl's start;
 * short because live leases may belong to a killed worker whose batch has not been retried yet
 * (its retry takes them all back, claimUrls): past this the batch ends, and the workflow waits.
 */
const WAIT_FOR_OTHERS_MS = 10_000;

/**
 * What a page handler reports; `stored` pages count as succeeded, `failed` ones as failed;
 * `pending` pages were stored as pending LLM work (the workflow's LLM window ends them);
 * `browser` pages were handed to the browser engine (the workflow's browser window renders them).
 */
export type PageOutcome = 'stored' | 'pending' | 'browser' | 'failed' | 'skipped';

export interface BatchRun {
  jobId: string;
  /** Aborted when the activity is cancelled or the job stops running. */
  signal: AbortSignal;
  sleep(ms: number): Promise<void>;
  /** Counts URLs a page added to the frontier (reported back as `linksAdded`). */
  addedLinks(n: number): void;
}

/** `claimed`, if set, hears of each claim's URLs before any of them is handled (e.g. to look them up together). */
export type PageHandler = ((url: ClaimedUrl, run: BatchRun) => Promise<PageOutcome>) & { claimed?(urls: ClaimedUrl[]): void };

/** How a batch leases its URLs: fetch batches from the frontier (claimUrls), browser pages from those handed over (claimBrowserPages). */
export type ClaimFn = typeof claimUrls;

/**
 * `waitForOthers` (jobs whose pages add links to the frontier): a batch that finds the frontier
 * empty while another batch of the job is fetching waits for its links instead of ending. A
 * crawl's frontier starts as one URL and widens level by level; without the wait every batch but
 * the first ends at once, and the job runs on one batch's concurrency until that batch returns.
 */
export async function runFrontierBatch(db: Db, input: ProcessBatchInput, leaseMs: number, handlePage: PageHandler, claim: ClaimFn = claimUrls, opts: { waitForOthers?: boolean } = {}): Promise<ProcessBatchResult> {
  const ctx = Context.current();
  const { jobId } = input;
  if ((await jobStatus(db, jobId)) !== 'scraping') return { claimed: 0, succeeded: 0, failed: 0, stopped: true };

  const abort = new AbortController();
  const counts = { done: 0, succeeded: 0, failed: 0, llmQueued: 0, browserQueued: 0, linksAdded: 0 };
  const run: BatchRun = { jobId, signal: abort.signal, sleep: (ms) => ctx.sleep(ms), addedLinks: (n) => void (counts.linksAdded += n) };
  const stopWatching = watchJob(db, jobId, abort, counts);
  const owner = `${ctx.info.workflowExecution?.runId ?? ctx.info.workflowType}:${ctx.info.activityId}`;
  const othersBusy = opts.waitForOthers ? () => othersFetching(db, jobId, owner) : null;
  const claimer = createClaimer(db, claim, { jobId, owner, leaseMs, budget: input.batchSize, perClaim: input.concurrency, signal: abort.signal, othersBusy, onClaimed: handlePage.claimed });
  abort.signal.addEventListener('abort', () => claimer.nudge());
  try {
    await runSlots(input, claimer, run, async (u) => {
      const outcome = await handlePage(u, run);
      if (outcome === 'stored') counts.succeeded++;
      else if (outcome === 'failed') counts.failed++;
      else if (outcome === 'pending') counts.llmQueued++;
      else if (outcome === 'browser') counts.browserQueued++;
      counts.done++;
    });
  } finally {
    stopWatching();
  }
  // Optional fields only when set, so jobs without them report what they always did.
  return {
    claimed: claimer.claimed(),
    succeeded: counts.succeeded,
    failed: counts.failed,
    stopped: abort.signal.aborted,
    ...(counts.llmQueued ? { llmQueued: counts.llmQueued } : {}),
    ...(counts.browserQueued ? { browserQueued: counts.browserQueued } : {}),
    ...(counts.linksAdded ? { linksAdded: counts.linksAdded } : {}),
  };
}

/** Heartbeats (progress + liveness) and aborts the batch when it is cancelled or the job stops. */
function watchJob(db: Db, jobId: string, abort: AbortController, counts: { done: number }): () => void {
  const ctx = Context.current();
  const onCancel = () => abort.abort();
  ctx.cancellationSignal.addEventListener('abort', onCancel);
  const beat = setInterval(() => {
    ctx.heartbeat({ done: counts.done });
    jobStatus(db, jobId).then((s) => s !== 'scraping' && abort.abort(), () => {});
  }, HEARTBEAT_MS);
  return () => {
    clearInterval(beat);
    ctx.cancellationSignal.removeEventListener('abort', onCancel);
  };
}

interface Claimer {
  /** The next URL for a slot, or null when this batch has nothing more to do. */
  take(): Promise<ClaimedUrl | null>;
  /**
   * URLs handed to slots and not finished: while any is, an empty frontier may still grow. Counted
   * from the moment take() hands a URL out, so a slot that finds the frontier empty right after a
   * sibling took its last URL waits for that page instead of ending.
   */
  busy: number;
  claimed(): number;
  /** A page of this batch ended (its links are stored) or the batch was aborted: waiting slots ask again at once. */
  nudge(): void;
}

/**
 * URLs are claimed as slots free up, not all at once: links found by this batch's own pages are
 * picked up while it runs, so a deep, narrow site does not wait a batch round per level. One claim
 * query at a time per batch; the first one retakes the leases of this activity's earlier attempts.
 */
function createClaimer(
  db: Db,
  claim: ClaimFn,
  o: { jobId: string; owner: string; leaseMs: number; budget: number; perClaim: number; signal: AbortSignal; othersBusy: (() => Promise<boolean>) | null; onClaimed?: (urls: ClaimedUrl[]) => void },
): Claimer {
  let budget = o.budget;
  let claimed = 0;
  let firstClaim = true;
  let claiming: Promise<void> | null = null;
  // One question at a time for all idle slots, as with claims.
  let asking: Promise<boolean> | null = null;
  let waiters: (() => void)[] = [];
  const buffer: ClaimedUrl[] = [];
  /** Resolves after `ms`, or earlier on a nudge. */
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        waiters = waiters.filter((w) => w !== done);
        resolve();
      }
      waiters.push(done);
    });
  const claimer: Claimer = {
    busy: 0,
    claimed: () => claimed,
    nudge() {
      for (const w of waiters) w();
    },
    async take() {
      let retryMs = CLAIM_RETRY_MS;
      let waitingSince = 0;
      for (;;) {
        if (o.signal.aborted) return null;
        if (buffer.length) {
          claimer.busy++;
          return buffer.shift()!;
        }
        if (budget <= 0) return null;
        if (!claiming) {
          claiming = claim(db, o.jobId, o.owner, Math.min(budget, o.perClaim), o.leaseMs, { retakeOwn: firstClaim })
            .then((got) => {
              budget -= got.length;
              claimed += got.length;
              if (got.length) o.onClaimed?.(got);
              buffer.push(...got);
            })
            .finally(() => (claiming = null));
          firstClaim = false;
        }
        await claiming;
        if (buffer.length) continue;
        // Nothing to claim: end unless a page in flight — a sibling slot's, or (othersBusy, for
        // WAIT_FOR_OTHERS_MS) another batch's — may discover more.
        if (claimer.busy === 0) {
          if (!o.othersBusy) return null;
          waitingSince ||= Date.now();
          if (Date.now() - waitingSince > WAIT_FOR_OTHERS_MS) return null;
          asking ??= o.othersBusy().finally(() => (asking = null));
          if (!(await asking.catch(() => false))) return null;
        }
        await pause(retryMs);
        retryMs = Math.min(CLAIM_RETRY_MAX_MS, Math.round(retryMs * 1.5));
      }
    },
  };
  return claimer;
}

/** `concurrency` slots take URLs until the claimer runs dry; `delayMs` spaces a slot's pages (politeness). */
async function runSlots(input: ProcessBatchInput, claimer: Claimer, run: BatchRun, page: (u: ClaimedUrl) => Promise<void>): Promise<void> {
  let started = 0;
  const slots = Array.from({ length: Math.max(1, input.concurrency) }, async () => {
    for (let u = await claimer.take(); u; u = await claimer.take()) {
      try {
        if (input.delayMs > 0 && started > 0) await run.sleep(input.delayMs).catch(() => {});
        started++;
        if (!run.signal.aborted) await page(u);
      } finally {
        claimer.busy--;
        claimer.nudge();
      }
    }
  });
  await Promise.all(slots);
}
