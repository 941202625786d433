import { createHash } from 'node:crypto';

/**
 * What two scrapes of a page are compared on: its markdown with the churn that carries no
 * meaning removed, so a page that only re-wrapped its whitespace or rotated an anti-bot iframe
 * is `same`. The diff is computed over exactly this text, so a different hash always has a
 * non-empty diff and an equal hash never reports a change.
 *
 * - line endings → `\n`, trailing whitespace of every line dropped, runs of blank lines → one;
 * - leading/trailing blank lines dropped;
 * - iframe sources (captcha and bot-check frames change their URL on every load) blanked.
 */
export function normalizeMarkdown(markdown: string): string {
  return markdown
    .replace(/\r\n?/g, '\n')
    .replace(/(<iframe\b[^>]*\bsrc=)("[^"]*"|'[^']*'|[^\s>]+)/gi, '$1""')
    .split('\n')
    .map((l) => l.replace(/[ \t\u00a0]+$/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\n+|\n+$/g, '');
}

/** sha256 (hex) of a text, as stored in page_versions (markdown_hash, json_key). */
export const hashText = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/** sha256 (hex) of a fetched body: the cheap "identical bytes" check before any conversion. */
export const hashBody = (body: Uint8Array | string): string => createHash('sha256').update(body).digest('hex');

/** The hash a page's markdown is compared by. */
export const markdownHash = (markdown: string): string => hashText(normalizeMarkdown(markdown));

/** A JSON value with object keys sorted, so equal values have equal text (json_key, json comparisons). */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

/** The identity of a json-mode extraction: values extracted with another schema or prompt are not comparable. */
export const jsonModeKey = (schema: unknown, prompt: string | undefined): string => hashText(canonicalJson({ schema: schema ?? null, prompt: prompt ?? null }));
