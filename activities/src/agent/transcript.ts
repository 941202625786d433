import type { AgentMessageRow } from '@wds/db';
import { countMessageTokens, CONTEXT_MARGIN, truncateToTokens, type ChatMessage, type ModelLimits, type ToolCall } from '@wds/llm';

/**
 * The model's view of a run: the opening turns (system prompt, the request, a thread's earlier
 * turns) and a window of the latest steps, fitted to the context window. Older steps drop out
 * first; their results that matter are in saved results and in the model's own later turns.
 */

/** The key of a step's assistant message (its tool calls): the step's own record and what its tools read. */
export const stepKey = (step: number) => `step:${step}`;

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

/** Tokens of a chat message list with nothing in it (the framing every count starts from). */
const EMPTY = countMessageTokens([]);
const contentOf = (m: ChatMessage) => m.content ?? JSON.stringify(m.toolCalls ?? []);

/**
 * Tokens of stored rows, per process: rows never change once written, and every step reads the
 * last TRANSCRIPT_STEPS steps' rows again; encoding them each time was about a tenth of the
 * worker's CPU per step. Keyed by run and row sequence; the oldest are forgotten first.
 */
const rowTokens = new Map<string, number>();
const ROW_TOKENS_KEPT = 20_000;
function tokensOfRow(r: AgentMessageRow, m: ChatMessage): number {
  const key = `${r.runId}:${r.seq}`;
  let n = rowTokens.get(key);
  if (n === undefined) {
    n = countMessageTokens([{ content: contentOf(m) }]) - EMPTY;
    if (rowTokens.size >= ROW_TOKENS_KEPT) rowTokens.delete(rowTokens.keys().next().value!);
    rowTokens.set(key, n);
  }
  return n;
}

/**
 * Fits the transcript into `limits.contextWindow` less the reply and the tool specs: whole steps
 * are dropped oldest first (an assistant turn never loses the results of its calls), and if the
 * newest step alone is still too large its tool results are cut.
 */
export function fitTranscript(rows: AgentMessageRow[], limits: ModelLimits, reserved: number): { messages: ChatMessage[]; tokens: number } {
  const budget = Math.floor(limits.contextWindow * (1 - CONTEXT_MARGIN)) - reserved;
  const headRows = rows.filter((r) => r.step === 0);
  const head = headRows.map(toChat);
  const steps = new Map<number, AgentMessageRow[]>();
  for (const r of rows) if (r.step > 0) steps.set(r.step, [...(steps.get(r.step) ?? []), r]);
  const stepRows = [...steps.keys()].sort((a, b) => a - b).map((k) => steps.get(k)!);
  const groups = stepRows.map((g) => g.map(toChat));
  const size = (ms: ChatMessage[]) => countMessageTokens(ms.map((m) => ({ content: contentOf(m) })));
  // A group's count is its rows' (cached) counts on the common framing: the same as counting it whole.
  const sizes = stepRows.map((g, i) => EMPTY + g.reduce((n, r, j) => n + tokensOfRow(r, groups[i]![j]!), 0));
  // The opening turns (system prompt, request) are read by every step: their counts are cached too.
  const headSize = EMPTY + headRows.reduce((n, r, j) => n + tokensOfRow(r, head[j]!), 0);
  let total = headSize + sizes.reduce((n, g) => n + g, 0);
  while (total > budget && groups.length > 1) {
    groups.shift();
    total -= sizes.shift()!;
  }
  if (total > budget && groups.length === 1) {
    const over = total - budget;
    const tools = groups[0]!.filter((m) => m.role === 'tool');
    const each = Math.max(200, Math.floor((size(tools) - over) / Math.max(1, tools.length)));
    for (const m of tools) m.content = truncateToTokens(m.content ?? '', each).text;
    total = headSize + size(groups[0]!);
  }
  return { messages: [...head, ...groups.flat()], tokens: total };
}

/** A tool result as stored: cut to TOOL_RESULT_TOKENS, saying so. */
export function boundedToolText(text: string): string {
  // Every token covers at least one UTF-8 byte: a text this short fits without being encoded.
  if (Buffer.byteLength(text) <= TOOL_RESULT_TOKENS) return text;
  const t = truncateToTokens(text, TOOL_RESULT_TOKENS);
  return t.truncated ? `${t.text}\n[… cut: the rest of this result is not shown]` : text;
}
