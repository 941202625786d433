import { createRequire } from 'node:module';
import type { ModelLimits } from './models';

/**
 * Token counting with OpenAI's o200k_base encoding (gpt-tokenizer, pure JS). It is exact for
 * the GPT-4o/4.1/5 and o-series families; for other models (Llama, Qwen, Mistral) it is an
 * estimate — their tokenizers usually produce 0–20% more tokens for English text, which is why
 * the prompt budget keeps a safety margin (CONTEXT_MARGIN).
 *
 * The encoder (≈0.4 s to load) is loaded on first use, so importing this package costs nothing
 * for processes that only validate schemas or read configuration (workers serving wds-llm load it
 * at start-up: loadTokenizer).
 */
type Encoder = typeof import('gpt-tokenizer/encoding/o200k_base');
let encoder: Encoder | undefined;
function enc(): Encoder {
  encoder ??= createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as Encoder;
  return encoder;
}

/**
 * Loads the encoder now: a process that will count tokens (one serving wds-llm) calls this at
 * start-up, so its first model call does not spend the load (≈0.4 s of CPU, the event loop
 * blocked) in the middle of a job.
 */
export function loadTokenizer(): void {
  enc();
}

// Page text is untrusted: "<|endoftext|>" in it is plain text, not a special token (and must not throw).
const PLAIN = { disallowedSpecial: new Set<string>() };

/** Share of the context window left unused, for tokenizer differences between model families. */
export const CONTEXT_MARGIN = 0.1;
/** Tokens a chat message costs beyond its content (role, separators), and the reply primer. */
const PER_MESSAGE = 4;
const PRIMER = 3;

export function countTokens(text: string): number {
  if (!text) return 0;
  return enc().encode(text, PLAIN).length;
}

/** Tokens of a chat request's messages, as OpenAI counts them (content + per-message overhead). */
export function countMessageTokens(messages: Array<{ content?: unknown }>): number {
  let n = PRIMER;
  for (const m of messages) n += PER_MESSAGE + countTokens(typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''));
  return n;
}

export interface Truncated {
  text: string;
  truncated: boolean;
  /** Tokens of the returned text. */
  tokens: number;
}

/**
 * The longest head of `text` within `maxTokens` tokens. Pages keep their main content first, so
 * the head is what we keep. Huge inputs are first cut by characters (no token is longer than
 * CHARS_PER_TOKEN_CAP characters in practice), so a 10 MB page does not cost a full encode.
 */
export function truncateToTokens(text: string, maxTokens: number): Truncated {
  if (maxTokens <= 0) return { text: '', truncated: text.length > 0, tokens: 0 };
  // Every token covers at least one UTF-8 byte: a text this short cannot exceed the limit.
  if (Buffer.byteLength(text) <= maxTokens) return { text, truncated: false, tokens: countTokens(text) };
  const precut = text.length > maxTokens * CHARS_PER_TOKEN_CAP ? text.slice(0, maxTokens * CHARS_PER_TOKEN_CAP) : text;
  const tokens = enc().encode(precut, PLAIN);
  if (tokens.length <= maxTokens) return { text: precut, truncated: precut.length < text.length, tokens: tokens.length };
  // A cut inside a multi-byte character decodes to U+FFFD: drop it.
  const head = enc().decode(tokens.slice(0, maxTokens)).replace(/\uFFFD+$/, '');
  return { text: head, truncated: true, tokens: countTokens(head) };
}
const CHARS_PER_TOKEN_CAP = 12;

export const TRUNCATION_MARKER = '\n\n[… page truncated to fit the model context …]';

export interface FitResult extends Truncated {
  /** Tokens the page may use in this request. */
  budget: number;
}

/**
 * Output tokens to reserve for a reply that wants `wanted`: capped by the model's output limit and
 * by half of the usable context, so the input always keeps the other half. Without the second cap
 * a small window (Ollama's and llama.cpp's 2–8k defaults, where the output limit defaults to the
 * whole window) left no room at all: the page was cut to nothing and the model answered blind.
 */
export function outputReserve(limits: ModelLimits, wanted: number): number {
  const half = Math.floor((limits.contextWindow * (1 - CONTEXT_MARGIN)) / 2);
  return Math.max(1, Math.min(wanted, limits.maxOutput, half));
}

/**
 * Fits page text into what a request leaves for it: the model's window, minus the safety margin,
 * the tokens reserved for the reply, and the rest of the prompt (instructions, schema, question).
 * The result (with its truncation marker) never exceeds the budget.
 */
export function fitToContext(page: string, opts: { limits: ModelLimits; reservedOutput: number; promptTokens: number }): FitResult {
  const usable = Math.floor(opts.limits.contextWindow * (1 - CONTEXT_MARGIN));
  const budget = Math.max(0, usable - opts.reservedOutput - opts.promptTokens);
  const whole = truncateToTokens(page, budget);
  if (!whole.truncated) return { ...whole, budget };
  if (budget === 0) return { text: '', truncated: true, tokens: 0, budget };
  // BPE merges at the junction can change the sum by a token or two: re-count and shrink until it fits.
  for (let room = budget - countTokens(TRUNCATION_MARKER); room > 0; room -= 2) {
    const text = truncateToTokens(page, room).text + TRUNCATION_MARKER;
    const tokens = countTokens(text);
    if (tokens <= budget) return { text, truncated: true, tokens, budget };
  }
  return { ...truncateToTokens(page, budget), truncated: true, budget };
}

/** Consecutive pieces of `text`, each within `maxTokens` tokens (for scanning pages larger than one request). */
export function splitByTokens(text: string, maxTokens: number): string[] {
  if (!text) return [];
  if (maxTokens <= 0) throw new RangeError('maxTokens must be positive');
  const tokens = enc().encode(text, PLAIN);
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i += maxTokens) out.push(enc().decode(tokens.slice(i, i + maxTokens)));
  return out;
}
