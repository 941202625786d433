import type { ChatResult, LlmClient } from './client';
import { retryRefitted } from './context-fit';
import { callOpts, truncationWarning, type CallOptions } from './extract';
import { LlmCodes, LlmError, isLlmError } from './errors';
import { cleanContentPrompt, highlightsPrompt, questionPrompt, summaryPrompt, type BuiltPrompt, type PageInput } from './prompts';
import { stripThinking } from './reply-text';
import { countTokens } from './tokens';
import type { Usage } from './usage';

/**
 * The text formats: `summary` → data.summary, `question` → data.answer, `highlights` →
 * data.highlights, and the `onlyCleanContent` pass over the markdown. Each returns the text, the
 * usage, and a `warning` for data.warning when something limited the result (page truncated to
 * the context, reply cut at the output limit, passages that were not verbatim, cleaning skipped).
 */

export interface TextResult {
  text: string;
  usage: Usage;
  truncatedInput: boolean;
  warning?: string;
}

export function summarize(client: LlmClient, page: PageInput, opts: CallOptions = {}): Promise<TextResult> {
  return textCall(client, () => summaryPrompt(page, client.limits), opts, 'summary');
}

export function answerQuestion(client: LlmClient, page: PageInput, question: string, opts: CallOptions = {}): Promise<TextResult> {
  return textCall(client, () => questionPrompt(page, question, client.limits), opts, 'answer');
}

/**
 * Highlights are source text: passages the model did not copy verbatim are dropped (whitespace
 * and markdown emphasis aside), with a warning — a paraphrase presented as a quote is worse than
 * no quote.
 */
export async function findHighlights(client: LlmClient, page: PageInput, query: string, opts: CallOptions = {}): Promise<TextResult> {
  const r = await textCall(client, () => highlightsPrompt(page, query, client.limits), opts, 'highlights');
  const passages = r.text.split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean);
  const source = normalize(page.markdown);
  const kept = passages.filter((p) => source.includes(normalize(p)));
  const dropped = passages.length - kept.length;
  const warnings = [r.warning, dropped ? `${dropped} of ${passages.length} highlighted passages were not verbatim page text and were left out.` : undefined];
  return { ...r, text: kept.join('\n\n'), warning: joinWarnings(warnings) };
}

function normalize(s: string): string {
  return s.replace(/[*_`#>]|\[|\]\([^)]*\)/g, '').replace(/\s+/g, ' ').trim().toLowerCase();
}

/** `build` makes the prompt from the client's current limits (rebuilt once if the server refuses it as too long). */
async function textCall(client: LlmClient, build: () => BuiltPrompt, opts: CallOptions, what: string): Promise<TextResult> {
  let prompt!: BuiltPrompt;
  const r = await retryRefitted(() => {
    prompt = build();
    return client.chat({ messages: prompt.messages, maxOutputTokens: prompt.maxOutputTokens, ...callOpts(opts) });
  });
  if (r.refusal) throw new LlmError('UNPROCESSABLE', LlmCodes.REFUSED, { message: `The model refused: ${r.refusal.slice(0, 300)}`, retryable: false, usage: r.usage });
  const warnings = [
    prompt.truncated ? truncationWarning(prompt) : undefined,
    r.finishReason === 'length' ? `The ${what} was cut at the model's output-token limit.` : undefined,
  ];
  return { text: stripThinking(r.content ?? ''), usage: r.usage, truncatedInput: prompt.truncated, warning: joinWarnings(warnings) };
}

export interface CleanResult {
  markdown: string;
  /** False when the pass was skipped and `markdown` is the original. */
  cleaned: boolean;
  usage?: Usage;
  warning?: string;
}

/** Slack for the cleaned copy's length, in tokens beyond the input's. */
const CLEAN_SLACK = 1.1;

/**
 * The onlyCleanContent pass (spec: skipped with a warning, original markdown kept, when the
 * markdown exceeds the cleaning model's output-token limit). Also skipped — same warning shape —
 * when the page and its cleaned copy do not both fit the context, or when the reply was cut or
 * came back empty: a half-cleaned page would silently lose content.
 */
export async function cleanContent(client: LlmClient, page: PageInput, opts: CallOptions = {}): Promise<CleanResult> {
  if (!page.markdown.trim()) return { markdown: page.markdown, cleaned: false };
  const { limits } = client;
  const tokens = countTokens(page.markdown);
  const reserved = Math.ceil(tokens * CLEAN_SLACK) + 64;
  const skip = (why: string, usage?: Usage): CleanResult => ({
    markdown: page.markdown,
    cleaned: false,
    usage,
    warning: `onlyCleanContent was skipped: ${why}; the original markdown is returned.`,
  });
  if (tokens > limits.maxOutput) return skip(`the markdown (${tokens} tokens) exceeds the cleaning model's output limit (${limits.maxOutput} tokens)`);
  const wanted = Math.min(reserved, limits.maxOutput);
  const prompt = cleanContentPrompt(page, limits, wanted);
  // A reserve cut to half the window cannot hold the cleaned copy: the reply would be cut.
  if (prompt.truncated || prompt.maxOutputTokens < wanted) return skip(`the markdown (${tokens} tokens) and its cleaned copy do not fit the cleaning model's context window`);
  let r: ChatResult;
  try {
    r = await client.chat({ messages: prompt.messages, maxOutputTokens: prompt.maxOutputTokens, ...callOpts(opts) });
  } catch (e) {
    // A refused request (e.g. content policy) is a property of this page: keep the original.
    if (isLlmError(e) && !e.retryable) return skip(`the model provider rejected the request (${e.message})`, e.usage);
    throw e;
  }
  if (r.finishReason === 'length') return skip("the cleaned markdown was cut at the model's output limit", r.usage);
  const reply = stripThinking(r.content ?? '');
  const text = page.markdown.trimStart().startsWith('```') ? reply : unfence(reply);
  if (!text.trim() || r.refusal) return skip('the model returned no content', r.usage);
  return { markdown: text, cleaned: true, usage: r.usage };
}

/** Models often wrap the whole reply in ```markdown … ``` despite being asked not to. */
function unfence(s: string): string {
  const m = /^```(?:markdown|md)?\s*\n([\s\S]*?)\n```\s*$/.exec(s.trim());
  return m ? m[1]! : s;
}

export function joinWarnings(ws: Array<string | undefined>): string | undefined {
  const out = ws.filter((w): w is string => !!w);
  return out.length ? out.join(' ') : undefined;
}
