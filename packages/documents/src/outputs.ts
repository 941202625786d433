import { createHash } from 'node:crypto';
import type { ScrapeOptions } from '@wds/contracts';
import { TRANSFORM_VERSION, type MetaValue } from '@wds/transform';
import type { MenuResult, ProductResult } from '@wds/product';

/**
 * What converting an HTML page produced, kept with its cache entry (page_cache.outputs) so a
 * cache hit serves the formats without parsing the page again. Only what depends on the page
 * and the conversion options is here; what depends on the request (scrapeId, cacheState,
 * credits, redaction, the formats picked) is added per request by `documentFromOutputs`.
 */
export interface PageOutputs {
  /** The page's own metadata (title, description, og:*, …); the service's fields are not stored. */
  metadata: Record<string, MetaValue | null>;
  markdown?: string;
  html?: string;
  links?: string[];
  /** The page's canonical URL (with links; absent in entries stored before it was kept). */
  canonical?: string;
  images?: string[];
  /** The `product` format as extracted (product or null, and its warning). */
  product?: ProductResult;
  /** The `menu` format as extracted (the menu or none, and its warning). */
  menu?: MenuResult;
}

/** The stored formats a request can be served from (rawHtml is the page itself: the cached body). */
export const STORED_FORMATS = ['markdown', 'html', 'links', 'images', 'product', 'menu'] as const;
export type StoredFormat = (typeof STORED_FORMATS)[number];

/**
 * The key of the conversion options within one cache entry: every option that changes what a
 * stored format holds, and the transform's version, so options never share outputs and a new
 * engine never serves an old engine's output. Formats are not part of it: one entry gathers the
 * formats produced so far for these options.
 */
export function outputsVariant(o: Pick<ScrapeOptions, 'onlyMainContent' | 'includeTags' | 'excludeTags' | 'removeBase64Images'>): string {
  const options = [o.onlyMainContent, o.includeTags ?? null, o.excludeTags ?? null, o.removeBase64Images];
  return `t${TRANSFORM_VERSION}:${createHash('sha1').update(JSON.stringify(options)).digest('base64url').slice(0, 16)}`;
}

/** The stored formats a request needs (links also when the caller collects them, as crawls do). */
export function storedFormatsNeeded(o: Pick<ScrapeOptions, 'formats'>, collectLinks = false): StoredFormat[] {
  const want = new Set<string>(o.formats.map((f) => f.type));
  if (collectLinks) want.add('links');
  return STORED_FORMATS.filter((f) => want.has(f));
}

/** Whether the stored outputs hold every format the request needs. */
export const outputsCover = (out: PageOutputs | null | undefined, needed: readonly StoredFormat[]): out is PageOutputs =>
  !!out && typeof out.metadata === 'object' && needed.every((f) => out[f] !== undefined);

/**
 * Whether a cached page must be read with its body for this request: rawHtml is the body itself,
 * attributes read it with the request's selectors, and the audio/video formats take their
 * candidates from the page's HTML.
 */
export const cacheReadNeedsBody = (o: Pick<ScrapeOptions, 'formats'>) => o.formats.some((f) => f.type === 'rawHtml' || f.type === 'attributes' || f.type === 'audio' || f.type === 'video');
