import { STATUS_CODES } from 'node:http';
import type { DocumentMetadata, PdfParserOptions, ScrapeDocument, ScrapeOptions } from '@wds/contracts';
import { zdrCredits } from '@wds/contracts';
import { WdsError } from '@wds/errors';
import { decodeBody } from '@wds/fetch';
import { isPdf, parsePdf } from './pdf/parse';
import type { PdfMetadata, PdfPage, PdfPageBlocks } from './pdf/types';
import { transformHtml, transformText } from '@wds/transform';
import { transformHtmlAsync } from '@wds/transform';
import type { TransformOptions, TransformResult } from '@wds/transform';
import { addHtmlFormats, addMediaSources, menuOf, productOf, redactMarkdown, redactText, setAttributes, setMenu, setProduct } from './page-extras';
import { cacheReadNeedsBody, type PageOutputs } from './outputs';

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
  /** The model step will run after the build (capabilities: optionalLlmWork): no "model pass unavailable" warning. */
  llm?: boolean;
}

/** What PDF conversion additionally needs: the request's remaining budget and the caller's cancellation. */
export interface AsyncBuildContext extends BuildContext {
  /** Milliseconds left of the request's `timeout`; PDF conversion past it fails with 408 SCRAPE_TIMEOUT. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export type BodyKind = 'html' | 'pdf' | 'text' | 'binary';

const TEXT_TYPES = /^(text\/|application\/(json|ld\+json|xml|rss\+xml|atom\+xml|javascript|x-javascript|ecmascript|x-ndjson|yaml|x-yaml|csv)|.*\+json$|.*\+xml$)/;

const looksLikeHtml = (body: Buffer) => {
  const head = body.subarray(0, 512).toString('utf8').trimStart().toLowerCase();
  return head.startsWith('<!doctype html') || head.startsWith('<html');
};

/**
 * By magic bytes and content type, never by URL extension (servers mislabel PDFs and HTML
 * often): `%PDF-` is a PDF whatever the label; a body labelled application/pdf is one too
 * (a broken one then fails as PDF_CORRUPT) unless it is plainly an HTML page.
 */
export function classifyBody(mime: string, body: Buffer): BodyKind {
  if (isPdf(body)) return 'pdf';
  if (mime === 'application/pdf') return looksLikeHtml(body) ? 'html' : 'pdf';
  if (mime.includes('html')) return 'html';
  if (TEXT_TYPES.test(mime)) return 'text';
  if (looksLikeHtml(body)) return 'html';
  if (mime === '' || mime === 'application/octet-stream') {
    // Unlabelled bodies that decode as text are treated as text.
    return body.subarray(0, 1024).includes(0) ? 'binary' : 'text';
  }
  return 'binary';
}

export const mimeOf = (header: string) => header.split(';')[0]!.trim().toLowerCase();

/** The PDF parser the request asks for (spec default: one `pdf` entry, mode auto); null for `parsers: []`. */
export function pdfParserOf(o: Pick<ScrapeOptions, 'parsers'>): PdfParserOptions | null {
  if (!o.parsers) return { type: 'pdf', mode: 'auto', pages: false, blocks: false, pageMarkers: false };
  return o.parsers.find((p) => p.type === 'pdf') ?? null;
}

/** Whether building this page means converting a PDF (CPU-heavy, async: use buildDocumentAsync). */
export function needsPdfConversion(page: Pick<PageContent, 'contentTypeHeader' | 'body'>, o: Pick<ScrapeOptions, 'parsers'>): boolean {
  return classifyBody(mimeOf(page.contentTypeHeader), page.body) === 'pdf' && pdfParserOf(o) !== null;
}

/** The scrape document plus the PDF-only fields of the spec's response table. */
export type BuiltScrapeDocument = ScrapeDocument & { pages?: PdfPage[]; blocks?: PdfPageBlocks[] };

export interface BuiltDocument {
  document: BuiltScrapeDocument;
  charset: string | null;
  creditsUsed: number;
  /** Absolute links of the page, when ctx.collectLinks was set. */
  links?: string[];
  /** With ctx.collectLinks: the page's `<link rel="canonical">` URL, if any (crawl deduplication). */
  canonical?: string;
  /** HTML pages: what the conversion produced, to store with the page's cache entry (outputs.ts). */
  outputs?: PageOutputs;
}

function serviceMetadata(page: Omit<PageContent, 'body'>, kind: BodyKind, mime: string, ctx: BuildContext): DocumentMetadata {
  const metadata: DocumentMetadata = {
    sourceURL: page.requestedUrl,
    url: page.finalUrl,
    statusCode: page.statusCode,
    contentType: kind === 'pdf' ? 'application/pdf' : page.contentTypeHeader || mime,
    scrapeId: ctx.scrapeId,
    proxyUsed: 'basic',
    engine: ctx.engine,
  };
  if (page.statusCode >= 400) metadata.error = STATUS_CODES[page.statusCode] ?? `HTTP ${page.statusCode}`;
  if (ctx.cache) {
    metadata.cacheState = ctx.cache.state;
    if (ctx.cache.cachedAt) metadata.cachedAt = ctx.cache.cachedAt.toISOString();
  }
  return metadata;
}

/** A page decoded and classified, its service metadata set, ready for transformHtml (html) or done (text). */
interface PreparedPage {
  kind: 'html' | 'text';
  text: string;
  charset: string | null;
  metadata: DocumentMetadata;
  want: Set<string>;
}

/** Everything before the conversion itself; a page that needs none comes back built. */
function preparePage(page: PageContent, o: ScrapeOptions, ctx: BuildContext): { built: BuiltDocument } | { prepared: PreparedPage } {
  const mime = mimeOf(page.contentTypeHeader);
  const kind = classifyBody(mime, page.body);
  const metadata = serviceMetadata(page, kind, mime, ctx);

  if (kind === 'pdf') {
    if (pdfParserOf(o) === null) {
      const creditsUsed = 1 + zdrCredits(o);
      metadata.creditsUsed = creditsUsed;
      return { built: { document: { metadata, rawBase64: page.body.toString('base64') }, charset: null, creditsUsed } };
    }
    throw new WdsError('INTERNAL', { code: 'UNKNOWN_ERROR', message: 'Internal Server Error: PDF conversion must go through buildDocumentAsync' });
  }
  if (kind === 'binary') {
    throw new WdsError('UNSUPPORTED_MEDIA_TYPE', {
      message: `Unsupported Media Type: content of type '${mime || 'unknown'}' cannot be converted to the requested formats`,
      code: 'SCRAPE_UNSUPPORTED_FILE_TYPE',
    });
  }
  const decoded = page.charset ? decodeBody(page.body, `${mime}; charset=${page.charset}`) : decodeBody(page.body, page.contentTypeHeader);
  return { prepared: { kind, text: decoded.text, charset: decoded.charset, metadata, want: new Set(o.formats.map((f) => f.type)) } };
}

function transformOptions(o: ScrapeOptions, want: Set<string>, ctx: BuildContext): TransformOptions {
  return {
    onlyMainContent: o.onlyMainContent,
    includeTags: o.includeTags,
    excludeTags: o.excludeTags,
    removeBase64Images: o.removeBase64Images,
    want: { markdown: want.has('markdown'), html: want.has('html'), links: want.has('links') || !!ctx.collectLinks, images: want.has('images') },
  };
}

function assemble(p: PreparedPage, result: TransformResult, ctx: BuildContext, o: ScrapeOptions, pageUrl: string): BuiltDocument {
  // Text pages are their own markdown: nothing worth storing beside the cached body.
  const outputs = p.kind === 'html' ? outputsOf(p, result, pageUrl) : undefined;
  const parts = outputs ?? {
    metadata: result.metadata, markdown: result.markdown, html: result.html, links: result.links, images: result.images,
    product: p.want.has('product') ? productOf(null, pageUrl) : undefined,
    menu: p.want.has('menu') ? menuOf(null, pageUrl) : undefined,
  };
  const built = documentOf(parts, p.metadata, p.text, p.want, o, ctx, p.kind === 'html');
  addMediaSources(built.document, o, p.kind === 'html' ? p.text : null, pageUrl);
  return { ...built, charset: p.charset, links: ctx.collectLinks ? (result.links ?? []) : undefined, ...(ctx.collectLinks && result.canonical ? { canonical: result.canonical } : {}), outputs };
}

/** What the conversion produced that depends only on the page and the conversion options (see outputs.ts). */
function outputsOf(p: PreparedPage, result: TransformResult, pageUrl: string): PageOutputs {
  const out: PageOutputs = { metadata: result.metadata };
  if (result.markdown !== undefined) out.markdown = result.markdown;
  if (result.html !== undefined) out.html = result.html;
  if (result.links !== undefined) out.links = result.links;
  if (result.canonical !== undefined) out.canonical = result.canonical;
  if (result.images !== undefined) out.images = result.images;
  if (p.want.has('product')) out.product = productOf(p.text, pageUrl);
  if (p.want.has('menu')) out.menu = menuOf(p.text, pageUrl);
  return out;
}

/**
 * The request's document from the page's outputs: the formats it asks for, the service's
 * metadata (winning over the page's own <meta> tags), redaction and credits. Shared by fresh
 * conversions and cache hits served from stored outputs, so both answer the same.
 */
function documentOf(out: PageOutputs, service: DocumentMetadata, rawHtml: string | undefined, want: Set<string>, o: ScrapeOptions, ctx: BuildContext, isHtml = true): { document: ScrapeDocument; creditsUsed: number } {
  const doc: ScrapeDocument = { metadata: { ...out.metadata, ...service } };
  if (want.has('markdown')) doc.markdown = out.markdown ?? '';
  if (want.has('html')) doc.html = out.html ?? '';
  if (want.has('rawHtml')) doc.rawHtml = rawHtml ?? '';
  if (want.has('links')) doc.links = out.links ?? [];
  if (want.has('images')) doc.images = out.images ?? [];
  if (want.has('product')) setProduct(doc, out.product ?? productOf(null, ''));
  if (want.has('menu')) setMenu(doc, out.menu ?? menuOf(null, ''));
  // The request's own selectors: read from the page each time, never stored.
  if (want.has('attributes')) setAttributes(doc, o, isHtml ? (rawHtml ?? null) : null);
  const creditsUsed = 1 + redactMarkdown(doc, o, ctx.scrapeId, 1, ctx.llm) + zdrCredits(o);
  doc.metadata.creditsUsed = creditsUsed;
  return { document: doc, creditsUsed };
}

/** A cached HTML page (its body only when rawHtml, attributes or media are asked for) whose stored outputs cover the request. */
export type CachedPageContent = Omit<PageContent, 'body'> & { body: Buffer | null };

/**
 * A cache hit served from the outputs stored with the entry: no parsing, no conversion. The
 * caller checks `outputsCover` first; a request for rawHtml or the media formats (whose
 * candidates are read from the HTML) needs the body as well.
 */
export function documentFromOutputs(page: CachedPageContent, out: PageOutputs, o: ScrapeOptions, ctx: BuildContext): BuiltDocument {
  const mime = mimeOf(page.contentTypeHeader);
  const want = new Set(o.formats.map((f) => f.type));
  let html: string | undefined;
  if (cacheReadNeedsBody(o)) {
    if (!page.body) throw new WdsError('INTERNAL', { code: 'UNKNOWN_ERROR', message: 'Internal Server Error: rawHtml, attributes and media from the cache need the cached body' });
    html = decodeBody(page.body, page.charset ? `${mime}; charset=${page.charset}` : page.contentTypeHeader).text;
  }
  const built = documentOf(out, serviceMetadata(page, 'html', mime, ctx), html, want, o, ctx);
  addMediaSources(built.document, o, html ?? null, page.finalUrl);
  return { ...built, charset: page.charset ?? null, links: ctx.collectLinks ? (out.links ?? []) : undefined, ...(ctx.collectLinks && out.canonical ? { canonical: out.canonical } : {}) };
}

const textResult = (text: string): TransformResult => ({ ...transformText(text), html: text, links: [], images: [] });

/**
 * Builds the requested formats of an HTML/text page, or of a PDF with `parsers: []`
 * (rawBase64, flat 1 credit), on this thread. A PDF to convert needs buildDocumentAsync.
 */
export function buildDocument(page: PageContent, o: ScrapeOptions, ctx: BuildContext): BuiltDocument {
  const r = preparePage(page, o, ctx);
  if ('built' in r) return r.built;
  const p = r.prepared;
  return assemble(p, p.kind === 'html' ? transformHtml(p.text, page.finalUrl, transformOptions(o, p.want, ctx)) : textResult(p.text), ctx, o, page.finalUrl);
}

/**
 * buildDocument for every kind of page, converting PDFs (spec: Parsers): markdown, `pages`,
 * `blocks`, page markers, numPages/totalPages, 1 credit per page parsed. `html` is a plain
 * rendering of the markdown; `links`/`images` are empty; there is no `rawHtml`.
 */
export async function buildDocumentAsync(page: PageContent, o: ScrapeOptions, ctx: AsyncBuildContext): Promise<BuiltDocument> {
  const parser = pdfParserOf(o);
  if (!parser || !needsPdfConversion(page, o)) {
    // HTML is converted on a transform thread when the process has them (transform-pool.ts).
    const r = preparePage(page, o, ctx);
    if ('built' in r) return r.built;
    const p = r.prepared;
    if (p.kind === 'text') return assemble(p, textResult(p.text), ctx, o, page.finalUrl);
    return assemble(p, await transformHtmlAsync(p.text, page.finalUrl, transformOptions(o, p.want, ctx), ctx.timeoutMs), ctx, o, page.finalUrl);
  }

  const r = await parsePdf(page.body, {
    mode: parser.mode,
    maxPages: parser.maxPages,
    pages: parser.pages,
    blocks: parser.blocks,
    pageMarkers: parser.pageMarkers,
    timeoutMs: ctx.timeoutMs,
    signal: ctx.signal,
  });
  let creditsUsed = Math.max(1, r.numPages) + zdrCredits(o);
  const metadata: DocumentMetadata = { ...pdfMetadata(r.metadata), ...serviceMetadata(page, 'pdf', 'application/pdf', ctx), numPages: r.numPages };
  if (r.totalPages !== undefined) metadata.totalPages = r.totalPages;

  const want = new Set(o.formats.map((f) => f.type));
  const doc: BuiltScrapeDocument = { metadata };
  if (want.has('markdown')) doc.markdown = r.markdown;
  if (want.has('html')) doc.html = markdownToSimpleHtml(r.markdown);
  if (want.has('links')) doc.links = [];
  if (want.has('images')) doc.images = [];
  if (r.pages) doc.pages = r.pages;
  if (r.blocks) doc.blocks = r.blocks;
  addHtmlFormats(doc, o, null, page.finalUrl);
  addMediaSources(doc, o, null, page.finalUrl);
  // Redaction is charged per parsed page (Firecrawl's docs). Per-page markdown and each block's
  // content are redacted the same way; block offsets into the markdown no longer hold after it.
  if (o.redactPII) {
    creditsUsed += redactMarkdown(doc, o, ctx.scrapeId, r.numPages, ctx.llm);
    doc.pages = doc.pages?.map((pg) => ({ ...pg, markdown: redactText(pg.markdown, o, ctx.scrapeId) }));
    doc.blocks = doc.blocks?.map((b) => ({ ...b, items: b.items.map((it) => ({ ...it, content: redactText(it.content, o, ctx.scrapeId), markdownSpan: null })) }));
  }
  metadata.creditsUsed = creditsUsed;
  return { document: doc, charset: null, creditsUsed, links: ctx.collectLinks ? [] : undefined };
}

/** The PDF's own metadata (Info dictionary / XMP) as page metadata: string fields only. */
export function pdfMetadata(m: PdfMetadata): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m)) if (typeof v === 'string' && v.trim()) out[k] = v;
  return out;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const cells = (row: string) => row.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());

/**
 * A plain HTML rendering of the markdown the document converters emit (headings, paragraphs,
 * lists, GFM tables, rules, page-marker comments). Text is escaped; inline markdown is kept as
 * text. For documents that have no HTML of their own.
 */
export function markdownToSimpleHtml(markdown: string): string {
  const out: string[] = [];
  for (const block of markdown.split(/\n{2,}/)) {
    const b = block.trim();
    if (!b) continue;
    const lines = b.split('\n');
    const h = /^(#{1,6})\s+(.*)$/.exec(b);
    if (h && lines.length === 1) out.push(`<h${h[1]!.length}>${esc(h[2]!)}</h${h[1]!.length}>`);
    else if (/^(-{3,}|\*{3,})$/.test(b)) out.push('<hr>');
    else if (/^<!-- page \d+ -->$/.test(b)) out.push(b);
    else if (lines.every((l) => l.trim().startsWith('|'))) {
      const rows = lines.filter((l) => !/^\|?[\s:|-]+\|?$/.test(l.trim()) || !l.includes('-'));
      const [head, ...body] = rows.map(cells);
      const tr = (cs: string[], tag: string) => `<tr>${cs.map((c) => `<${tag}>${esc(c)}</${tag}>`).join('')}</tr>`;
      out.push(`<table><thead>${tr(head ?? [], 'th')}</thead><tbody>${body.map((r) => tr(r, 'td')).join('')}</tbody></table>`);
    } else if (lines.every((l) => /^\s*[-*+]\s+/.test(l))) {
      out.push(`<ul>${lines.map((l) => `<li>${esc(l.replace(/^\s*[-*+]\s+/, ''))}</li>`).join('')}</ul>`);
    } else if (lines.every((l) => /^\s*\d+[.)]\s+/.test(l))) {
      out.push(`<ol>${lines.map((l) => `<li>${esc(l.replace(/^\s*\d+[.)]\s+/, ''))}</li>`).join('')}</ol>`);
    } else out.push(`<p>${lines.map(esc).join('<br>')}</p>`);
  }
  return `<html><body>${out.join('\n')}</body></html>`;
}
