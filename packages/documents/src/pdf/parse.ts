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
 * document.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { WdsError, ScrapeCodes } from '@wds/errors';
import type { FromWorker, OcrPageResult, PageRecord, ToWorker } from './protocol';
import { ocrPdfPage, OcrUnavailableError, tesseractLanguages } from './ocr';
import { siblingModule, WorkerPool } from '@wds/threads';
import type { PdfParseOptions, PdfParseResult } from './types';

/** Heap cap of a parse worker; beyond it the PDF is refused rather than taking the process down. */
export const PDF_WORKER_HEAP_MB = 768;
const MAX_PAGES_LIMIT = 10000;
/** A worker whose heap is above this after a job is not reused. */
const REUSE_HEAP_BYTES = 256 * 1024 * 1024;
/** Pages per extraction chunk. */
const CHUNK_PAGES = 8;
/** From this many pages, an idle warm worker helps with extraction. */
const PARALLEL_MIN_PAGES = 40;
/** From this many pages, a helper is started even when none is idle (start-up costs ~0.5-1 s of CPU). */
const COLD_HELPER_MIN_PAGES = 300;
const MAX_HELPERS = Math.max(0, Math.min(availableParallelism(), 4) - 1);

const pool = new WorkerPool(
  {
    entry: siblingModule(import.meta.url, 'worker'),
    preload: [import.meta.resolve('unpdf/pdfjs')],
    resourceLimits: { maxOldGenerationSizeMb: PDF_WORKER_HEAP_MB },
  },
  { maxIdle: MAX_HELPERS + 1, maxJobs: 50 },
);
let nextJobId = 1;

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

interface Member {
  w: Worker;
  lead: boolean;
  state: 'opening' | 'ready' | 'busy' | 'gone';
  detach: () => void;
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
  const id = nextJobId++;

  const kill = new AbortController();
  const members: Member[] = [];
  let leadReusable = false;
  let tmpDir: string | null = null;
  let pdfPath: Promise<string> | null = null;
  const ocrJobs: Promise<OcrPageResult>[] = [];

  const cleanup = async () => {
    kill.abort(new Error('done'));
    const stopping: Promise<unknown>[] = [];
    for (const m of members) {
      if (m.state === 'gone') continue;
      m.detach();
      m.state = 'gone';
      if (m.lead && leadReusable) pool.release(m.w);
      else stopping.push(pool.discard(m.w));
    }
    // Killed children settle at once; wait for them so nothing writes into the removed directory.
    await Promise.allSettled([...ocrJobs, pdfPath ?? Promise.resolve(''), ...stopping]);
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

      let numPages = 0;
      let totalPages: number | undefined;
      let metadata: PdfParseResult['metadata'] = {};
      const queue: [number, number][] = [];
      let running = 0;
      let layoutSent = false;
      const helperRecords: PageRecord[] = [];
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

      const post = (m: Member, msg: ToWorker, transfer?: ArrayBuffer[]) => m.w.postMessage(msg, transfer);

      /** Give `m` the next chunk; a helper with nothing left to do goes back to the pool. */
      const assign = (m: Member) => {
        const next = queue.shift();
        if (next) {
          m.state = 'busy';
          running++;
          post(m, { t: 'extract', id, from: next[0], to: next[1], mode: opts.mode, keep: m.lead });
          return;
        }
        m.state = 'ready';
        if (!m.lead) {
          post(m, { t: 'close', id });
          m.detach();
          m.state = 'gone';
          pool.release(m.w);
        }
        maybeLayout();
      };

      const maybeLayout = () => {
        if (layoutSent || queue.length || running || !numPages) return;
        layoutSent = true;
        void Promise.all(ocrJobs).then((ocr) => {
          if (settled) return;
          if (ocrMissing && opts.mode === 'ocr') return fail(ocrUnavailable());
          const lead = members[0];
          post(lead, { t: 'layout', id, extra: helperRecords, ocr, mode: opts.mode, layout: { pages: opts.pages, blocks: opts.blocks, pageMarkers: opts.pageMarkers } });
        });
      };

      const startHelpers = () => {
        if (numPages < PARALLEL_MIN_PAGES) return;
        for (let k = 0; k < MAX_HELPERS && queue.length > 1; k++) {
          const w = pool.tryIdle() ?? (numPages >= COLD_HELPER_MIN_PAGES ? pool.acquire() : null);
          if (w) {
            enlist(w, false);
            continue;
          }
          // None warm: start one for the next long document (it would join this one too late).
          pool.spare();
          break;
        }
      };

      const onMessage = (m: Member, msg: FromWorker) => {
        if (settled || msg.id !== id || m.state === 'gone') return;
        switch (msg.t) {
          case 'opened':
            if (m.lead) {
              totalPages = msg.totalPages;
              numPages = Math.min(msg.totalPages, opts.maxPages ?? msg.totalPages);
              metadata = msg.metadata;
              for (let from = 1; from <= numPages; from += CHUNK_PAGES) queue.push([from, Math.min(numPages, from + CHUNK_PAGES - 1)]);
              startHelpers();
            }
            assign(m);
            break;
          case 'ocr':
            ocrJobs.push(ocrPage(msg.pageNumber, msg.width, msg.height));
            break;
          case 'chunk':
            running--;
            if (msg.records) helperRecords.push(...msg.records);
            assign(m);
            break;
          case 'result': {
            leadReusable = msg.heapUsed < REUSE_HEAP_BYTES;
            if (numPages > 0 && msg.failedPages === numPages && !msg.markdown) {
              return fail(
                ocrMissing
                  ? ocrUnavailable()
                  : new WdsError('UNPROCESSABLE', { code: 'PDF_CORRUPT', message: 'No page of the PDF could be read; the file is corrupt.' }),
              );
            }
            const result: PdfParseResult = { markdown: msg.markdown, numPages, totalPages, metadata };
            if (!metadata.title && msg.firstHeading) result.metadata = { ...metadata, title: msg.firstHeading };
            if (msg.pages) result.pages = msg.pages;
            if (msg.blocks) result.blocks = msg.blocks;
            if (msg.ocrPages.length) result.ocrPages = msg.ocrPages;
            finish(() => resolve(result));
            break;
          }
          case 'fail':
            if (m.lead) leadReusable = msg.code !== 'INTERNAL';
            fail(
              msg.code === 'INTERNAL'
                ? new WdsError('INTERNAL', { code: 'PDF_PARSER_ERROR', message: 'The PDF parser failed.', cause: new Error(msg.message) })
                : new WdsError('UNPROCESSABLE', { code: msg.code, message: msg.message }),
            );
            break;
        }
      };

      const enlist = (w: Worker, lead: boolean) => {
        const m: Member = { w, lead, state: 'opening', detach: () => undefined };
        const message = (msg: FromWorker) => onMessage(m, msg);
        const error = (e: Error & { code?: string }) => {
          if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
            fail(new WdsError('UNPROCESSABLE', { code: 'PDF_TOO_COMPLEX', message: `The PDF needs more than ${PDF_WORKER_HEAP_MB} MB to parse.`, cause: e }));
          } else {
            fail(new WdsError('INTERNAL', { code: 'PDF_PARSER_ERROR', message: 'The PDF parser crashed.', cause: e }));
          }
        };
        const exit = (code: number) => {
          fail(new WdsError('INTERNAL', { code: 'PDF_PARSER_ERROR', message: `The PDF parser exited unexpectedly (code ${code}).` }));
        };
        w.on('message', message);
        w.on('error', error);
        w.on('exit', exit);
        m.detach = () => {
          w.off('message', message);
          w.off('error', error);
          w.off('exit', exit);
        };
        members.push(m);
        const copy = new Uint8Array(bytes);
        post(m, { t: 'open', id, bytes: copy, metadata: lead }, [copy.buffer]);
      };

      enlist(pool.acquire(), true);
    });
  } finally {
    await cleanup();
  }
}
