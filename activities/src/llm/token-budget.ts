import { changeTrackingOf, llmWork, type ScrapeOptions } from '@wds/contracts';
import { reserveLlmTokens, settleLlmTokens, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import { llmTokenLimitWaits } from '@wds/metrics';
import { CONTEXT_MARGIN, countTokens, isLlmError, OUTPUT_TOKENS, truncateToTokens, type LlmConfig, type Usage } from '@wds/llm';

/**
 * The deployment's model-token limit per minute (WDS_LLM_TOKENS_PER_MINUTE), applied per model
 * step (one page's formats): before the step its estimate — the prompts' tokens and every call's
 * output budget — is reserved in the shared Postgres window; after it, the reservation is
 * corrected by the tokens the provider reported. A full window is a retryable failure that
 * names the time to the window's end, so the step waits exactly that long (Temporal's
 * nextRetryDelay for a scrape, a back-off in Postgres for a crawl page), never failing the job.
 */
export interface TokenBudget {
  readonly tokensPerMinute: number;
  /** Reserves `tokens`; throws TokenLimitError when the window is full. Returns the correction to call with the real usage. */
  reserve(tokens: number): Promise<(usedTokens: number) => Promise<void>>;
}

/** The window is full: retry after `retryAfterMs` (the window's end). */
export class TokenLimitError extends WdsError {
  readonly retryAfterMs: number;
  constructor(limit: number, retryAfterMs: number) {
    super('SERVICE_UNAVAILABLE', {
      code: 'LLM_TOKEN_LIMIT',
      retryable: true,
      message: `The deployment's model token limit (WDS_LLM_TOKENS_PER_MINUTE=${limit}) is used up for this minute; the model step waits ${Math.ceil(retryAfterMs / 1000)} s for the next window.`,
    });
    this.name = 'TokenLimitError';
    this.retryAfterMs = retryAfterMs;
  }
}

/** null when there is no limit (0). */
export function createTokenBudget(db: Db, tokensPerMinute: number): TokenBudget | null {
  if (!tokensPerMinute || tokensPerMinute <= 0) return null;
  return {
    tokensPerMinute,
    async reserve(tokens) {
      const r = await reserveLlmTokens(db, tokens, tokensPerMinute);
      if (!r.granted) {
        llmTokenLimitWaits.inc();
        throw new TokenLimitError(tokensPerMinute, r.retryAfterMs);
      }
      let settled = false;
      return async (used) => {
        if (settled) return;
        settled = true;
        await settleLlmTokens(db, r.windowStart, used - Math.ceil(tokens));
      };
    },
  };
}

/**
 * Runs a model step within the budget: reserves `estimate()` first (nothing is estimated without
 * a limit), then corrects by the step's real usage — also when it fails (tokens of a failed
 * call are counted when the provider reported them, else given back).
 */
export async function withTokenBudget<T extends { usage: Usage }>(budget: TokenBudget | null | undefined, estimate: () => number, step: () => Promise<T>): Promise<T> {
  if (!budget) return step();
  const settle = await budget.reserve(estimate());
  try {
    const r = await step();
    await settle(r.usage.totalTokens);
    return r;
  } catch (e) {
    await settle(isLlmError(e) ? (e.usage?.totalTokens ?? 0) : 0).catch(() => {});
    throw e;
  }
}

/** Instructions, markers and the chat framing of one call, beyond the page and the user's own text. */
const PROMPT_OVERHEAD = 250;

/**
 * What one page's model step may use, in tokens: per call, its prompt (the page as it will be
 * fitted to the context window, the instructions, the user's schema/prompt/question) plus its
 * output budget (as sent in max_tokens). An over-estimate is corrected after the step; the
 * repair turn of a json reply that failed its schema is not foreseen and is counted afterwards.
 */
export function estimateStepTokens(config: Pick<LlmConfig, 'limits'>, o: Pick<ScrapeOptions, 'formats' | 'onlyCleanContent'>, markdown: string): number {
  const { contextWindow, maxOutput } = config.limits;
  const usable = Math.floor(contextWindow * (1 - CONTEXT_MARGIN));
  // Bounded work even for a huge page: nothing beyond the window is counted.
  const pageTokens = truncateToTokens(markdown, usable).tokens;
  const call = (output: number, extra = '') => {
    const out = Math.min(output, maxOutput);
    const prompt = Math.min(pageTokens + PROMPT_OVERHEAD + countTokens(extra), usable);
    return prompt + out;
  };
  const work = llmWork(o);
  let total = 0;
  const json = o.formats.find((f) => f.type === 'json') as { schema?: unknown; prompt?: string; checkPromptInjection?: boolean } | undefined;
  if (json?.checkPromptInjection) total += call(OUTPUT_TOKENS.injection);
  if (work.clean) total += call(pageTokens); // the cleaned copy is about as long as the page
  if (json) total += call(OUTPUT_TOKENS.json, `${json.prompt ?? ''}${json.schema ? JSON.stringify(json.schema) : ''}`);
  // changeTracking json mode: the current page, and the previous version when its values must be read again (at most two).
  const ct = changeTrackingOf(o);
  if (work.changeTrackingJson && ct) total += 2 * call(OUTPUT_TOKENS.json, `${ct.prompt ?? ''}${ct.schema ? JSON.stringify(ct.schema) : ''}`);
  if (work.formats.includes('summary')) total += call(OUTPUT_TOKENS.summary);
  const question = o.formats.find((f) => f.type === 'question') as { question?: string } | undefined;
  if (question) total += call(OUTPUT_TOKENS.question, question.question ?? '');
  const highlights = o.formats.find((f) => f.type === 'highlights') as { query?: string } | undefined;
  if (highlights) total += call(OUTPUT_TOKENS.highlights, highlights.query ?? '');
  return total;
}
