import { mapRequestSchema, scrapeUrlRequestSchema, searchRequestSchema, type MapRequest, type ScrapeUrlRequest, type SearchRequest } from '@wds/contracts';
import { searchCredits } from '@wds/search';
import type { FindToolsOptions } from './find-tools';
import type { BuiltinOperation, CatalogEntry } from './types';

/**
 * A built-in call's options as the request of the WDS operation it runs, checked by that
 * operation's own schema (the options schema only says what a caller may send): the API refuses
 * what would not make a valid request (400) before anything runs, and the activity builds the
 * same request again.
 */
export type BuiltinRequest =
  | { operation: 'scrape'; request: ScrapeUrlRequest }
  | { operation: 'map'; request: MapRequest }
  | { operation: 'search'; request: SearchRequest }
  | { operation: 'find-tools'; request: FindToolsOptions }
  | { operation: 'terms-show'; request: { provider: string } }
  | { operation: 'terms-accept'; request: { provider: string; version: string; digest?: string | null; confirmed: true } };

/** Defaults of the built-ins (smaller than the endpoints': a catalog call answers inline). */
const SEARCH_LIMIT = 5;
const MAP_LIMIT = 100;

const clampTimeout = (ms: number) => Math.min(Math.max(Math.floor(ms), 1_000), 300_000);

export function builtinRequest(op: BuiltinOperation, options: Record<string, unknown>, timeoutMs: number): { ok: true; value: BuiltinRequest } | { ok: false; problems: string[] } {
  const timeout = clampTimeout(timeoutMs);
  const parsed =
    op === 'scrape'
      ? scrapeUrlRequestSchema.safeParse({ formats: ['markdown'], ...options, timeout })
      : op === 'map'
        ? mapRequestSchema.safeParse({ limit: MAP_LIMIT, ...options, timeout })
        : op === 'search'
          ? searchRequestSchema.safeParse({ limit: SEARCH_LIMIT, ...options, sources: ['web'], timeout })
          : // find-tools and terms/*: the options schema (checked before) is the whole request.
            ({ success: true, data: options } as const);
  if (!parsed.success) return { ok: false, problems: parsed.error.issues.map((i) => `${i.path.join('.') || 'options'}: ${i.message}`) };
  return { ok: true, value: { operation: op, request: parsed.data } as BuiltinRequest };
}

/**
 * Credits set aside before a call runs: the capability's price; a built-in search the most its
 * `limit` can cost. What is billed afterwards is the call's real cost (never more than this for
 * endpoint and search calls; a built-in scrape of a long PDF bills its pages, as URL mode does).
 */
export function reservationOf(entry: CatalogEntry, options: Record<string, unknown>): number {
  if (entry.target.kind === 'builtin' && entry.target.operation === 'search') {
    const limit = typeof options.limit === 'number' ? options.limit : SEARCH_LIMIT;
    return Math.max(entry.creditsCost, searchCredits(limit));
  }
  return entry.creditsCost;
}
