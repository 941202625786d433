import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { crawlRequestSchema, issuesToDetails, type CrawlRequest } from '@wds/contracts';
import { chargeCredits, insertCrawlParamPreview, loadCrawlParamPreview } from '@wds/db';
import { WdsError } from '@wds/errors';
import { tokenCredits } from '@wds/llm';
import type { ApiDeps } from '../deps';
import { runJob } from './jobs';
import { crawlParamsJob } from '@wds/workflows/job-specs';

/** How long turning a prompt into crawl options may take when the deployment sets nothing. */
export const DEFAULT_CRAWL_PROMPT_TIMEOUT_MS = 60_000;

/** Options a prompt turned into, with the request's id and the model tokens it took. */
export interface PromptOptions {
  id: string;
  options: Record<string, unknown>;
  tokensUsed: number;
}

/**
 * Crawl options from a natural-language prompt: the URL and prompt are stored, a short workflow
 * runs the model step on wds-llm (which validates the answer with the crawl's own schema), and
 * the options are read back. The API process never calls the model. `what` names the feature in
 * the 400 of a deployment without an LLM.
 */
export async function crawlOptionsFromPrompt(
  deps: ApiDeps,
  req: FastifyRequest,
  o: { url: string; prompt: string; timeoutMs?: number },
  what: string,
): Promise<PromptOptions> {
  const llm = deps.deployment?.llm;
  if (!llm?.ok) {
    throw new WdsError('FEATURE_NOT_AVAILABLE', { code: 'FEATURE_NOT_AVAILABLE', message: `${what} is not available in this deployment: ${llm?.message ?? 'no LLM is configured'}.` });
  }
  const id = randomUUID();
  await insertCrawlParamPreview(deps.db, { id, teamId: req.auth.teamId, url: o.url, prompt: o.prompt });
  const timeoutMs = o.timeoutMs ?? DEFAULT_CRAWL_PROMPT_TIMEOUT_MS;
  await runJob(deps, crawlParamsJob, { jobId: id, args: [{ previewId: id, timeoutMs }], timeoutMs, graceMs: 5_000 });
  const row = await loadCrawlParamPreview(deps.db, id);
  if (!row || row.status !== 'completed') throw new WdsError('INTERNAL', { code: 'UNKNOWN_ERROR', message: 'Internal Server Error: the crawl prompt finished without options' });
  return { id, options: (row.result ?? {}) as Record<string, unknown>, tokensUsed: row.tokensUsed };
}

/**
 * Bills a params preview's model tokens as extract bills them (15 tokens a credit, rounded up:
 * packages/llm credits.ts), once per preview (`crawl-params:<id>`), as the search controller
 * bills its call. Firecrawl's pricing names no figure for the preview, and every call there
 * costs credits; a crawl started with a `prompt` is billed per page only, the crawl's price.
 */
export async function chargeParamsPreview(deps: ApiDeps, teamId: string, p: PromptOptions): Promise<number> {
  const credits = tokenCredits({ totalTokens: p.tokensUsed });
  if (credits > 0) await chargeCredits(deps.db, { teamId, jobId: p.id, kind: 'crawl', amount: credits, key: `crawl-params:${p.id}` });
  return credits;
}

/**
 * The crawl request with the model's options under the caller's: a field the request sets
 * (non-null) wins over the model's. The result is validated by the crawl schema again, since
 * options valid alone can clash with the request's own (a 400 saying which came from the prompt).
 */
export function withPromptOptions(body: Record<string, unknown>, derived: Record<string, unknown>): CrawlRequest {
  const merged: Record<string, unknown> = { ...derived };
  for (const [k, v] of Object.entries(body)) if (v !== null && v !== undefined) merged[k] = v;
  const r = crawlRequestSchema.safeParse(merged);
  if (r.success) return r.data;
  const fromPrompt = Object.keys(derived).filter((k) => !(k in body) || body[k] == null);
  throw new WdsError('BAD_REQUEST', {
    message: `Bad Request: the crawl options derived from 'prompt' (${fromPrompt.join(', ') || 'none'}) do not fit the request's own options. Set those options yourself.`,
    details: issuesToDetails(r.error.issues),
  });
}
