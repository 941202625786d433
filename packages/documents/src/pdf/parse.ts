/**
 * parsePdf: pdf.js text extraction and the layout pass run in worker threads
 * (worker.ts); OCR child processes are started from this thread. One
 * deadline covers everything: on timeout or abort the workers are terminated
 * and the children killed, whatever state they are in.
 *
 * Pages are handed out in chunks. A long document is shared between the lead
 * worker and helpers (idle warm workers from 40 pages, freshly started ones
 * from 300; a document that finds no warm helper starts one for the next), so
 * extraction uses the machine's cores; the lead then lays out the whole
 * document. The job itself is job.ts.
 */
import { abortError, maxPagesError, notPdfError, pdfTimeoutError } from './errors';
import { ParseJob, pool } from './job';
import { tesseractLanguages } from './ocr';
import type { PdfParseOptions, PdfParseResult } from './types';

export { PDF_WORKER_HEAP_MB, pdfTimeoutError } from './errors';

const MAX_PAGES_LIMIT = 10000;

/** Start a parse worker ahead of the first PDF (loading pdf.js takes ~0.3-1 s). */
export function warmPdfWorker(): void {
  pool.warm();
}

/** `%PDF-` at the start (after an optional BOM / whitespace). */
export function isPdf(bytes: Uint8Array): boolean {
  let i = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3;
  while (i < bytes.length && i < 64 && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)) i++;
  return bytes.length >= i + 5 && Buffer.from(bytes.subarray(i, i + 5)).toString('latin1') === '%PDF-';
}

export async function parsePdf(bytes: Buffer, opts: PdfParseOptions): Promise<PdfParseResult> {
  const languages = checkInput(bytes, opts);
  if (opts.signal?.aborted) throw abortError(opts.signal);
  const timeoutMs = Math.max(1, opts.timeoutMs);
  const job = new ParseJob(bytes, opts, languages, timeoutMs, () => pdfTimeoutError(timeoutMs), () => abortError(opts.signal!));
  try {
    return await job.run();
  } finally {
    await job.stop();
  }
}

/** Refuses what is not a PDF and bad options; returns the tesseract language list. */
function checkInput(bytes: Buffer, opts: PdfParseOptions): string {
  if (!isPdf(bytes)) throw notPdfError();
  if (opts.maxPages !== undefined && !(Number.isInteger(opts.maxPages) && opts.maxPages >= 1 && opts.maxPages <= MAX_PAGES_LIMIT)) {
    throw maxPagesError(MAX_PAGES_LIMIT);
  }
  return opts.mode === 'fast' ? 'eng' : tesseractLanguages(opts.ocrLanguages);
}
