import { LlmCodes, isLlmError, type LlmError } from './errors';
import type { ModelLimits } from './models';
import { countMessageTokens } from './tokens';

/**
 * What a client learns about the model's real context from the server, so prompts built with
 * `client.limits` fit: WDS counts tokens with OpenAI's o200k encoding (tokens.ts), while a local
 * model's tokenizer may count the same page 10–40% higher (SmolLM2's does on repetitive English),
 * and a server's context may be smaller than configured (llama.cpp splits its context between
 * slots). Learned per process, only ever narrowing: the scale is the largest server÷ours ratio seen
 * (capped), the window the smallest the server stated. A prompt is counted again only when its
 * request came near the window, so ordinary calls pay no second encode.
 */
export interface ContextFit {
  limits(): ModelLimits;
  /** A call the server accepted, with the prompt tokens it reported. */
  served(messages: Array<{ content?: unknown }>, maxOutputTokens: number | undefined, serverPromptTokens: number): void;
  /** A call refused as too long: learns from the counts it states and marks `err` refittable when a rebuilt prompt would be smaller. */
  overflowed(messages: Array<{ content?: unknown }>, maxOutputTokens: number | undefined, err: LlmError): void;
}

/** The most the server's count may exceed ours before we stop believing it is the tokenizer. */
const MAX_SCALE = 4;
/** Requests below this share of the window are not re-counted: a wrong ratio cannot overflow them. */
const NEAR_EDGE = 0.6;
/** A ratio from an overflow is padded, since the rebuilt prompt is cut by our counts again. */
const OVERFLOW_PAD = 1.03;
/** Too small a prompt says more about the chat template than the tokenizer. */
const MIN_COUNTED = 64;
/** Without counts in the refusal, shrink by this much. */
const BLIND_STEP = 1.25;

/** Refusals after which the fit narrowed: a prompt rebuilt now is smaller than the refused one. */
const refittable = new WeakSet<LlmError>();

export function createContextFit(base: ModelLimits): ContextFit {
  let scale = 1;
  let window = base.contextWindow;
  const limits = (): ModelLimits => {
    const contextWindow = Math.floor(window / scale);
    return { contextWindow, maxOutput: Math.min(base.maxOutput, contextWindow) };
  };
  const raise = (to: number) => {
    const next = Math.min(MAX_SCALE, to);
    if (next <= scale) return false;
    scale = next;
    return true;
  };
  return {
    limits,
    served(messages, maxOutputTokens, serverPromptTokens) {
      if (serverPromptTokens + (maxOutputTokens ?? 0) < window * NEAR_EDGE) return;
      const ours = countMessageTokens(messages);
      if (ours >= MIN_COUNTED) raise(serverPromptTokens / ours);
    },
    overflowed(messages, maxOutputTokens, err) {
      const d = (err.details ?? {}) as { promptTokens?: number; requestedTokens?: number; contextTokens?: number };
      let changed = false;
      if (d.contextTokens && d.contextTokens < window) {
        window = d.contextTokens;
        changed = true;
      }
      const server = d.promptTokens ?? (d.requestedTokens !== undefined ? d.requestedTokens - (maxOutputTokens ?? 0) : undefined);
      const ours = countMessageTokens(messages);
      if (server !== undefined && server > 0 && ours >= MIN_COUNTED) changed = raise((server / ours) * OVERFLOW_PAD) || changed;
      else if (!changed) changed = raise(scale * BLIND_STEP);
      if (changed) refittable.add(err);
    },
  };
}

/**
 * Runs `attempt` (which builds its prompt from `client.limits`) and, when the server refused it as
 * too long and the client learned a narrower fit from that, once more: the rebuilt prompt is cut
 * to what the server showed it takes. A second refusal is the caller's error.
 */
export async function retryRefitted<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (e) {
    if (isLlmError(e) && e.code === LlmCodes.CONTEXT_EXCEEDED && refittable.has(e)) return attempt();
    throw e;
  }
}
