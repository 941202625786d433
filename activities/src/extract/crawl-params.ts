import { crawlRequestSchema, issuesToDetails, PROMPT_CRAWL_FIELDS } from '@wds/contracts';
import { completeCrawlParamPreview, loadCrawlParamPreview, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import { crawlOptionsFromInstruction, isLlmError, LlmCodes, type LlmClient } from '@wds/llm';
import type { CrawlParamsWorkflowResult } from '@wds/workflows/crawl-params';
import { observeModelCall } from '../llm/model-step';

/**
 * Crawl options from a prompt (wds-llm). The model's answer is checked by the crawl's own
 * request schema, with the start URL, before it is stored: an answer the schema refuses gets
 * one repair turn naming the problems, then a 422 that says what was wrong. Never a crawl with
 * options its own validation would not accept.
 */
export async function deriveCrawlParams(deps: { db: Db; client: LlmClient }, previewId: string, signal: AbortSignal): Promise<CrawlParamsWorkflowResult> {
  const row = await loadCrawlParamPreview(deps.db, previewId);
  if (!row) throw new WdsError('NOT_FOUND', { message: `Crawl params request ${previewId} not found` });
  if (row.status === 'completed') return { fields: Object.keys((row.result as object | null) ?? {}).length };
  const check = (options: Record<string, unknown>) => {
    const r = crawlRequestSchema.safeParse({ url: row.url, ...options });
    return r.success ? [] : issuesToDetails(r.error.issues).map((d) => `${d.path.join('.') || 'options'}: ${d.message}`);
  };
  try {
    const r = await observeModelCall(deps.client.config.model, 'crawl_params', () => 0, () => crawlOptionsFromInstruction(deps.client, { url: row.url, instruction: row.prompt, check, signal }));
    // Only the fields a prompt may set reach the crawl (the reply's schema says so too).
    const options = Object.fromEntries(PROMPT_CRAWL_FIELDS.filter((k) => k in r.options).map((k) => [k, r.options[k]]));
    await completeCrawlParamPreview(deps.db, previewId, { result: options, warning: null, tokensUsed: r.usage.totalTokens });
    return { fields: Object.keys(options).length };
  } catch (e) {
    if (isLlmError(e) && e.code === LlmCodes.CANNOT_CONFORM) {
      const errors = ((e.details as { errors?: string[] } | undefined)?.errors ?? []).slice(0, 10);
      throw new WdsError('UNPROCESSABLE', {
        code: LlmCodes.CANNOT_CONFORM,
        message: `The model could not turn the prompt into valid crawl options (${errors.join('; ') || 'no valid answer'}). Rephrase the prompt, or set the crawl options yourself.`,
        details: { errors },
      });
    }
    throw e;
  }
}
