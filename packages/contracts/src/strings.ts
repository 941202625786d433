import type { FieldIssue } from './field-issue';

/**
 * Text every request string must be: no NUL character and no UTF-16 surrogate without its
 * pair. Postgres refuses both in text and jsonb (a NUL is "invalid byte sequence", a lone
 * surrogate "unsupported Unicode escape sequence"), and neither has a use in a URL, a header,
 * a selector or a prompt. Checked once for every body, before its schema, so a new field
 * cannot forget it.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Deeper bodies are refused: no request needs them, and Postgres' jsonb has a nesting limit too. */
export const MAX_BODY_DEPTH = 64;
const MAX_ISSUES = 20;

export function badCharacters(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain NUL (\\u0000) characters';
  if (LONE_SURROGATE.test(s)) return 'must be valid Unicode (it contains an unpaired UTF-16 surrogate)';
  return null;
}

/** Issues for every string (and object key) of `value` that is not valid text, and for nesting beyond MAX_BODY_DEPTH. */
export function findBadStrings(value: unknown): FieldIssue[] {
  const issues: FieldIssue[] = [];
  // Iterative: a hostile body may nest thousands of levels, which recursion would overflow on.
  const stack: { v: unknown; path: (string | number)[] }[] = [{ v: value, path: [] }];
  while (stack.length && issues.length < MAX_ISSUES) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      const why = badCharacters(v);
      if (why) issues.push({ code: 'invalid_characters', path, message: `${label(path)} ${why}` });
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (path.length >= MAX_BODY_DEPTH) {
      issues.push({ code: 'too_deep', path, message: `${label(path)} is nested deeper than ${MAX_BODY_DEPTH} levels` });
      continue;
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: [...path, i] });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i]!;
      const why = badCharacters(k);
      if (why) issues.push({ code: 'invalid_characters', path: [...path, k], message: `The key of ${label([...path, k])} ${why}` });
      else stack.push({ v: (v as Record<string, unknown>)[k], path: [...path, k] });
    }
  }
  return issues;
}

function label(path: (string | number)[]): string {
  return path.length ? path.join('.') : 'The body';
}
