import { createHash } from 'node:crypto';
import { compileUserSchema } from '@wds/llm';
import type { CatalogCall, CatalogEntry } from './types';

/**
 * A call's `options` against its capability's JSON Schema (ajv on a schema thread under a deadline, the same
 * compiler and cache as the `json` format's schemas): a list of per-field problems, empty when valid. Checked in the
 * API before anything runs, so an invalid call is a 400 and never reaches a provider.
 */
export async function optionProblems(entry: CatalogEntry, options: Record<string, unknown>): Promise<string[]> {
  const r = await (await compileUserSchema(entry.optionsSchema)).validate(options);
  return r.ok ? [] : r.errors;
}

/** Canonical JSON: object keys sorted at every depth, so `{a,b}` and `{b,a}` are one request. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as object)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** What makes two requests with one x-request-id "the same": the calls, in order, options included. */
export function requestFingerprint(calls: readonly CatalogCall[]): string {
  return createHash('sha256').update(canonicalJson(calls.map((c) => ({ provider: c.provider, capability: c.capability, options: c.options })))).digest('hex');
}
