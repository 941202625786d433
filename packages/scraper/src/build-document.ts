import { STATUS_CODES } from 'node:http';
import type { DocumentMetadata, ScrapeDocument, ScrapeOptions } from '@wds/contracts';
import { PDF_PARSER_AVAILABLE } from '@wds/contracts';
import { WdsError } from '@wds/errors';
import { decodeBody } from './charset';
import { transformHtml, transformText } from './transform';

/** A fetched (or cached) page: the input of format building. */
export interface PageContent {
  requestedUrl: string;
  finalUrl: string;
  statusCode: number;
  /** The Content-Type header as received (may carry parameters). */
  contentTypeHeader: string;
  body: Buffer;
  /** Charset decided earlier (a cached page), else detected here. */
  charset?: string | null;
}

export interface BuildContext {
  scrapeId: string;
  engine: string;
  cache?: { state: 'hit' | 'miss'; cachedAt?: Date };
  /** Crawls need the page's links for discovery even when `links` is not a requested format. */
  collectLinks?: boolean;
}

export type BodyKind = 'html' | 'pdf' | 'text' | 'binary';

const TEXT_TYPES = /^(text\/|application\/(json|ld\+json|xml|rss\+xml|atom\+xml|javascript|x-javascript|ecmascript|x-ndjson|yaml|x-yaml|csv)|.*\+json$|.*\+xml$)/;

/** By content type first, then by magic bytes (servers mislabel PDFs and HTML often). */
export function classifyBody(mime: string, body: Buffer): BodyKind {
  if (body.subarray(0, 5).toString('latin1') === '%PDF-' || mime === 'application/pdf') return 'pdf';
  if (mime.includes('html')) return 'html';
  if (TEXT_TYPES.test(mime)) return 'text';
  const head = body.subarray(0, 512).toString('utf8').trimStart().toLowerCase();
  if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'html';
  if (mime === '' || mime === 'application/octet-stream') {
    // Unlabelled bodies that decode as text are treated as text.
    return body.subarray(0, 1024).includes(0) ? 'binary' : 'text';
  }
  return 'binary';
}

export const mimeOf = (header: string) => header.split(';')[0]!.trim().toLowerCase();

export interface BuiltDocument {
  document: ScrapeDocument;
  charset: string | null;
  creditsUsed: number;
  /** Absolute links of the page, when ctx.collectLinks was set. */
  links?: string[];
}

export function buildDocument(page: PageContent, o: ScrapeOptions, ctx: BuildContext): BuiltDocument {
  const mime = mimeOf(page.contentTypeHeader);
  const kind = classifyBody(mime, page.body);
  const want = new Set(o.formats.map((f) => f.type));
  const metadata: DocumentMetadata = {
    sourceURL: page.requestedUrl,
    url: page.finalUrl,
    statusCode: page.statusCode,
    contentType: page.contentTypeHeader || (kind === 'pdf' ? 'application/pdf' : mime),
    scrapeId: ctx.scrapeId,
    proxyUsed: 'basic',
    engine: ctx.engine,
  };
  if (page.statusCode >= 400) metadata.error = STATUS_CODES[page.statusCode] ?? `HTTP ${page.statusCode}`;
  if (ctx.cache) {
    metadata.cacheState = ctx.cache.state;
    if (ctx.cache.cachedAt) metadata.cachedAt = ctx.cache.cachedAt.toISOString();
  }

  const doc: ScrapeDocument = { metadata };
  let charset: string | null = null;

  if (kind === 'pdf') {
    if (o.parsers && o.parsers.length === 0) {
      doc.rawBase64 = page.body.toString('base64');
      metadata.contentType = 'application/pdf';
      metadata.creditsUsed = 1;
      return { document: doc, charset, creditsUsed: 1 };
    }
    if (!PDF_PARSER_AVAILABLE) {
      throw new WdsError('FEATURE_NOT_AVAILABLE', {
        message: "PDF parsing is not available in this deployment yet; send parsers: [] to receive the PDF as data.rawBase64.",
        code: 'PDF_PARSER_NOT_AVAILABLE',
      });
    }
  }
  if (kind === 'binary') {
    throw new WdsError('UNSUPPORTED_MEDIA_TYPE', {
      message: `Unsupported Media Type: content of type '${mime || 'unknown'}' cannot be converted to the requested formats`,
      code: 'SCRAPE_UNSUPPORTED_FILE_TYPE',
    });
  }

  const decoded = page.charset ? decodeBody(page.body, `${mime}; charset=${page.charset}`) : decodeBody(page.body, page.contentTypeHeader);
  charset = decoded.charset;
  const result =
    kind === 'html'
      ? transformHtml(decoded.text, page.finalUrl, {
          onlyMainContent: o.onlyMainContent,
          includeTags: o.includeTags,
          excludeTags: o.excludeTags,
          removeBase64Images: o.removeBase64Images,
          want: { markdown: want.has('markdown'), html: want.has('html'), links: want.has('links') || !!ctx.collectLinks, images: want.has('images') },
        })
      : { ...transformText(decoded.text), html: decoded.text, links: [], images: [] };

  // Page metadata first, so the service's own fields always win over a page's <meta> tags.
  doc.metadata = { ...result.metadata, ...metadata };
  if (want.has('markdown')) doc.markdown = result.markdown ?? '';
  if (want.has('html')) doc.html = result.html ?? '';
  if (want.has('rawHtml')) doc.rawHtml = decoded.text;
  if (want.has('links')) doc.links = result.links ?? [];
  if (want.has('images')) doc.images = result.images ?? [];
  doc.metadata.creditsUsed = 1;
  return { document: doc, charset, creditsUsed: 1, links: ctx.collectLinks ? (result.links ?? []) : undefined };
}
