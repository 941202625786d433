import { Context } from '@temporalio/activity';
import type { ScrapeDocument } from '@wds/contracts';
import { claimLlmPages, deferLlmPage, failLlmPage, finishLlmPage, jobStatus, type ClaimedLlmPage, type Db } from '@wds/db';
import { toWdsError } from '@wds/errors';
import type { LlmClient } from '@wds/llm';
import { crawlPageStored } from '@wds/metrics';
import type { CrawlLlmActivities, LlmBatchInput, LlmBatchResult } from '@wds/workflows/crawl';
import { loadJobOptions, type LoadedJob } from '../crawl/job-options';
import { asActivity } from '../failures';
import { webhookFor } from '../webhooks/emit';
import { observeModelCall } from './model-step';
import { runTrackedPageFormats, type TrackPage } from './tracked-formats';
import { trackCrawlPage } from '../changes/track-document';
import { estimateStepTokens, TokenLimitError, withTokenBudget, type TokenBudget } from './token-budget';

export interface CrawlLlmDeps {
  db: Db;
  client: LlmClient;
  /** The deployment's token limit (WDS_LLM_TOKENS_PER_MINUTE); null = none. */
  tokens?: TokenBudget | null;
  /**
   * How long a page's model step is retried through provider failures (429, 5xx, timeouts),
   * counted from its first such failure (WDS_LLM_PAGE_PATIENCE_MS; time spent waiting for its
   * turn does not count); then it is a failed page with the last error. A crawl has no timeout
   * of its own, so this is its budget.
   */
  pagePatienceMs: number;
}

/** Long enough for a page's whole model step (several calls, a repair turn); a retried attempt retakes its pages at once anyway. */
const LEASE_MS = 10 * 60_000;
const HEARTBEAT_MS = 2_000;
/** Back-off of a page after a retryable provider failure without Retry-After: 1 s, 2 s, 4 s … 30 s. */
const BACKOFF_MS = { first: 1_000, max: 30_000 };

/** wds-llm: the model step of crawl and batch pages (pages pass by id: the document is read from Postgres). */
export function createCrawlLlmActivities(deps: CrawlLlmDeps): CrawlLlmActivities {
  return { runLlmBatch: (input) => asActivity(() => runLlmBatch(deps, input)) };
}

type PageEnd = { kind: 'stored' | 'failed' | 'skipped' } | { kind: 'deferred'; waitMs: number };

/**
 * One LLM batch: claims pending pages of the job one at a time (so one wds-llm slot is one model
 * step, and WDS_LLM_CONCURRENCY bounds a worker's calls exactly) and ends each: stored with
 * its model-made fields and credits, failed for good, or given back for later. It returns early
 * when nothing is ready (`drained`), or when the provider fails or the token window is full
 * (`waitMs`: the workflow pauses its LLM window that long instead of hammering the provider).
 * Heartbeats double as the cancellation check: a cancelled job aborts the call in flight.
 */
export async function runLlmBatch(deps: CrawlLlmDeps, input: LlmBatchInput): Promise<LlmBatchResult> {
  const ctx = Context.current();
  const { jobId } = input;
  const out: LlmBatchResult = { claimed: 0, stored: 0, failed: 0, deferred: 0, drained: false, stopped: false };
  if ((await jobStatus(deps.db, jobId)) !== 'scraping') return { ...out, stopped: true };
  const job = await loadJobOptions(deps.db, jobId);

  const jobEnded = new AbortController();
  const signal = AbortSignal.any([jobEnded.signal, ctx.cancellationSignal]);
  const beat = setInterval(() => {
    ctx.heartbeat({ claimed: out.claimed });
    jobStatus(deps.db, jobId).then((s) => s !== 'scraping' && jobEnded.abort(), () => {});
  }, HEARTBEAT_MS);
  const owner = `${ctx.info.workflowExecution?.runId ?? ctx.info.workflowType}:${ctx.info.activityId}`;
  try {
    for (let first = true; out.claimed < input.batchSize && !signal.aborted; first = false) {
      // The first claim of an attempt takes back what a killed earlier attempt held.
      const [page] = await claimLlmPages(deps.db, jobId, owner, 1, LEASE_MS, { retakeOwn: first });
      if (!page) {
        out.drained = true;
        break;
      }
      out.claimed++;
      const end = await enrichPage(deps, job, page, owner, signal);
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

async function enrichPage(deps: CrawlLlmDeps, job: LoadedJob, page: ClaimedLlmPage, owner: string, signal: AbortSignal): Promise<PageEnd> {
  const draft = page.document as ScrapeDocument;
  const o = job.scrape;
  const track: TrackPage = (doc, extract) => trackCrawlPage(deps.db, job, page, doc, { extract });
  try {
    const r = await withTokenBudget(
      deps.tokens,
      () => estimateStepTokens(deps.client.config, o, draft.markdown ?? ''),
      () => observeModelCall(deps.client.config.model, job.kind, (x) => x.credits, () => runTrackedPageFormats(deps.client, o, draft, { signal }, track)),
    );
    const credits = page.credits + r.credits;
    const doc = r.document;
    doc.metadata = { ...doc.metadata, creditsUsed: credits };
    const stored = await finishLlmPage(deps.db, job.id, page.key, { body: doc, credits, webhook: webhookFor(job, 'page'), versions: r.writes });
    if (!stored) return { kind: 'skipped' }; // another attempt ended it, or the job ended
    crawlPageStored(job.kind, credits);
    return { kind: 'stored' };
  } catch (e) {
    // Cancelled, or the job ended: the page keeps its lease; the job's end drops it, a retry retakes it.
    if (signal.aborted) return { kind: 'skipped' };
    if (e instanceof TokenLimitError) {
      // Not the page's fault and not an attempt: it waits for the next window, first in line.
      await deferLlmPage(deps.db, job.id, page.key, owner, e.retryAfterMs, { countAttempt: false });
      return { kind: 'deferred', waitMs: e.retryAfterMs };
    }
    const err = toWdsError(e);
    if (!err.retryable) {
      await failLlmPage(deps.db, job.id, page.key, err.message);
      return { kind: 'failed' };
    }
    if ((page.failingMs ?? 0) >= deps.pagePatienceMs) {
      const s = deps.pagePatienceMs / 1000;
      const patience = s >= 120 ? `${Math.round(s / 60)} min` : `${Math.round(s)} s`;
      await failLlmPage(deps.db, job.id, page.key, `The model step kept failing for ${patience} (WDS_LLM_PAGE_PATIENCE_MS): ${err.message}`);
      return { kind: 'failed' };
    }
    const retryAfter = (err as { retryAfterMs?: number }).retryAfterMs;
    const waitMs = retryAfter && retryAfter > 0 ? retryAfter : Math.min(BACKOFF_MS.max, BACKOFF_MS.first * 2 ** Math.max(0, page.attempts - 1));
    await deferLlmPage(deps.db, job.id, page.key, owner, waitMs, { error: err.message, countAttempt: true });
    return { kind: 'deferred', waitMs };
  }
}
