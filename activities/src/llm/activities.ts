import type { ScrapeDocument, ScrapeOptions } from '@wds/contracts';
import { completeScrapeJob, loadScrapeJob, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { LlmClient } from '@wds/llm';
import { creditsUsed } from '@wds/metrics';
import type { EnrichScrapeInput, LlmScrapeActivities, ScrapeWorkflowResult } from '@wds/workflows/scrape';
import { asActivity } from '../failures';
import { observeModelCall, withinDeadline } from './model-step';
import { runTrackedPageFormats, type TrackPage } from './tracked-formats';
import { trackScrape } from '../scrape/finish';
import { estimateStepTokens, withTokenBudget, type TokenBudget } from './token-budget';

export interface LlmActivityDeps {
  db: Db;
  client: LlmClient;
  /** The deployment's token limit (WDS_LLM_TOKENS_PER_MINUTE); null = none. */
  tokens?: TokenBudget | null;
}

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
  const track: TrackPage = (doc, extract) => trackScrape(deps.db, jobId, o, doc, { extract });
  const r = await withDeadline(deadlineMs, o.timeout, (call) =>
    withTokenBudget(
      deps.tokens,
      () => estimateStepTokens(deps.client.config, o, draft.markdown ?? ''),
      () => observeModelCall(deps.client.config.model, 'scrape', (x) => x.credits, () => runTrackedPageFormats(deps.client, o, draft, call, track)),
    ),
  );
  const total = job.creditsUsed + r.credits;
  const doc = r.document;
  doc.metadata = { ...doc.metadata, creditsUsed: total };
  await completeScrapeJob(deps.db, jobId, doc, total, r.writes);
  creditsUsed.inc({ kind: 'scrape' }, r.credits);
  return { jobId, statusCode: draft.metadata.statusCode };
}

/**
 * Runs the model step within the scrape's own budget: its signal aborts at the deadline (or when
 * Temporal cancels the activity), and the activity heartbeats meanwhile so a dead worker's step
 * is retried elsewhere within seconds. A step cut by the deadline is the request's timeout.
 */
async function withDeadline<T>(deadlineMs: number, timeoutMs: number, fn: (call: { signal: AbortSignal }) => Promise<T>): Promise<T> {
  const r = await withinDeadline(deadlineMs, (signal) => fn({ signal }));
  if (!r.ok) throw new WdsError('REQUEST_TIMEOUT', { code: 'SCRAPE_TIMEOUT', retryable: false, message: `Request Timeout: the model did not finish within the ${timeoutMs} ms timeout` });
  return r.value;
}

