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
