import type { ScrapeDocument } from '@wds/contracts';
import { claimLlmPages, deferLlmPage, failLlmPage, finishLlmPage, jobStatus, type ClaimedLlmPage, type Db } from '@wds/db';
import type { LlmClient } from '@wds/llm';
import { crawlPageStored } from '@wds/metrics';
import type { CrawlLlmActivities, LlmBatchInput, LlmBatchResult } from '@wds/workflows/crawl';
import { loadJobOptions, type LoadedJob } from '../crawl/job-options';
import { asActivity } from '../failures';
import { webhookFor } from '../webhooks/emit';
import { runModelBatch } from './model-batch';
import { observeModelCall } from './model-step';
import { runTrackedPageFormats, type TrackPage } from './tracked-formats';
import { trackCrawlPage } from '../changes/track-document';
import { estimateStepTokens, withTokenBudget, type TokenBudget } from './token-budget';

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

/** wds-llm: the model step of crawl and batch pages (pages pass by id: the document is read from Postgres). */
export function createCrawlLlmActivities(deps: CrawlLlmDeps): CrawlLlmActivities {
  return { runLlmBatch: (input) => asActivity(() => runLlmBatch(deps, input)) };
}

/**
 * One LLM batch of a crawl or batch job (the shared loop: ./model-batch.ts): each page is
 * stored with its model-made fields and credits, failed for good, or given back for later.
 */
export async function runLlmBatch(deps: CrawlLlmDeps, input: LlmBatchInput): Promise<LlmBatchResult> {
  const { jobId } = input;
  let job: LoadedJob | undefined;
  return runModelBatch<ClaimedLlmPage>(
    {
      running: async () => (await jobStatus(deps.db, jobId)) === 'scraping',
      claim: async (owner, first) => (await claimLlmPages(deps.db, jobId, owner, 1, LEASE_MS, { retakeOwn: first }))[0] ?? null,
      run: async (page, signal) => enrichPage(deps, (job ??= await loadJobOptions(deps.db, jobId)), page, signal),
      defer: (page, owner, waitMs, o) => deferLlmPage(deps.db, jobId, page.key, owner, waitMs, o),
      fail: (page, message) => failLlmPage(deps.db, jobId, page.key, message).then(() => undefined),
      attempts: (page) => page.attempts,
      failingMs: (page) => page.failingMs,
    },
    input,
    deps.pagePatienceMs,
  );
}

async function enrichPage(deps: CrawlLlmDeps, job: LoadedJob, page: ClaimedLlmPage, signal: AbortSignal): Promise<'stored' | 'skipped'> {
  const draft = page.document as ScrapeDocument;
  const o = job.scrape;
  const track: TrackPage = (doc, extract) => trackCrawlPage(deps.db, job, page, doc, { extract });
  const r = await withTokenBudget(
    deps.tokens,
    () => estimateStepTokens(deps.client.config, o, draft.markdown ?? ''),
    () => observeModelCall(deps.client.config.model, job.kind, (x) => x.credits, () => runTrackedPageFormats(deps.client, o, draft, { signal }, track)),
  );
  const credits = page.credits + r.credits;
  const doc = r.document;
  doc.metadata = { ...doc.metadata, creditsUsed: credits };
  const stored = await finishLlmPage(deps.db, job.id, page.key, { body: doc, credits, webhook: webhookFor(job, 'page'), versions: r.writes });
  if (!stored) return 'skipped'; // another attempt ended it, or the job ended
  crawlPageStored(job.kind, credits);
  return 'stored';
}
