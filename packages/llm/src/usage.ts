/** Tokens a model call (or a sequence of them) consumed, as the provider reported them. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Chat/embedding requests made, including fallbacks and repair attempts. */
  calls: number;
}

export const emptyUsage = (): Usage => ({ promptTokens: 0, completionTokens: 0, totalTokens: 0, calls: 0 });

export function addUsage(...parts: Array<Usage | undefined>): Usage {
  const out = emptyUsage();
  for (const u of parts) {
    if (!u) continue;
    out.promptTokens += u.promptTokens;
    out.completionTokens += u.completionTokens;
    out.totalTokens += u.totalTokens;
    out.calls += u.calls;
  }
  return out;
}
