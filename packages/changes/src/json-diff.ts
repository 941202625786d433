import type { ChangeTracking } from '@wds/contracts';
import { canonicalJson } from './normalize';

export type JsonChanges = NonNullable<ChangeTracking['json']>;

/**
 * The `json` mode's answer: every key of the schema (its top-level `properties`; without them,
 * every key either extraction has) with its previous and current value, as Firecrawl's docs show
 * it — unchanged keys included, so a caller reads one shape. A value the model did not give is
 * null. `changedKeys` lists the keys whose values differ (compared canonically: key order in
 * objects does not count).
 */
export function jsonChanges(previous: unknown, current: unknown, schema?: Record<string, unknown>): { json: JsonChanges; changedKeys: string[] } {
  const prev = asObject(previous);
  const curr = asObject(current);
  const props = schema && typeof schema.properties === 'object' && schema.properties ? Object.keys(schema.properties as object) : [];
  const keys = props.length ? props : [...new Set([...Object.keys(prev), ...Object.keys(curr)])];
  const json: JsonChanges = {};
  const changedKeys: string[] = [];
  for (const k of keys) {
    const p = prev[k] ?? null;
    const c = curr[k] ?? null;
    json[k] = { previous: p, current: c };
    if (canonicalJson(p) !== canonicalJson(c)) changedKeys.push(k);
  }
  return { json, changedKeys };
}

function asObject(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * Field-level changes between two extractions, as monitors report them (Firecrawl's monitor
 * `diff.json`): only what differs, keyed by the JSON path into the extraction (`plans[0].price`,
 * `title`), each `{previous, current}` — null where a side has nothing. Objects are compared key
 * by key and arrays index by index; a value whose type changed is reported whole at its path.
 */
export function jsonFieldChanges(previous: unknown, current: unknown): Record<string, { previous: unknown; current: unknown }> {
  const out: Record<string, { previous: unknown; current: unknown }> = {};
  walk(previous ?? null, current ?? null, '', out);
  return out;
}

function walk(p: unknown, c: unknown, path: string, out: Record<string, { previous: unknown; current: unknown }>): void {
  if (canonicalJson(p) === canonicalJson(c)) return;
  if (Array.isArray(p) && Array.isArray(c)) {
    for (let i = 0; i < Math.max(p.length, c.length); i++) walk(i < p.length ? p[i] : null, i < c.length ? c[i] : null, `${path}[${i}]`, out);
    return;
  }
  const po = isPlainObject(p) ? p : null;
  const co = isPlainObject(c) ? c : null;
  if (po && co) {
    for (const k of new Set([...Object.keys(po), ...Object.keys(co)])) walk(po[k] ?? null, co[k] ?? null, path ? `${path}.${k}` : k, out);
    return;
  }
  out[path || '$'] = { previous: p, current: c };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
