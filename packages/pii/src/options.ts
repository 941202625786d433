import type { PiiBucket, PiiMode, RedactOptions, ReplaceStyle } from './types';

/** The request's `redactPII`: `true`/`false` or Firecrawl's options object (plus our `hash` style). */
export type RedactPiiRequest = boolean | { mode?: PiiMode; entities?: PiiBucket[]; replaceStyle?: ReplaceStyle };

/** The redactor's options for a request value, or null when it asks for no redaction. */
export function piiOptionsOf(v: RedactPiiRequest | undefined, hashKey?: string): RedactOptions | null {
  if (!v) return null;
  if (v === true) return { mode: 'fast', replaceStyle: 'tag', hashKey };
  return { mode: v.mode ?? 'fast', entities: v.entities, replaceStyle: v.replaceStyle ?? 'tag', hashKey };
}

/**
 * Whether the request asks for the model pass: an options object naming `mode` `accurate` or
 * `aggressive`. `true` and an object without `mode` run the deterministic detectors only (which
 * work without an LLM; Firecrawl's own default is its model).
 */
export const wantsModelPass = (v: RedactPiiRequest | undefined): boolean => typeof v === 'object' && (v.mode === 'accurate' || v.mode === 'aggressive');
