/**
 * A parse worker: opens the PDF with pdf.js (unpdf's serverless build, no
 * canvas), extracts the text layer of the page chunks it is given into lines,
 * asks the main thread to OCR the pages that need it, and (the lead worker of
 * a job) lays out the whole document. It runs in a worker_thread so the main
 * thread can terminate it on timeout or abort, whatever pdf.js is doing.
 * Messages: protocol.ts. Messages are handled in arrival order, one at a time.
 */
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { getDocument, OPS } from 'unpdf/pdfjs';
import { pdfDate, textItemsToSpans } from './extract';
import type { TextStyleLike } from './extract';
import { layoutDocument } from './layout';
import type { PageLines } from './layout';
import { buildLines, textQuality } from './lines';
import type { FromWorker, OcrPageResult, PageRecord, ToWorker } from './protocol';
import type { PdfMetadata, PdfMode } from './types';

const port = parentPort;
if (!port) throw new Error('pdf/worker.ts must run in a worker thread');

function send(msg: FromWorker): void {
  port!.postMessage(msg);
}

type PdfDoc = Awaited<ReturnType<typeof getDocument>['promise']>;

interface JobState {
  doc: PdfDoc | null;
  records: PageRecord[];
  extracted: number;
}
const jobs = new Map<number, JobState>();

let queue: Promise<void> = Promise.resolve();
port.on('message', (m: ToWorker) => {
  queue = queue.then(() =>
    handle(m).catch((e) => {
      send({ id: m.id, t: 'fail', code: 'INTERNAL', message: (e as Error)?.stack ?? String(e) });
    }),
  );
});

async function close(id: number): Promise<void> {
  const job = jobs.get(id);
  jobs.delete(id);
  await job?.doc?.destroy().catch(() => undefined);
}

async function handle(m: ToWorker): Promise<void> {
  switch (m.t) {
    case 'open':
      return open(m.id, m.bytes, m.metadata);
    case 'extract': {
      const job = jobs.get(m.id);
      if (!job?.doc) return;
      const records = await extract(m.id, job, m.from, m.to, m.mode);
      if (m.keep) {
        job.records.push(...records);
        send({ id: m.id, t: 'chunk', from: m.from, to: m.to });
      } else {
        send({ id: m.id, t: 'chunk', from: m.from, to: m.to, records });
      }
      return;
    }
    case 'layout': {
      const job = jobs.get(m.id);
      const records = [...(job?.records ?? []), ...m.extra].sort((a, b) => a.pageNumber - b.pageNumber);
      await close(m.id);
      return layout(m.id, records, m.ocr, m.mode, m.layout);
    }
    case 'close':
      return close(m.id);
  }
}

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

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}

async function readMetadata(doc: PdfDoc): Promise<PdfMetadata> {
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

async function open(id: number, bytes: Uint8Array, withMetadata: boolean): Promise<void> {
  let doc: PdfDoc;
  try {
    doc = await getDocument({
      data: bytes,
      verbosity: 0,
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      stopAtErrors: false,
    }).promise;
  } catch (e) {
    const name = (e as { name?: string })?.name ?? '';
    const message = (e as { message?: string })?.message ?? String(e);
    if (name === 'PasswordException') {
      send({ id, t: 'fail', code: 'PDF_ENCRYPTED', message: 'The PDF is encrypted with a password and cannot be parsed.' });
    } else {
      send({ id, t: 'fail', code: 'PDF_CORRUPT', message: `The PDF is corrupt or truncated and cannot be parsed (${message}).` });
    }
    return;
  }
  if (!(doc.numPages > 0)) {
    await doc.destroy().catch(() => undefined);
    send({ id, t: 'fail', code: 'PDF_CORRUPT', message: 'The PDF has no pages.' });
    return;
  }
  jobs.set(id, { doc, records: [], extracted: 0 });
  send({ id, t: 'opened', totalPages: doc.numPages, metadata: withMetadata ? await readMetadata(doc) : {} });
}

async function extract(id: number, job: JobState, from: number, to: number, mode: PdfMode): Promise<PageRecord[]> {
  const doc = job.doc!;
  const out: PageRecord[] = [];
  for (let n = from; n <= to; n++) {
    const rec: PageRecord = { pageNumber: n, width: 0, height: 0, lines: [], usable: 0, garbage: 0, status: 'ok', ocr: false };
    out.push(rec);
    let page: Awaited<ReturnType<PdfDoc['getPage']>> | null = null;
    try {
      page = await doc.getPage(n);
      const vp = page.getViewport({ scale: 1 });
      rec.width = vp.width;
      rec.height = vp.height;
      if (mode !== 'ocr') {
        // Normalization (NFKC of ligatures etc.) is done by cleanText, only where needed.
        const tc = await page.getTextContent({ disableNormalization: true });
        const { spans } = textItemsToSpans(tc.items, tc.styles as Record<string, TextStyleLike>, vp.transform);
        const q = textQuality(spans.map((x) => x.text));
        rec.usable = q.usable;
        rec.garbage = q.garbage;
        rec.lines = buildLines(spans);
      }
      if (mode === 'ocr') rec.ocr = true;
      else if (mode === 'auto') {
        if (rec.garbage > 0.3 * (rec.usable + rec.garbage)) rec.ocr = true;
        else if (rec.usable < LOW_TEXT_CHARS) {
          // Little text: OCR only if the page paints images (or many vector paths: outlined text).
          try {
            const ops = await page.getOperatorList();
            let paths = 0;
            for (const fn of ops.fnArray) {
              if (IMAGE_OPS.has(fn) || (fn === OPS.constructPath && ++paths >= 200)) {
                rec.ocr = true;
                break;
              }
            }
          } catch {
            rec.ocr = true;
          }
        }
      }
    } catch {
      rec.status = 'failed';
      rec.lines = [];
      if (mode !== 'fast') rec.ocr = true;
    } finally {
      page?.cleanup();
    }
    if (rec.ocr) send({ id, t: 'ocr', pageNumber: n, width: rec.width || 612, height: rec.height || 792 });
    // pdf.js caches fonts and other document-level objects; drop them now and then.
    if (++job.extracted % 100 === 0) await doc.cleanup().catch(() => undefined);
  }
  return out;
}

function layout(
  id: number,
  records: PageRecord[],
  ocrResults: OcrPageResult[],
  mode: PdfMode,
  opts: { pages: boolean; blocks: boolean; pageMarkers: boolean },
): void {
  const ocr = new Map(ocrResults.map((r) => [r.pageNumber, r]));
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
      base.status = mode === 'ocr' || rec.status === 'failed' || rec.usable === 0 ? 'failed' : 'partial';
      return base;
    }
    const q = textQuality(r.spans.map((x) => x.text));
    const textBroken = rec.garbage > 0.3 * (rec.usable + rec.garbage);
    if (mode === 'ocr' || rec.status === 'failed' || textBroken || q.usable > rec.usable) {
      ocrPages.push(rec.pageNumber);
      return { ...base, lines: buildLines(r.spans), source: 'ocr', status: 'ok', pxWidth: r.pxWidth, pxHeight: r.pxHeight };
    }
    return base;
  });
  records.length = 0;
  const failedPages = pages.filter((p) => p.status === 'failed').length;
  const out = layoutDocument(pages, opts);
  send({ id, t: 'result', ...out, ocrPages, failedPages, heapUsed: getHeapStatistics().used_heap_size });
}
