import type { Usage } from './usage';

/**
 * Credits of the LLM features, per Firecrawl's published pricing (sources in README "Credits"):
 * - scrape/crawl/batch page: 1 credit (base, billed by the scrape path, not here);
 * - `json` format: +4 per page;
 * - `question` and `highlights` formats: +4 per page *per format*;
 * - `changeTracking` json mode: +4 per page on which the model ran (Firecrawl: "JSON mode … costs 5 credits
 *   per page", the page's own credit included; a `same` page runs no model and costs nothing extra);
 * - `checkPromptInjection`: +4 per page when the check ran over the whole content; a scrape that
 *   fails after the check ran (including the 403 for a detected injection) is billed 5 in total
 *   instead of 0;
 * - `/v2/extract`: by tokens, 15 tokens per credit;
 * - monitors: `changeTracking` json mode +4 per page the model extracted (a json format's price:
 *   Firecrawl's monitor pricing bills format add-ons as a standalone scrape does); the goal judge
 *   +1 per changed page or search result it judged (Firecrawl: "1 credit per changed page that
 *   the judge validates", "1 credit per result judged").
 * Firecrawl publishes no figure for `summary` and `onlyCleanContent`; both are one model call
 * over the page like `question`, and we bill them the same +4 (SUMMARY, CLEAN_CONTENT: change
 * here if upstream publishes otherwise).
 */
export const LLM_CREDITS = {
  JSON: 4,
  QUESTION: 4,
  HIGHLIGHTS: 4,
  SUMMARY: 4,
  CLEAN_CONTENT: 4,
  PROMPT_INJECTION_CHECK: 4,
  CHANGE_TRACKING_JSON: 4,
  /** Total for a scrape that failed after the injection check ran. */
  FAILED_AFTER_INJECTION_CHECK: 5,
  EXTRACT_TOKENS_PER_CREDIT: 15,
  MONITOR_JSON: 4,
  MONITOR_JUDGE: 1,
} as const;

export interface LlmFormatUse {
  json?: boolean;
  summary?: boolean;
  /** Number of `question` format objects. */
  questions?: number;
  /** Number of `highlights` format objects. */
  highlights?: number;
  /** onlyCleanContent ran (not when it was skipped with a warning). */
  cleanContent?: boolean;
  /** The injection check scanned the whole content (verdict not `unknown`). */
  injectionCheck?: boolean;
}

/** Credits a successful page owes for its LLM formats, on top of the base scrape credit. */
export function llmFormatCredits(use: LlmFormatUse): number {
  return (
    (use.json ? LLM_CREDITS.JSON : 0) +
    (use.summary ? LLM_CREDITS.SUMMARY : 0) +
    (use.questions ?? 0) * LLM_CREDITS.QUESTION +
    (use.highlights ?? 0) * LLM_CREDITS.HIGHLIGHTS +
    (use.cleanContent ? LLM_CREDITS.CLEAN_CONTENT : 0) +
    (use.injectionCheck ? LLM_CREDITS.PROMPT_INJECTION_CHECK : 0)
  );
}

/** Credits of token-billed work (`/v2/extract`): 15 tokens a credit, rounded up. */
export function tokenCredits(usage: Pick<Usage, 'totalTokens'>): number {
  return Math.ceil(Math.max(0, usage.totalTokens) / LLM_CREDITS.EXTRACT_TOKENS_PER_CREDIT);
}
