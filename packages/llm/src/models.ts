/**
 * Context and output sizes of models, in tokens. Known OpenAI families are listed from OpenAI's
 * model pages; anything else (a local Llama, Qwen, Mistral behind vLLM or Ollama) gets the
 * conservative default unless the operator configures the real size. Over-estimating the window
 * makes the provider reject long pages (or, with Ollama, silently drop their start), so the
 * default is deliberately small.
 */
export interface ModelLimits {
  /** Input + output tokens the model accepts in one request. */
  contextWindow: number;
  /** Most tokens the model can generate in one reply. */
  maxOutput: number;
}

export const DEFAULT_LIMITS: ModelLimits = { contextWindow: 32_768, maxOutput: 4_096 };

const KNOWN: Array<[RegExp, ModelLimits]> = [
  [/^gpt-4o(-mini)?(\b|-)/, { contextWindow: 128_000, maxOutput: 16_384 }],
  [/^gpt-4\.1/, { contextWindow: 1_047_576, maxOutput: 32_768 }],
  [/^gpt-5/, { contextWindow: 400_000, maxOutput: 128_000 }],
  [/^o[134](-mini)?(\b|-)/, { contextWindow: 200_000, maxOutput: 100_000 }],
  [/^gpt-4-turbo/, { contextWindow: 128_000, maxOutput: 4_096 }],
  [/^gpt-3\.5-turbo/, { contextWindow: 16_385, maxOutput: 4_096 }],
];

/** Limits for a model: explicit overrides first, then the table, then the default. */
export function modelLimits(model: string, overrides: Partial<ModelLimits> = {}): ModelLimits {
  const bare = model.replace(/^.*\//, ''); // "openai/gpt-4o-mini" as routers name it
  const known = KNOWN.find(([re]) => re.test(bare))?.[1] ?? DEFAULT_LIMITS;
  const contextWindow = overrides.contextWindow ?? known.contextWindow;
  const maxOutput = Math.min(overrides.maxOutput ?? known.maxOutput, contextWindow);
  return { contextWindow, maxOutput };
}
