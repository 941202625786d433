import { Context } from '@temporalio/activity';
import { toWdsError } from '@wds/errors';
import type { LlmBatchInput, LlmBatchResult } from '@wds/workflows/crawl';
import { TokenLimitError } from './token-budget';

/**
 * The LLM batch of a frontier job's pending pages (crawl and batch pages' model-made formats,
 * monitor check pages' json mode and goal judge), whatever the job kind: claim one page at a time
 * (so one wds-llm slot is one model step, and WDS_LLM_CONCURRENCY bounds a worker's calls
 * exactly), run its step, and end a failure as its kind says — a full token window or a
 * retryable provider failure gives the page back for later (`waitMs`: the workflow pauses its LLM
 * window that long instead of hammering the provider), a final failure or one past the page's
 * patience fails the page. Heartbeats double as the "is the job still running" check: a job that
 * ended aborts the call in flight.
 */
export interface ModelBatchSteps<P> {
  /** Whether the job still runs (checked first and with every heartbeat). */
  running(): Promise<boolean>;
  /** Leases the next ready page (`first`: the attempt's first claim, which retakes its own earlier leases). */
  claim(owner: string, first: boolean): Promise<P | null>;
  /** The page's model step, stored: 'skipped' when another attempt or the job's end got there first. */
  run(page: P, signal: AbortSignal): Promise<'stored' | 'skipped'>;
  defer(page: P, owner: string, waitMs: number, o: { error?: string; countAttempt: boolean }): Promise<void>;
  /** Ends the page as failed for good with this message. */
  fail(page: P, message: string): Promise<void>;
  attempts(page: P): number;
  /** Ms since the page's step first failed retryably (null: it has not). */
  failingMs(page: P): number | null;
}

const HEARTBEAT_MS = 2_000;
/** Back-off of a page after a retryable provider failure without Retry-After: 1 s, 2 s, 4 s … 30 s. */
const BACKOFF_MS = { first: 1_000, max: 30_000 };

type PageEnd = { kind: 'stored' | 'failed' | 'skipped' } | { kind: 'deferred'; waitMs: number };

export async function runModelBatch<P>(steps: ModelBatchSteps<P>, input: Pick<LlmBatchInput, 'batchSize'>, patienceMs: number): Promise<LlmBatchResult> {
  const ctx = Context.current();
  const out: LlmBatchResult = { claimed: 0, stored: 0, failed: 0, deferred: 0, drained: false, stopped: false };
  if (!(await steps.running())) return { ...out, stopped: true };
  const jobEnded = new AbortController();
  const signal = AbortSignal.any([jobEnded.signal, ctx.cancellationSignal]);
  const beat = setInterval(() => {
    ctx.heartbeat({ claimed: out.claimed });
    steps.running().then((r) => !r && jobEnded.abort(), () => {});
  }, HEARTBEAT_MS);
  const owner = `${ctx.info.workflowExecution?.runId ?? ctx.info.workflowType}:${ctx.info.activityId}`;
  try {
    for (let first = true; out.claimed < input.batchSize && !signal.aborted; first = false) {
      const page = await steps.claim(owner, first);
      if (!page) {
        out.drained = true;
        break;
      }
      out.claimed++;
      const end = await endOf(steps, page, owner, signal, patienceMs);
      if (end.kind === 'skipped') continue;
      out[end.kind]++;
      if (end.kind === 'deferred') {
        out.waitMs = end.waitMs;
        break;
      }
    }
  } finally {
    clearInterval(beat);
  }
  out.stopped = signal.aborted;
  return out;
}

async function endOf<P>(steps: ModelBatchSteps<P>, page: P, owner: string, signal: AbortSignal, patienceMs: number): Promise<PageEnd> {
  try {
    return { kind: await steps.run(page, signal) };
  } catch (e) {
    // Cancelled, or the job ended: the page keeps its lease; the job's end drops it, a retry retakes it.
    if (signal.aborted) return { kind: 'skipped' };
    if (e instanceof TokenLimitError) {
      // Not the page's fault and not an attempt: it waits for the next window, first in line.
      await steps.defer(page, owner, e.retryAfterMs, { countAttempt: false });
      return { kind: 'deferred', waitMs: e.retryAfterMs };
    }
    const err = toWdsError(e);
    if (!err.retryable) {
      await steps.fail(page, err.message);
      return { kind: 'failed' };
    }
    if ((steps.failingMs(page) ?? 0) >= patienceMs) {
      await steps.fail(page, `The model step kept failing for ${patienceText(patienceMs)} (WDS_LLM_PAGE_PATIENCE_MS): ${err.message}`);
      return { kind: 'failed' };
    }
    const retryAfter = (err as { retryAfterMs?: number }).retryAfterMs;
    const waitMs = retryAfter && retryAfter > 0 ? retryAfter : Math.min(BACKOFF_MS.max, BACKOFF_MS.first * 2 ** Math.max(0, steps.attempts(page) - 1));
    await steps.defer(page, owner, waitMs, { error: err.message, countAttempt: true });
    return { kind: 'deferred', waitMs };
  }
}

export function patienceText(ms: number): string {
  const s = ms / 1000;
  return s >= 120 ? `${Math.round(s / 60)} min` : `${Math.round(s)} s`;
}
