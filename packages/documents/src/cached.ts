import type { ScrapeOptions } from '@wds/contracts';
import { buildDocumentAsync, documentFromOutputs, type AsyncBuildContext, type BuiltDocument, type CachedPageContent } from './build-document';
import { cacheReadNeedsBody, outputsCover, storedFormatsNeeded, type PageOutputs } from './outputs';

/** A cache entry as read with its stored outputs (@wds/db findCachedPage with `want`). */
export interface CachedHit {
  finalUrl: string;
  statusCode: number;
  contentType: string;
  charset: string | null;
  /** Absent when the outputs serve the request (the reader asked for it only otherwise). */
  body: Buffer | null;
  outputs: object | null;
}

/**
 * A cache hit's document: from the outputs stored with the entry when they hold every format the
 * request needs (no conversion), else converted from the cached body. `added` is what that
 * conversion produced, for the caller to add to the entry (`addCachedOutputs`), so the next hit
 * asking for it is served without converting.
 */
export async function buildFromCache(requestedUrl: string, hit: CachedHit, o: ScrapeOptions, ctx: AsyncBuildContext): Promise<{ built: BuiltDocument; added?: PageOutputs }> {
  const page: CachedPageContent = { requestedUrl, finalUrl: hit.finalUrl, statusCode: hit.statusCode, contentTypeHeader: hit.contentType, body: hit.body, charset: hit.charset };
  const outputs = hit.outputs as PageOutputs | null;
  if (outputsCover(outputs, storedFormatsNeeded(o, ctx.collectLinks)) && (!cacheReadNeedsBody(o) || hit.body)) return { built: documentFromOutputs(page, outputs, o, ctx) };
  if (!hit.body) throw new Error('buildFromCache: the entry was read without its body although its outputs do not cover the request');
  const built = await buildDocumentAsync({ ...page, body: hit.body }, o, ctx);
  return { built, added: built.outputs };
}

