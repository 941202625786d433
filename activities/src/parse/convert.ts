import type { ParseOptions, PdfParserOptions } from '@wds/contracts';
import { addHtmlFormats, detectDocument, markdownToSimpleHtml, parseDocument, redactMarkdown, redactText, type BuiltScrapeDocument, type PdfParseOptions } from '@wds/documents';
import { decodeBody } from '@wds/fetch';
import { extractImages, extractLinks, transformHtmlAsync } from '@wds/transform';
import { withDocumentSlot } from './slots';

/**
 * An upload → the document of POST /v2/parse, shaped like a scrape document. HTML uploads go
 * through the scrape path's transform with the request's cleaning options; PDF, DOCX, images
 * and text through the document engine (`parseDocument`). Library-level: no Temporal, no DB.
 */
export interface UploadInput {
  bytes: Buffer;
  /** Keys the `hash` style of redactPII (tokens are stable within one document). */
  jobId?: string;
  filename: string | null;
  contentType: string | null;
  options: ParseOptions;
  /** Budget for the whole conversion (ms), waiting for a converter slot included. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface ConvertedUpload {
  document: BuiltScrapeDocument;
  creditsUsed: number;
}

const DEFAULT_PDF: PdfParserOptions = { type: 'pdf', mode: 'auto', pages: false, blocks: false, pageMarkers: false };

/** As on scrape: no `parsers` means the default pdf parser; a list without one means "give me the PDF". */
function pdfParser(o: ParseOptions): PdfParserOptions | null {
  if (!o.parsers) return DEFAULT_PDF;
  return (o.parsers.find((p) => p.type === 'pdf') as PdfParserOptions | undefined) ?? null;
}

/**
 * An upload has no URL: relative references stay relative in markdown/html, and links/images
 * list only absolute http(s) URLs (relative ones resolve against this base and are dropped).
 */
const NO_BASE = 'file:///';

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export async function convertUpload(input: UploadInput): Promise<ConvertedUpload> {
  return withPageExtras(await convertOnly(input), input);
}

/** `product` (HTML uploads have structured data; other kinds get null and a warning) and `redactPII`, as on scrape. */
function withPageExtras(r: ConvertedUpload & { html?: string }, input: UploadInput): ConvertedUpload {
  const o = input.options;
  const doc = r.document;
  addHtmlFormats(doc, o, r.html ?? null, NO_BASE);
  let creditsUsed = r.creditsUsed;
  if (o.redactPII && !doc.rawBase64) {
    const key = input.jobId ?? '';
    creditsUsed += redactMarkdown(doc, o, key, r.creditsUsed);
    doc.pages = doc.pages?.map((pg) => ({ ...pg, markdown: redactText(pg.markdown, o, key) }));
    doc.blocks = doc.blocks?.map((b) => ({ ...b, items: b.items.map((it) => ({ ...it, content: redactText(it.content, o, key), markdownSpan: null })) }));
    doc.metadata.creditsUsed = creditsUsed;
  }
  return { document: doc, creditsUsed };
}

async function convertOnly(input: UploadInput): Promise<ConvertedUpload & { html?: string }> {
  const o = input.options;
  const want = new Set(o.formats.map((f) => f.type));
  const filename = input.filename ?? undefined;
  const contentType = input.contentType ?? undefined;
  const detected = detectDocument(input.bytes, filename, contentType);
  const sourceFile = filename ? { sourceFile: filename } : {};
  const parser = pdfParser(o);

  if (detected.kind === 'pdf' && parser === null) {
    const document: BuiltScrapeDocument = {
      rawBase64: input.bytes.toString('base64'),
      metadata: { contentType: 'application/pdf', ...sourceFile, creditsUsed: 1 } as BuiltScrapeDocument['metadata'],
    };
    return { document, creditsUsed: 1 };
  }

  if (detected.kind === 'html') {
    const { text } = decodeBody(input.bytes, contentType);
    // The scrape path's engine, on the process's transform threads, in one parse: an empty base
    // keeps relative references relative in markdown/html, and links/images keep only absolute
    // http(s) URLs (a relative one cannot be resolved against an empty base and is dropped).
    const r = await transformHtmlAsync(
      text,
      '',
      {
        onlyMainContent: o.onlyMainContent,
        includeTags: o.includeTags,
        excludeTags: o.excludeTags,
        removeBase64Images: o.removeBase64Images,
        want: { markdown: want.has('markdown'), html: want.has('html'), links: want.has('links'), images: want.has('images') },
      },
      input.timeoutMs,
    );
    const metadata: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(r.metadata)) if (v !== null && v !== undefined && k !== 'contentType') metadata[k] = v;
    const document: BuiltScrapeDocument = { metadata: { ...metadata, contentType: 'text/html', ...sourceFile, creditsUsed: 1 } as BuiltScrapeDocument['metadata'] };
    if (want.has('markdown')) document.markdown = r.markdown ?? '';
    if (want.has('html')) document.html = r.html ?? '';
    if (want.has('rawHtml')) document.rawHtml = text;
    if (want.has('links')) document.links = r.links ?? [];
    if (want.has('images')) document.images = r.images ?? [];
    return { document, creditsUsed: 1, html: text };
  }

  const p = parser ?? DEFAULT_PDF;
  const run = (timeoutMs: number) => {
    const pdf: PdfParseOptions = { mode: p.mode, maxPages: p.maxPages, pages: p.pages, blocks: p.blocks, pageMarkers: p.pageMarkers, timeoutMs, signal: input.signal };
    return parseDocument(input.bytes, { filename, contentType, pdf });
  };
  // Text is converted on this thread and cheap; PDF, DOCX and images take a sandboxed converter.
  const r = detected.kind === 'text' ? await run(input.timeoutMs) : await withDocumentSlot(input.timeoutMs, input.signal, run);

  const paged = r.kind === 'pdf' || r.kind === 'image';
  const creditsUsed = paged ? Math.max(1, r.metadata.numPages ?? 1) : 1;
  const document: BuiltScrapeDocument = { metadata: { ...r.metadata, ...sourceFile, creditsUsed } as BuiltScrapeDocument['metadata'] };
  if (want.has('markdown')) document.markdown = r.markdown;
  if (want.has('html')) {
    document.html = r.html ?? (r.metadata.contentType === 'text/plain' ? `<html><body><pre>${escapeHtml(r.markdown)}</pre></body></html>` : markdownToSimpleHtml(r.markdown));
  }
  if (want.has('rawHtml') && r.html !== undefined) document.rawHtml = r.html;
  // DOCX hyperlinks and image references live in the converted HTML; other kinds have none.
  if (want.has('links')) document.links = r.html ? extractLinks(r.html, NO_BASE) : [];
  if (want.has('images')) document.images = r.html ? extractImages(r.html, NO_BASE) : [];
  if (r.pages) document.pages = r.pages;
  if (r.blocks) document.blocks = r.blocks;
  return { document, creditsUsed };
}
