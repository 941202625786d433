import type { z } from 'zod';
import type { FieldIssue } from './field-issue';
import { findBadStrings } from './strings';

export type { FieldIssue } from './field-issue';

/** zod issues → the `details` array of a 400 (per-field, stable shape). */
export function issuesToDetails(issues: readonly z.core.$ZodIssue[]): FieldIssue[] {
  return issues.map((i) => {
    const d: FieldIssue = {
      code: i.code,
      path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)),
      message: i.message,
    };
    if (i.code === 'unrecognized_keys') {
      d.keys = i.keys;
      d.message = `Unrecognized key(s) in object: ${i.keys.map((k) => `'${k}'`).join(', ')}`;
    }
    return d;
  });
}

/** Zod types re-exported so apps never import their own (possibly different) zod. */
export type Schema = z.ZodType;
export type Infer<S extends Schema> = z.output<S>;

export type ParseOutcome<T> = { ok: true; data: T } | { ok: false; details: FieldIssue[]; urlInvalid: boolean };

/**
 * Parses a body; reports whether the failure concerns `url` so callers can answer `Invalid URL`.
 * Every string of every body must be valid text (strings.ts), whatever its schema says.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): ParseOutcome<z.output<S>> {
  const bad = findBadStrings(body);
  // Too deep to walk safely: the schema is not asked.
  const r = bad.some((d) => d.code === 'too_deep') ? null : schema.safeParse(body ?? {});
  if (r?.success && !bad.length) return { ok: true, data: r.data };
  // A string the character check refused is one detail, not that one and the schema's pattern for it too.
  const refused = new Set(bad.map((d) => d.path.join('\u0000')));
  const schemaDetails = r && !r.success ? issuesToDetails(r.error.issues).filter((d) => !refused.has(d.path.join('\u0000'))) : [];
  const details = [...bad, ...schemaDetails];
  const urlInvalid = details.some((d) => d.path.length === 1 && d.path[0] === 'url');
  return { ok: false, details, urlInvalid };
}
