/**
 * The parse worker: opens the PDF with pdf.js (unpdf's serverless build, no
 * canvas), extracts each page's text layer into lines, asks the main thread to
 * OCR the pages that need it, then lays out the whole document. It runs in a
 * worker_thread so the main thread can terminate it on timeout or abort,
 * whatever pdf.js is doing.
 */
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { getDocument, OPS } from 'unpdf/pdfjs';
import { pdfDate, textItemsToSpans } from './extract';
import type { TextStyleLike } from './extract';
import { layoutDocument } from './layout';
import type { PageLines } from './layout';
import { buildLines, textQuality } from './lines';
import type { Line } from './lines';
import type { FromWorker, OcrPageResult, ToWorker, WorkerInput } from './protocol';
import type { PdfMetadata } from './types';

const port = parentPort;
if (!port) throw new Error('pdf/worker.ts must run in a worker thread');

function send(msg: FromWorker): void {
  port!.postMessage(msg);
}

/** OCR results the main thread sends back, per job. */
const ocrWaiters = new Map<number, (pages: OcrPageResult[]) => void>();
let queue: Promise<void> = Promise.resolve();

port.on('message', (m: ToWorker) => {
  if (m.t === 'ocr-results') {
    ocrWaiters.get(m.id)?.(m.pages);
    ocrWaiters.delete(m.id);
  } else if (m.t === 'job') {
    // One job at a time (the pool never sends two, but stay safe).
    queue = queue.then(() =>
      runJob(m.id, m.input).catch((e) => {
        send({ id: m.id, t: 'fail', code: 'INTERNAL', message: (e as Error)?.stack ?? String(e) });
      }),
    );
  }
});

/** Pages with fewer letters/digits than this may be scans (auto mode checks for images). */
const LOW_TEXT_CHARS = 50;

const IMAGE_OPS = new Set<number>(
  [
    OPS.paintImageXObject,
    OPS.paintInlineImageXObject,
    OPS.paintImageMaskXObject,
    OPS.paintImageXObjectRepeat,
    OPS.paintImageMaskXObjectRepeat,
    OPS.paintInlineImageXObjectGroup,
    OPS.paintImageMaskXObjectGroup,
  ].filter((x): x is number => typeof x === 'number'),
);

interface PageRecord {
  pageNumber: number;
  width: number;
  height: number;
  lines: Line[];
  usable: number;
  garbage: number;
  status: 'ok' | 'partial' | 'failed';
  ocr: boolean;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}

async function readMetadata(doc: Awaited<ReturnType<typeof getDocument>['promise']>): Promise<PdfMetadata> {
  try {
    const { info, metadata } = await doc.getMetadata();
    const i = (info ?? {}) as Record<string, unknown>;
    const xmp = (k: string) => {
      try {
        return str(metadata?.get(k));
      } catch {
        return undefined;
      }
    };
    const out: PdfMetadata = {
      title: str(i.Title) ?? xmp('dc:title'),
      author: str(i.Author) ?? xmp('dc:creator'),
      subject: str(i.Subject) ?? xmp('dc:description'),
      keywords: str(i.Keywords),
      creator: str(i.Creator),
      producer: str(i.Producer),
      creationDate: pdfDate(i.CreationDate),
      modificationDate: pdfDate(i.ModDate),
      language: str(i.Language),
      pdfVersion: str(i.PDFFormatVersion),
    };
    for (const k of Object.keys(out) as (keyof PdfMetadata)[]) if (out[k] === undefined) delete out[k];
    return out;
  } catch {
    return {};
  }
}

function classifyOpenError(id: number, e: unknown): FromWorker {
  const name = (e as { name?: string })?.name ?? '';
  const message = (e as { message?: string })?.message ?? String(e);
  if (name === 'PasswordException') {
    return { id, t: 'fail', code: 'PDF_ENCRYPTED', message: 'The PDF is encrypted with a password and cannot be parsed.' };
  }
  return { id, t: 'fail', code: 'PDF_CORRUPT', message: `The PDF is corrupt or truncated and cannot be parsed (${message}).` };
}

async function runJob(id: number, input: WorkerInput): Promise<void> {
  const ocrResults = new Promise<OcrPageResult[]>((resolve) => ocrWaiters.set(id, resolve));

  let doc: Awaited<ReturnType<typeof getDocument>['promise']>;
  try {
    doc = await getDocument({
      data: input.bytes,
      verbosity: 0,
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      stopAtErrors: false,
    }).promise;
  } catch (e) {
    send(classifyOpenError(id, e));
    return;
  }

  const totalPages = doc.numPages;
  if (!(totalPages > 0)) {
    await doc.destroy().catch(() => undefined);
    send({ id, t: 'fail', code: 'PDF_CORRUPT', message: 'The PDF has no pages.' });
    return;
  }
  const numPages = Math.min(totalPages, input.maxPages && input.maxPages > 0 ? input.maxPages : totalPages);
  send({ id, t: 'open', totalPages, numPages, metadata: await readMetadata(doc) });

  const records: PageRecord[] = [];
  let ocrRequested = 0;
  for (let n = 1; n <= numPages; n++) {
    const rec: PageRecord = { pageNumber: n, width: 0, height: 0, lines: [], usable: 0, garbage: 0, status: 'ok', ocr: false };
    records.push(rec);
    let page: Awaited<ReturnType<typeof doc.getPage>> | null = null;
    try {
      page = await doc.getPage(n);
      const vp = page.getViewport({ scale: 1 });
      rec.width = vp.width;
      rec.height = vp.height;
      if (input.mode !== 'ocr') {
        const tc = await page.getTextContent();
        const { spans } = textItemsToSpans(tc.items, tc.styles as Record<string, TextStyleLike>, vp.transform);
        rec.lines = buildLines(spans);
        const q = textQuality(rec.lines);
        rec.usable = q.usable;
        rec.garbage = q.garbage;
      }
      if (input.mode === 'ocr') rec.ocr = true;
      else if (input.mode === 'auto') {
        const broken = rec.garbage > 0.3 * (rec.usable + rec.garbage);
        if (broken) rec.ocr = true;
        else if (rec.usable < LOW_TEXT_CHARS) {
          // A page with little text is OCR'd only if it paints images (or lots of vector paths: outlined text).
          try {
            const ops = await page.getOperatorList();
            let paths = 0;
            for (const fn of ops.fnArray) {
              if (IMAGE_OPS.has(fn)) {
                rec.ocr = true;
                break;
              }
              if (fn === OPS.constructPath && ++paths >= 200) {
                rec.ocr = true;
                break;
              }
            }
          } catch {
            rec.ocr = true;
          }
        }
      }
    } catch (e) {
      rec.status = 'failed';
      rec.lines = [];
      if (input.mode !== 'fast') rec.ocr = true;
      void e;
    } finally {
      page?.cleanup();
    }
    if (rec.ocr) {
      ocrRequested++;
      send({ id, t: 'ocr', pageNumber: n, width: rec.width || 612, height: rec.height || 792 });
    }
    // pdf.js caches fonts and other document-level objects; drop them now and then.
    if (n % 50 === 0) await doc.cleanup().catch(() => undefined);
  }
  await doc.destroy().catch(() => undefined);

  send({ id, t: 'extracted', ocrRequested });
  const ocr = new Map((await ocrResults).map((r) => [r.pageNumber, r]));

  const ocrPages: number[] = [];
  const pages: PageLines[] = records.map((rec) => {
    const base: PageLines = {
      pageNumber: rec.pageNumber,
      width: rec.width || 612,
      height: rec.height || 792,
      pxWidth: rec.width || null,
      pxHeight: rec.height || null,
      lines: rec.lines,
      source: 'text-layer',
      status: rec.status,
    };
    if (!rec.ocr) return base;
    const r = ocr.get(rec.pageNumber);
    if (!r || !r.ok) {
      // OCR failed: keep whatever text layer there was.
      base.status = input.mode === 'ocr' || rec.status === 'failed' || rec.usable === 0 ? 'failed' : 'partial';
      return base;
    }
    const lines = buildLines(r.spans);
    const q = textQuality(lines);
    const textBroken = rec.garbage > 0.3 * (rec.usable + rec.garbage);
    if (input.mode === 'ocr' || rec.status === 'failed' || textBroken || q.usable > rec.usable) {
      ocrPages.push(rec.pageNumber);
      return { ...base, lines, source: 'ocr', status: 'ok', pxWidth: r.pxWidth, pxHeight: r.pxHeight };
    }
    return base;
  });
  records.length = 0;

  const failedPages = pages.filter((p) => p.status === 'failed').length;
  const out = layoutDocument(pages, input.layout);
  send({ id, t: 'result', ...out, ocrPages, failedPages, heapUsed: getHeapStatistics().used_heap_size });
}
