import type { LlmClient } from './client';
import { callOpts, callWithLadder, type CallOptions } from './extract';
import { isLlmError } from './errors';
import { injectionPrompt, OUTPUT_TOKENS, type PageInput } from './prompts';
import { parseJsonReply, stripThinking } from './reply-text';
import { countMessageTokens, CONTEXT_MARGIN, splitByTokens } from './tokens';
import { addUsage, emptyUsage, type Usage } from './usage';

/**
 * `checkPromptInjection`: a classifier call over the page before any LLM format reads it. Pages
 * larger than one request are scanned in pieces (stopping at the first positive). Following
 * Firecrawl's documented behaviour, a check that cannot scan everything — content over 2,000,000
 * characters, a verdict that cannot be read, a provider that refuses the request — does not
 * block the scrape: the verdict is `unknown` with a warning (and the check is not billed).
 * Transient provider failures (429, 5xx, timeouts) are thrown instead, so Temporal retries them.
 */

export type InjectionVerdict = 'injection' | 'safe' | 'unknown';

export interface InjectionCheck {
  verdict: InjectionVerdict;
  reason?: string;
  usage: Usage;
  /** Pieces of the page the classifier read. */
  chunks: number;
  warning?: string;
}

export const MAX_INJECTION_SCAN_CHARS = 2_000_000;

/** Only sent to the model (the reply is read by parseVerdict, which takes more shapes than this). */
const VERDICT_SCHEMA = {
  providerSchema: {
    type: 'object',
    properties: { injection: { type: 'boolean' }, reason: { type: 'string' } },
    required: ['injection', 'reason'],
    additionalProperties: false,
  },
};

export async function checkPromptInjection(client: LlmClient, page: PageInput, opts: CallOptions = {}): Promise<InjectionCheck> {
  let usage = emptyUsage();
  if (page.markdown.length > MAX_INJECTION_SCAN_CHARS) {
    return { verdict: 'unknown', usage, chunks: 0, warning: `The prompt-injection check was skipped: the content is over ${MAX_INJECTION_SCAN_CHARS} characters.` };
  }
  const { limits } = client.config;
  const overhead = countMessageTokens(injectionPrompt(page, '', limits).messages);
  const perChunk = Math.max(256, Math.floor(limits.contextWindow * (1 - CONTEXT_MARGIN)) - OUTPUT_TOKENS.injection - overhead);
  const chunks = splitByTokens(page.markdown, perChunk);
  let read = 0;
  for (const chunk of chunks) {
    let text: string | null;
    try {
      const { result } = await callWithLadder(client, {
        schema: VERDICT_SCHEMA,
        build: () => injectionPrompt(page, chunk, limits),
        options: callOpts(opts),
        onUsage: (u) => (usage = addUsage(usage, u)),
      });
      text = result.content;
    } catch (e) {
      if (isLlmError(e) && !e.retryable) {
        return { verdict: 'unknown', usage, chunks: read, warning: `The prompt-injection check could not run: ${e.message}.` };
      }
      throw e;
    }
    read++;
    const v = parseVerdict(text);
    if (v.verdict === 'injection') return { ...v, usage, chunks: read };
    if (v.verdict === 'unknown') return { verdict: 'unknown', usage, chunks: read, warning: 'The prompt-injection check returned no readable verdict.' };
  }
  return { verdict: 'safe', usage, chunks: read };
}

/**
 * The classifier's reply → verdict. Accepts the JSON we ask for and the shapes small models drift
 * into ({"verdict":"safe"}, {"prompt_injection":true}, a bare "INJECTION"/"SAFE" or yes/no).
 */
export function parseVerdict(text: string | null | undefined): { verdict: InjectionVerdict; reason?: string } {
  const body = stripThinking(text ?? '');
  const parsed = parseJsonReply(body);
  if (parsed.ok && parsed.value && typeof parsed.value === 'object' && !Array.isArray(parsed.value)) {
    const o = parsed.value as Record<string, unknown>;
    const reason = typeof o.reason === 'string' ? o.reason : typeof o.explanation === 'string' ? o.explanation : undefined;
    for (const k of ['injection', 'is_injection', 'prompt_injection', 'promptInjection', 'detected', 'isInjection']) {
      const b = asBool(o[k]);
      if (b !== undefined) return { verdict: b ? 'injection' : 'safe', reason };
    }
    if (typeof o.verdict === 'string') return { verdict: wordVerdict(o.verdict), reason };
    if (typeof o.label === 'string') return { verdict: wordVerdict(o.label), reason };
    return { verdict: 'unknown', reason };
  }
  return { verdict: wordVerdict(body) };
}

function asBool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'yes') return true;
  if (v === 'false' || v === 'no') return false;
  return undefined;
}

function wordVerdict(s: string): InjectionVerdict {
  const w = s.trim().toLowerCase();
  if (/^(injection|prompt[ _-]?injection|unsafe|malicious|yes|true|detected)\b/.test(w)) return 'injection';
  if (/^(safe|clean|benign|no|false|none|not[ _-]?detected)\b/.test(w)) return 'safe';
  return 'unknown';
}
