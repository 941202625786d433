import type { AgentMessageRow } from '@wds/db';
import { countMessageTokens, CONTEXT_MARGIN, truncateToTokens, type ChatMessage, type ModelLimits, type ToolCall } from '@wds/llm';

/**
 * The model's view of a run: the opening turns (system prompt, the request, a thread's earlier
 * turns) and a window of the latest steps, fitted to the context window. Older steps drop out
 * first; their results that matter are in saved results and in the model's own later turns.
 */

/** Steps a model call reads back (before fitting to the window). */
export const TRANSCRIPT_STEPS = 12;
/** One tool result is cut to this many tokens when stored (a page's head is what the model reads). */
export const TOOL_RESULT_TOKENS = 6_000;

export function toChat(row: AgentMessageRow): ChatMessage {
  if (row.role === 'assistant') {
    const calls = (row.toolCalls ?? []) as ToolCall[];
    return { role: 'assistant', content: row.content, ...(calls.length ? { toolCalls: calls } : {}) };
  }
  if (row.role === 'tool') return { role: 'tool', content: row.content ?? '', toolCallId: row.toolCallId ?? '' };
  return { role: row.role, content: row.content ?? '' };
}

/**
 * Fits the transcript into `limits.contextWindow` less the reply and the tool specs: whole steps
 * are dropped oldest first (an assistant turn never loses the results of its calls), and if the
 * newest step alone is still too large its tool results are cut.
 */
export function fitTranscript(rows: AgentMessageRow[], limits: ModelLimits, reserved: number): { messages: ChatMessage[]; tokens: number } {
  const budget = Math.floor(limits.contextWindow * (1 - CONTEXT_MARGIN)) - reserved;
  const head = rows.filter((r) => r.step === 0).map(toChat);
  const steps = new Map<number, ChatMessage[]>();
  for (const r of rows) if (r.step > 0) steps.set(r.step, [...(steps.get(r.step) ?? []), toChat(r)]);
  const groups = [...steps.keys()].sort((a, b) => a - b).map((k) => steps.get(k)!);
  const size = (ms: ChatMessage[]) => countMessageTokens(ms.map((m) => ({ content: m.content ?? JSON.stringify(m.toolCalls ?? []) })));
  // Each group is counted once (encoding is the costly part of a step's bookkeeping).
  const sizes = groups.map(size);
  let total = size(head) + sizes.reduce((n, g) => n + g, 0);
  while (total > budget && groups.length > 1) {
    groups.shift();
    total -= sizes.shift()!;
  }
  if (total > budget && groups.length === 1) {
    const over = total - budget;
    const tools = groups[0]!.filter((m) => m.role === 'tool');
    const each = Math.max(200, Math.floor((size(tools) - over) / Math.max(1, tools.length)));
    for (const m of tools) m.content = truncateToTokens(m.content ?? '', each).text;
    total = size(head) + size(groups[0]!);
  }
  return { messages: [...head, ...groups.flat()], tokens: total };
}

/** A tool result as stored: cut to TOOL_RESULT_TOKENS, saying so. */
export function boundedToolText(text: string): string {
  const t = truncateToTokens(text, TOOL_RESULT_TOKENS);
  return t.truncated ? `${t.text}\n[… cut: the rest of this result is not shown]` : text;
}
