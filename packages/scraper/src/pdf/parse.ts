/**
 * parsePdf: runs worker.ts (pdf.js text extraction + layout) in a
 * worker_thread and the OCR child processes from this thread; one deadline
 * covers both. On timeout or abort the worker is terminated and the children
 * are killed, whatever state they are in.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { WdsError, ScrapeCodes } from '@wds/errors';
import type { FromWorker, OcrPageResult, ToWorker, WorkerInput } from './protocol';
import { ocrPdfPage, OcrUnavailableError, tesseractLanguages } from './ocr';
import { siblingModule, WorkerPool } from './sandbox';
import type { PdfParseOptions, PdfParseResult } from './types';

/** Heap cap of the parse worker; beyond it the PDF is refused rather than taking the process down. */
export const PDF_WORKER_HEAP_MB = 768;
const MAX_PAGES_LIMIT = 10000;
/** A worker whose heap is above this after a job is not reused. */
const REUSE_HEAP_BYTES = 256 * 1024 * 1024;

const pool = new WorkerPool(
  {
    entry: siblingModule(import.meta.url, 'worker'),
    preload: ['unpdf/pdfjs'],
    resourceLimits: { maxOldGenerationSizeMb: PDF_WORKER_HEAP_MB },
  },
  { maxIdle: 1, maxJobs: 50 },
);
let nextJobId = 1;

/** Start the parse worker ahead of the first PDF (it takes ~0.3-1 s to load pdf.js). */
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

export function pdfTimeoutError(timeoutMs: number): WdsError {
  return new WdsError('REQUEST_TIMEOUT', {
    code: ScrapeCodes.TIMEOUT,
    retryable: false,
    message: `PDF parsing exceeded the timeout of ${timeoutMs} ms.`,
  });
}

function abortError(signal: AbortSignal): unknown {
  const r: unknown = signal.reason;
  if (r instanceof WdsError) return r;
  return new WdsError('REQUEST_TIMEOUT', { code: ScrapeCodes.TIMEOUT, retryable: false, message: 'PDF parsing was aborted.', cause: r });
}

function ocrUnavailable(): WdsError {
  return new WdsError('FEATURE_NOT_AVAILABLE', {
    code: 'OCR_UNAVAILABLE',
    message: 'OCR is not available on this server (it needs the tesseract and pdftoppm programs).',
  });
}

export async function parsePdf(bytes: Buffer, opts: PdfParseOptions): Promise<PdfParseResult> {
  if (!isPdf(bytes)) {
    throw new WdsError('UNPROCESSABLE', { code: 'PDF_CORRUPT', message: 'The file is not a PDF (no %PDF- header).' });
  }
  if (opts.maxPages !== undefined && !(Number.isInteger(opts.maxPages) && opts.maxPages >= 1 && opts.maxPages <= MAX_PAGES_LIMIT)) {
    throw new WdsError('BAD_REQUEST', { code: 'INVALID_MAX_PAGES', message: `maxPages must be an integer from 1 to ${MAX_PAGES_LIMIT}.` });
  }
  const languages = opts.mode === 'fast' ? 'eng' : tesseractLanguages(opts.ocrLanguages);
  if (opts.signal?.aborted) throw abortError(opts.signal);
  const timeoutMs = Math.max(1, opts.timeoutMs);

  const kill = new AbortController();
  let worker: Worker | null = null;
  let reusable = false;
  const detach: (() => void)[] = [];
  let tmpDir: string | null = null;
  let pdfPath: Promise<string> | null = null;
  const ocrJobs: Promise<OcrPageResult>[] = [];
  const cleanup = async () => {
    kill.abort(new Error('done'));
    for (const d of detach) d();
    let stopping: Promise<unknown> | undefined;
    if (worker && reusable) pool.release(worker);
    else if (worker) stopping = pool.discard(worker);
    // Killed children settle at once; wait for them so nothing writes into the removed directory.
    await Promise.allSettled([...ocrJobs, pdfPath ?? Promise.resolve(''), stopping]);
    if (tmpDir) await rm(tmpDir, { recursive: true, force: true }).catch(() => undefined);
  };

  try {
    return await new Promise<PdfParseResult>((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const fail = (e: unknown) => finish(() => reject(e));
      const timer = setTimeout(() => fail(pdfTimeoutError(timeoutMs)), timeoutMs);
      const onAbort = () => fail(abortError(opts.signal!));
      opts.signal?.addEventListener('abort', onAbort, { once: true });

      const copy = new Uint8Array(bytes);
      const input: WorkerInput = {
        bytes: copy,
        mode: opts.mode,
        maxPages: opts.maxPages,
        layout: { pages: opts.pages, blocks: opts.blocks, pageMarkers: opts.pageMarkers },
      };
      const id = nextJobId++;
      const w = pool.acquire();
      worker = w;

      let numPages = 0;
      let totalPages: number | undefined;
      let metadata: PdfParseResult['metadata'] = {};
      let ocrMissing = false;

      const ensurePdfOnDisk = () => {
        pdfPath ??= (async () => {
          tmpDir = await mkdtemp(join(tmpdir(), 'wds-pdf-'));
          const p = join(tmpDir, 'input.pdf');
          await writeFile(p, bytes);
          return p;
        })();
        return pdfPath;
      };

      const ocrPage = async (pageNumber: number, width: number, height: number): Promise<OcrPageResult> => {
        try {
          const path = await ensurePdfOnDisk();
          const r = await ocrPdfPage(path, pageNumber, width, height, { tmpDir: tmpDir!, languages, signal: kill.signal });
          return { pageNumber, ok: true, spans: r.spans, pxWidth: r.pxWidth, pxHeight: r.pxHeight };
        } catch (e) {
          if (e instanceof OcrUnavailableError) ocrMissing = true;
          return { pageNumber, ok: false, spans: [], pxWidth: null, pxHeight: null, error: (e as Error)?.message };
        }
      };

      const onMessage = (msg: FromWorker) => {
        if (settled || msg.id !== id) return;
        switch (msg.t) {
          case 'open':
            numPages = msg.numPages;
            totalPages = msg.totalPages;
            metadata = msg.metadata;
            break;
          case 'ocr':
            ocrJobs.push(ocrPage(msg.pageNumber, msg.width, msg.height));
            break;
          case 'extracted':
            void Promise.all(ocrJobs).then((pages) => {
              if (settled) return;
              if (ocrMissing && opts.mode === 'ocr') return fail(ocrUnavailable());
              const reply: ToWorker = { t: 'ocr-results', id, pages };
              w.postMessage(reply);
            });
            break;
          case 'result': {
            reusable = msg.heapUsed < REUSE_HEAP_BYTES;
            if (numPages > 0 && msg.failedPages === numPages && !msg.markdown) {
              return fail(
                ocrMissing
                  ? ocrUnavailable()
                  : new WdsError('UNPROCESSABLE', { code: 'PDF_CORRUPT', message: 'No page of the PDF could be read; the file is corrupt.' }),
              );
            }
            const result: PdfParseResult = { markdown: msg.markdown, numPages, totalPages, metadata };
            if (!result.metadata.title && msg.firstHeading) result.metadata = { ...metadata, title: msg.firstHeading };
            if (msg.pages) result.pages = msg.pages;
            if (msg.blocks) result.blocks = msg.blocks;
            if (msg.ocrPages.length) result.ocrPages = msg.ocrPages;
            finish(() => resolve(result));
            break;
          }
          case 'fail':
            reusable = msg.code !== 'INTERNAL';
            fail(
              msg.code === 'INTERNAL'
                ? new WdsError('INTERNAL', { code: 'PDF_PARSER_ERROR', message: 'The PDF parser failed.', cause: new Error(msg.message) })
                : new WdsError('UNPROCESSABLE', { code: msg.code, message: msg.message }),
            );
            break;
        }
      };
      const onError = (e: Error & { code?: string }) => {
        if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
          fail(new WdsError('UNPROCESSABLE', { code: 'PDF_TOO_COMPLEX', message: `The PDF needs more than ${PDF_WORKER_HEAP_MB} MB to parse.`, cause: e }));
        } else {
          fail(new WdsError('INTERNAL', { code: 'PDF_PARSER_ERROR', message: 'The PDF parser crashed.', cause: e }));
        }
      };
      const onExit = (code: number) => {
        fail(new WdsError('INTERNAL', { code: 'PDF_PARSER_ERROR', message: `The PDF parser exited unexpectedly (code ${code}).` }));
      };
      w.on('message', onMessage);
      w.on('error', onError);
      w.on('exit', onExit);
      detach.push(() => {
        w.off('message', onMessage);
        w.off('error', onError);
        w.off('exit', onExit);
      });
      const job: ToWorker = { t: 'job', id, input };
      w.postMessage(job, [copy.buffer]);
    });
  } finally {
    await cleanup();
  }
}
