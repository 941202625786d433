import type { CatalogEntry } from './types';

/**
 * Tool search by words (search `sources: ["alexandria"]`, find-tools `query`). Lexical, not
 * semantic: a query's words are matched against each capability's name, path, categories,
 * description and when-to-use text, name and path counting double. Capabilities matching no word
 * are left out; ties keep catalog order. Firecrawl ranks with embeddings; a deployment's catalog
 * is small and written by its operator, so words are a fair and predictable substitute.
 */

const STOP = new Set(['the', 'and', 'for', 'with', 'about', 'from', 'that', 'this', 'what', 'which', 'who', 'how', 'are', 'was', 'get', 'find', 'data', 'der', 'die', 'das', 'und', 'les', 'des', 'une', 'est']);

export function words(text: string): string[] {
  return (text.toLowerCase().normalize('NFKD').replace(/[\u0300-\u036f]/g, '').match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length >= 2 && !STOP.has(w));
}

/** A query word matches an entry word equal to it or (for words of 4+ letters) sharing its first 4 letters and one being a prefix of the other (plural forms). */
const close = (q: string, w: string) => q === w || (q.length >= 4 && w.length >= 4 && (w.startsWith(q) || q.startsWith(w)));

export function score(e: CatalogEntry, query: string[]): number {
  const strong = words(`${e.name} ${e.capability.replace(/[/_-]/g, ' ')} ${e.providerName} ${e.provider}`);
  const weak = words(`${e.description} ${e.whenToUse ?? ''} ${e.categories.join(' ')} ${e.providerDescription ?? ''}`);
  let s = 0;
  for (const q of new Set(query)) {
    if (strong.some((w) => close(q, w))) s += 2;
    else if (weak.some((w) => close(q, w))) s += 1;
  }
  return s;
}

export function rankByQuery(entries: readonly CatalogEntry[], query: string): CatalogEntry[] {
  const q = words(query);
  if (!q.length) return [];
  return entries
    .map((e, i) => ({ e, i, s: score(e, q) }))
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.e);
}
