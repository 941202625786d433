/**
 * parseDocument: an uploaded file → markdown (POST /v2/parse). Dispatches on
 * the detected kind: PDF (parsePdf), DOCX (mammoth → HTML → htmlToMarkdown),
 * HTML (transformHtml, whole page), plain text / markdown (as is), images
 * (tesseract OCR through the PDF layout pass).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WdsError, ScrapeCodes } from '@wds/errors';
import { decodeBody } from '@wds/fetch';
import { htmlToMarkdown } from '@wds/transform';
import { transformHtml } from '@wds/transform';
import { limiter } from '../limiter';
import { layoutDocument } from '../pdf/layout';
import type { PageLines } from '../pdf/layout';
import { buildLines } from '../pdf/lines';
import { ocrImage, OcrUnavailableError, tesseractLanguages } from '../pdf/ocr';
import { parsePdf, pdfTimeoutError } from '../pdf/parse';
import { siblingModule, WorkerPool } from '@wds/threads';
import type { PdfPage, PdfPageBlocks, PdfParseOptions } from '../pdf/types';
import { detectDocument, isUtf8Text } from './detect';
import type { DocumentKind } from './detect';
import type { DocxJob, DocxReply } from './docx-worker';

export interface ParseDocumentOptions {
  /** Original file name (its extension helps detection). */
  filename?: string;
  /** Declared Content-Type of the upload (may carry a charset). */
  contentType?: string;
  /** PDF options; `timeoutMs`, `signal`, `pages`, `blocks`, `pageMarkers`, `maxPages` also apply to images and DOCX. */
  pdf: PdfParseOptions;
  /** OCR languages (tesseract codes), overriding `pdf.ocrLanguages`. */
  ocrLanguages?: string[];
  /** URL relative links in an HTML upload are resolved against (left relative when absent). */
  baseUrl?: string;
}

export interface ParsedDocumentMetadata {
  contentType: string;
  numPages?: number;
  totalPages?: number;
  title?: string;
  [key: string]: unknown;
}

export interface ParsedDocument {
  /** Which parser ran. */
  kind: DocumentKind;
  markdown: string;
  html?: string;
  metadata: ParsedDocumentMetadata;
  pages?: PdfPage[];
  blocks?: PdfPageBlocks[];
}

/** Heap cap of the DOCX worker. */
const DOCX_WORKER_HEAP_MB = 512;
/**
 * DOCX conversions at once in this process: one thread's heap (512 MB) and inflate budget
 * (DOCX_LIMITS, 64 MiB held at most three times over: inflated parts, the rebuilt archive,
 * mammoth's copy) stay under 1 GB whatever the number of document slots; others wait their
 * turn inside their own deadline.
 */
const docxTurn = limiter(1);

const docxPool = new WorkerPool(
  { entry: siblingModule(import.meta.url, 'docx-worker'), preload: [import.meta.resolve('mammoth')], resourceLimits: { maxOldGenerationSizeMb: DOCX_WORKER_HEAP_MB } },
  { maxIdle: 1, maxJobs: 50 },
);
let nextDocxId = 1;

function firstHeading(markdown: string): string | undefined {
  const m = /^#{1,2}[ \t]+(.+?)[ \t#]*$/m.exec(markdown);
  return m ? m[1].trim() : undefined;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason instanceof WdsError
    ? signal.reason
    : new WdsError('REQUEST_TIMEOUT', { code: ScrapeCodes.TIMEOUT, retryable: false, message: 'Parsing was aborted.', cause: signal.reason });
}

/**
 * Run `work` under the options' deadline and signal: the AbortSignal handed to
 * `work` fires on either, and the returned promise rejects at that moment.
 */
async function bounded<T>(opts: PdfParseOptions, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const kill = new AbortController();
  if (opts.signal?.aborted) throw abortReason(opts.signal);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const e = pdfTimeoutError(opts.timeoutMs);
      kill.abort(e);
      reject(e);
    }, Math.max(1, opts.timeoutMs));
    onAbort = () => {
      const e = abortReason(opts.signal!);
      kill.abort(e);
      reject(e);
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work(kill.signal), stop]);
  } finally {
    clearTimeout(timer);
    if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
    if (!kill.signal.aborted) kill.abort(new Error('done'));
  }
}

function docxToHtml(bytes: Buffer, signal: AbortSignal): Promise<string> {
  return docxTurn(signal, () => convertOnThread(bytes, signal));
}

function docxFailure(m: Extract<DocxReply, { t: 'fail' }>): WdsError {
  if (m.refused === 'too-large') {
    return new WdsError('UNPROCESSABLE', { code: 'DOCX_TOO_COMPLEX', message: `The DOCX file cannot be converted: ${m.message} (a ZIP bomb, or a document too large to convert).` });
  }
  return new WdsError('UNPROCESSABLE', { code: 'DOCX_CORRUPT', message: `The DOCX file cannot be read (${m.message}).` });
}

function convertOnThread(bytes: Buffer, signal: AbortSignal): Promise<string> {
  const w = docxPool.acquire();
  const id = nextDocxId++;
  return new Promise<string>((resolve, reject) => {
    const done = (reuse: boolean) => {
      w.off('message', onMessage);
      w.off('error', onError);
      w.off('exit', onExit);
      signal.removeEventListener('abort', onAbort);
      if (reuse) docxPool.release(w);
      else void docxPool.discard(w);
    };
    const onMessage = (m: DocxReply) => {
      if (m.id !== id) return;
      done(true);
      if (m.t === 'result') resolve(m.html);
      else reject(docxFailure(m));
    };
    const onError = (e: Error & { code?: string }) => {
      done(false);
      reject(
        e?.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new WdsError('UNPROCESSABLE', { code: 'DOCX_TOO_COMPLEX', message: `The DOCX file needs more than ${DOCX_WORKER_HEAP_MB} MB to convert.` })
          : new WdsError('INTERNAL', { code: 'DOCX_PARSER_ERROR', message: 'The DOCX converter crashed.', cause: e }),
      );
    };
    const onExit = () => {
      done(false);
      reject(new WdsError('INTERNAL', { code: 'DOCX_PARSER_ERROR', message: 'The DOCX converter exited unexpectedly.' }));
    };
    const onAbort = () => {
      done(false);
      reject(signal.reason);
    };
    w.on('message', onMessage);
    w.on('error', onError);
    w.on('exit', onExit);
    signal.addEventListener('abort', onAbort, { once: true });
    const copy = new Uint8Array(bytes);
    const job: DocxJob = { t: 'job', id, bytes: copy };
    w.postMessage(job, [copy.buffer]);
  });
}

async function parseImage(bytes: Buffer, ext: string, opts: ParseDocumentOptions, signal: AbortSignal) {
  const languages = tesseractLanguages(opts.ocrLanguages ?? opts.pdf.ocrLanguages);
  const dir = await mkdtemp(join(tmpdir(), 'wds-img-'));
  try {
    let ocr;
    try {
      ocr = await ocrImage(bytes, { tmpDir: dir, languages, signal, ext });
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      if (e instanceof OcrUnavailableError) {
        throw new WdsError('FEATURE_NOT_AVAILABLE', { code: 'OCR_UNAVAILABLE', message: 'OCR is not available on this server (it needs the tesseract program).' });
      }
      throw new WdsError('UNPROCESSABLE', { code: 'IMAGE_CORRUPT', message: 'The image cannot be read.', cause: e });
    }
    const totalPages = ocr.length;
    const limit = opts.pdf.maxPages ?? totalPages;
    const pages: PageLines[] = ocr.slice(0, limit).map((p) => ({
      pageNumber: p.page,
      width: p.width || 1,
      height: p.height || 1,
      pxWidth: p.width || null,
      pxHeight: p.height || null,
      lines: buildLines(p.spans),
      source: 'ocr',
      status: 'ok',
    }));
    const out = layoutDocument(pages, { pages: opts.pdf.pages, blocks: opts.pdf.blocks, pageMarkers: opts.pdf.pageMarkers });
    return { out, numPages: pages.length, totalPages };
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

function unsupported(message: string): WdsError {
  return new WdsError('UNSUPPORTED_MEDIA_TYPE', { code: 'UNSUPPORTED_FILE_TYPE', message });
}

export async function parseDocument(bytes: Buffer, opts: ParseDocumentOptions): Promise<ParsedDocument> {
  const d = detectDocument(bytes, opts.filename, opts.contentType);
  if (d.kind === 'unsupported') {
    if (d.mismatch === 'pdf') throw new WdsError('UNPROCESSABLE', { code: 'PDF_CORRUPT', message: 'The file is declared as a PDF but is not one (no %PDF- header).' });
    if (d.mismatch === 'docx') throw new WdsError('UNPROCESSABLE', { code: 'DOCX_CORRUPT', message: 'The file is declared as DOCX but is not a DOCX (ZIP) file.' });
    if (d.mismatch === 'image') throw new WdsError('UNPROCESSABLE', { code: 'IMAGE_CORRUPT', message: `The file is declared as ${d.contentType} but is not a supported image.` });
    throw unsupported(
      `${d.reason ?? 'The file type is not supported'}. Supported: PDF, DOCX, HTML, plain text / markdown, images (PNG, JPEG, WebP, TIFF, GIF, BMP).`,
    );
  }

  switch (d.kind) {
    case 'pdf': {
      const r = await parsePdf(bytes, { ...opts.pdf, ocrLanguages: opts.ocrLanguages ?? opts.pdf.ocrLanguages });
      const metadata: ParsedDocumentMetadata = { ...r.metadata, contentType: d.contentType, numPages: r.numPages };
      if (r.totalPages !== undefined) metadata.totalPages = r.totalPages;
      const out: ParsedDocument = { kind: 'pdf', markdown: r.markdown, metadata };
      if (r.pages) out.pages = r.pages;
      if (r.blocks) out.blocks = r.blocks;
      return out;
    }
    case 'docx': {
      const html = await bounded(opts.pdf, (signal) => docxToHtml(bytes, signal));
      const markdown = htmlToMarkdown(html, { removeBase64Images: true });
      const metadata: ParsedDocumentMetadata = { contentType: d.contentType };
      const title = firstHeading(markdown);
      if (title) metadata.title = title;
      return { kind: 'docx', markdown, html, metadata };
    }
    case 'html': {
      const { text } = decodeBody(bytes, opts.contentType);
      const r = transformHtml(text, opts.baseUrl ?? '', {
        onlyMainContent: false,
        removeBase64Images: true,
        want: { markdown: true, html: true, links: false, images: false },
      });
      const metadata: ParsedDocumentMetadata = { contentType: d.contentType };
      for (const [k, v] of Object.entries(r.metadata)) if (v !== null && v !== undefined && k !== 'contentType') metadata[k] = v;
      const title = Array.isArray(r.metadata.title) ? r.metadata.title[0] : r.metadata.title;
      if (title) metadata.title = title;
      else delete metadata.title;
      const out: ParsedDocument = { kind: 'html', markdown: r.markdown ?? '', metadata };
      if (r.html !== undefined) out.html = r.html;
      return out;
    }
    case 'text': {
      // A declared charset wins; undeclared text that is not UTF-8 is most likely windows-1252.
      let declared = opts.contentType && /charset=/i.test(opts.contentType) ? opts.contentType : undefined;
      if (!declared && !isUtf8Text(bytes)) declared = 'text/plain; charset=windows-1252';
      const { text } = decodeBody(bytes, declared);
      const metadata: ParsedDocumentMetadata = { contentType: d.contentType };
      if (d.contentType === 'text/markdown') {
        const title = firstHeading(text);
        if (title) metadata.title = title;
      }
      return { kind: 'text', markdown: text, metadata };
    }
    case 'image': {
      const { out, numPages, totalPages } = await bounded(opts.pdf, (signal) => parseImage(bytes, d.imageExt ?? 'png', opts, signal));
      const metadata: ParsedDocumentMetadata = { contentType: d.contentType, numPages, totalPages };
      const title = out.firstHeading ?? undefined;
      if (title) metadata.title = title;
      const result: ParsedDocument = { kind: 'image', markdown: out.markdown, metadata };
      if (out.pages) result.pages = out.pages;
      if (out.blocks) result.blocks = out.blocks;
      return result;
    }
  }
}
