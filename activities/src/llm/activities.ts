import { Context } from '@temporalio/activity';
import type { ScrapeDocument, ScrapeOptions } from '@wds/contracts';
import { completeScrapeJob, loadScrapeJob, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import { isLlmError, type LlmClient } from '@wds/llm';
import { creditsUsed, llmCalls, llmCredits, llmDuration, llmTokens } from '@wds/metrics';
import type { EnrichScrapeInput, LlmScrapeActivities, ScrapeWorkflowResult } from '@wds/workflows/scrape';
import { asActivity } from '../failures';
import { runPageFormats, withLlmFields, type PageLlmResult } from './page-formats';
import { estimateStepTokens, withTokenBudget, type TokenBudget } from './token-budget';

export interface LlmActivityDeps {
  db: Db;
  client: LlmClient;
  /** The deployment's token limit (WDS_LLM_TOKENS_PER_MINUTE); null = none. */
  tokens?: TokenBudget | null;
}

const HEARTBEAT_MS = 2_000;

/** wds-llm: the model step of a scrape. The page comes from its draft in Postgres, never from Temporal. */
export function createLlmActivities(deps: LlmActivityDeps): LlmScrapeActivities {
  return {
    enrichScrape: (input) => asActivity(() => enrichScrape(deps, input)),
  };
}

async function enrichScrape(deps: LlmActivityDeps, { jobId, deadlineMs }: EnrichScrapeInput): Promise<ScrapeWorkflowResult> {
  const job = await loadScrapeJob(deps.db, jobId);
  if (!job) throw new WdsError('NOT_FOUND', { message: `Scrape job ${jobId} not found` });
  const draft = job.document as ScrapeDocument | null;
  // A retry after the completion was stored: nothing to redo (and nothing billed twice).
  if (job.status === 'completed' && draft) return { jobId, statusCode: draft.metadata.statusCode };
  if (!draft) throw new WdsError('INTERNAL', { code: 'UNKNOWN_ERROR', message: `Scrape job ${jobId} has no page to run the model over` });
  const o = job.options as ScrapeOptions;
  // A full token window throws before the deadline's clock matters: Temporal retries at the window's end.
  const r = await withDeadline(deadlineMs, o.timeout, (call) =>
    withTokenBudget(
      deps.tokens,
      () => estimateStepTokens(deps.client.config, o, draft.markdown ?? ''),
      () => observed(deps.client.config.model, 'scrape', () => runPageFormats(deps.client, o, draft, call)),
    ),
  );
  const total = job.creditsUsed + r.credits;
  const doc = withLlmFields(draft, r, o);
  doc.metadata = { ...doc.metadata, creditsUsed: total };
  await completeScrapeJob(deps.db, jobId, doc, total);
  creditsUsed.inc({ kind: 'scrape' }, r.credits);
  return { jobId, statusCode: draft.metadata.statusCode };
}

/**
 * Runs the model step within the scrape's own budget: its signal aborts at the deadline (or when
 * Temporal cancels the activity), and the activity heartbeats meanwhile so a dead worker's step
 * is retried elsewhere within seconds. A step cut by the deadline is the request's timeout.
 */
async function withDeadline<T>(deadlineMs: number, timeoutMs: number, fn: (call: { signal: AbortSignal }) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const left = deadlineMs - Date.now();
  const timedOut = () => new WdsError('REQUEST_TIMEOUT', { code: 'SCRAPE_TIMEOUT', retryable: false, message: `Request Timeout: the model did not finish within the ${timeoutMs} ms timeout` });
  if (left <= 0) throw timedOut();
  const deadline = AbortSignal.timeout(left);
  const signal = AbortSignal.any([deadline, ctx.cancellationSignal]);
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
  try {
    return await fn({ signal });
  } catch (e) {
    if (deadline.aborted) throw timedOut();
    throw e;
  } finally {
    clearInterval(beat);
  }
}

/** Metrics of one LLM step: calls by outcome, tokens, latency, credits. */
export async function observed(model: string, use: string, fn: () => Promise<PageLlmResult>): Promise<PageLlmResult> {
  const t0 = performance.now();
  try {
    const r = await fn();
    llmCalls.inc({ model, use, outcome: 'success' });
    llmTokens.inc({ model, direction: 'prompt' }, r.usage.promptTokens);
    llmTokens.inc({ model, direction: 'completion' }, r.usage.completionTokens);
    llmCredits.inc({ model }, r.credits);
    llmDuration.observe({ model, outcome: 'success' }, (performance.now() - t0) / 1000);
    return r;
  } catch (e) {
    const code = isLlmError(e) || e instanceof WdsError ? (e.code ?? e.kind) : 'error';
    llmCalls.inc({ model, use, outcome: code });
    if (isLlmError(e) && e.usage) {
      llmTokens.inc({ model, direction: 'prompt' }, e.usage.promptTokens);
      llmTokens.inc({ model, direction: 'completion' }, e.usage.completionTokens);
    }
    llmDuration.observe({ model, outcome: 'error' }, (performance.now() - t0) / 1000);
    throw e;
  }
}
