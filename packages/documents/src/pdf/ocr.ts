/**
 * OCR through Debian's command-line tools: `pdftoppm` (poppler-utils) rasterizes
 * one PDF page, `tesseract` (tesseract-ocr + tesseract-ocr-<lang>) reads it and
 * prints TSV (words with boxes and confidences). Both run as child processes
 * killed on abort, at most `availableParallelism()` at a time per process,
 * each tesseract single-threaded (OMP_THREAD_LIMIT=1).
 */
import { execFile } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { childEnv } from '@wds/config/child-env';
import { WdsError } from '@wds/errors';
import { limiter } from '../limiter';
import type { Span } from './lines';

/** Target resolution for rasterized pages. */
export const OCR_DPI = 300;
/** Longest side of a rasterized page, in px (bounds memory and time on huge pages). */
const MAX_RASTER_SIDE = 5000;
/** Language codes tesseract accepts (eng, deu, chi_sim, script/Latin…). */
const LANG = /^[A-Za-z0-9_]+(?:\/[A-Za-z0-9_]+)?$/;

export class OcrUnavailableError extends Error {}

/** A process-wide limit on concurrent OCR child processes. */
const withSlot = limiter(Math.max(1, availableParallelism()));

function run(cmd: string, args: string[], signal?: AbortSignal, input?: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      {
        signal,
        maxBuffer: 64 * 1024 * 1024,
        encoding: 'utf8',
        // Both parse untrusted files in C/C++: they see no secret of the worker's.
        env: childEnv({ pass: ['TESSDATA_PREFIX'], set: { OMP_THREAD_LIMIT: '1' } }),
        killSignal: 'SIGKILL',
      },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
          return reject(new OcrUnavailableError(`${cmd} is not installed`));
        }
        if (signal?.aborted) return reject(signal.reason ?? err);
        reject(new Error(`${cmd} failed: ${String(stderr || err.message).trim().slice(0, 500)}`));
      },
    );
    if (input) child.stdin?.end(input);
  });
}

export function tesseractLanguages(langs: string[] | undefined): string {
  const list = (langs?.length ? langs : ['eng']).map((l) => l.trim()).filter(Boolean);
  for (const l of list) {
    if (!LANG.test(l)) throw new WdsError('BAD_REQUEST', { code: 'OCR_LANGUAGE_INVALID', message: `Invalid OCR language: ${l}` });
  }
  return list.join('+') || 'eng';
}

// ---------------------------------------------------------------------------
// TSV → spans
// ---------------------------------------------------------------------------

export interface OcrWordPage {
  /** 1-based page of a multi-page input (TIFF); 1 for a single image. */
  page: number;
  spans: Span[];
  /** Image size in px (from the TSV's page row). */
  width: number;
  height: number;
}

/**
 * tesseract TSV (level page_num block_num par_num line_num word_num left top width height conf text)
 * → spans per page. Every word of a tesseract line gets the line's box as its
 * vertical extent, and a font size estimated from the line height; `scale`
 * converts pixels to the caller's units.
 */
export function parseTesseractTsv(tsv: string, scale = 1): OcrWordPage[] {
  const lines = new Map<string, { top: number; height: number }>();
  const sizes = new Map<number, { width: number; height: number }>();
  const words: { page: number; key: string; left: number; width: number; conf: number; text: string }[] = [];
  for (const row of tsv.split('\n')) {
    const c = row.split('\t');
    if (c.length < 12 || c[0] === 'level') continue;
    const level = Number(c[0]);
    const key = `${c[1]}.${c[2]}.${c[3]}.${c[4]}`;
    const [left, top, width, height, conf] = [Number(c[6]), Number(c[7]), Number(c[8]), Number(c[9]), Number(c[10])];
    if (level === 1) sizes.set(Number(c[1]) || 1, { width, height });
    else if (level === 4) lines.set(key, { top, height });
    else if (level === 5) {
      const text = c.slice(11).join('\t').trim();
      if (text && conf >= 0) words.push({ page: Number(c[1]) || 1, key, left, width, conf, text });
    }
  }
  const pages = new Map<number, Span[]>();
  for (const page of sizes.keys()) pages.set(page, []);
  for (const w of words) {
    const l = lines.get(w.key);
    if (!l || !(l.height > 0)) continue;
    const size = l.height * 0.8 * scale;
    const span: Span = {
      text: w.text,
      x0: w.left * scale,
      x1: (w.left + w.width) * scale,
      y0: l.top * scale,
      y1: (l.top + l.height) * scale,
      baseline: (l.top + l.height * 0.8) * scale,
      size,
      conf: w.conf,
      word: true,
    };
    const arr = pages.get(w.page);
    if (arr) arr.push(span);
    else pages.set(w.page, [span]);
  }
  return [...pages.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([page, spans]) => ({ page, spans, width: sizes.get(page)?.width ?? 0, height: sizes.get(page)?.height ?? 0 }));
}

/** Width × height of a binary PGM/PPM header ("P5\n2550 3300\n255\n"). */
function pnmSize(buf: Buffer): { width: number; height: number } | null {
  const head = buf.subarray(0, 64).toString('latin1').replace(/#[^\n]*\n/g, '');
  const m = /^P[1-6]\s+(\d+)\s+(\d+)/.exec(head);
  return m ? { width: Number(m[1]), height: Number(m[2]) } : null;
}

export interface OcrPdfPageOptions {
  /** Directory for the rasterized page (removed by the caller). */
  tmpDir: string;
  languages: string;
  signal?: AbortSignal;
}

/**
 * Rasterize page `pageNumber` of the PDF at `pdfPath` (page size in points)
 * and OCR it. Spans come back in points, like the text layer.
 */
export async function ocrPdfPage(
  pdfPath: string,
  pageNumber: number,
  widthPt: number,
  heightPt: number,
  opts: OcrPdfPageOptions,
): Promise<{ spans: Span[]; pxWidth: number; pxHeight: number }> {
  const longest = Math.max(widthPt, heightPt, 1) / 72;
  const dpi = Math.max(50, Math.min(OCR_DPI, Math.floor(MAX_RASTER_SIDE / longest)));
  const base = join(opts.tmpDir, `page-${pageNumber}`);
  return withSlot(opts.signal, async () => {
    try {
      await run('pdftoppm', ['-r', String(dpi), '-f', String(pageNumber), '-l', String(pageNumber), '-singlefile', '-gray', pdfPath, base], opts.signal);
      const img = `${base}.pgm`;
      const size = pnmSize(await readFile(img).then((b) => b.subarray(0, 64)));
      const tsv = await run('tesseract', [img, 'stdout', '-l', opts.languages, '--dpi', String(dpi), '--psm', '3', 'tsv'], opts.signal);
      const scale = 72 / dpi;
      const spans = parseTesseractTsv(tsv, scale)[0]?.spans ?? [];
      return { spans, pxWidth: size?.width ?? Math.round(widthPt / scale), pxHeight: size?.height ?? Math.round(heightPt / scale) };
    } finally {
      await rm(`${base}.pgm`, { force: true }).catch(() => undefined);
    }
  });
}

/**
 * OCR an image file (PNG, JPEG, WebP, TIFF…; a multi-page TIFF gives several
 * pages). Spans are in image pixels.
 */
export async function ocrImage(
  bytes: Buffer,
  opts: { tmpDir: string; languages: string; signal?: AbortSignal; ext: string },
): Promise<OcrWordPage[]> {
  const img = join(opts.tmpDir, `image.${opts.ext}`);
  await writeFile(img, bytes);
  return withSlot(opts.signal, async () => {
    const tsv = await run('tesseract', [img, 'stdout', '-l', opts.languages, '--psm', '3', 'tsv'], opts.signal);
    return parseTesseractTsv(tsv, 1);
  });
}
