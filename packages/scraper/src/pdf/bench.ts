/**
 * PDF parser figures: `fast` mode ms/page against poppler's pdftotext on the
 * same generated 200-page PDF, OCR seconds/page on full text pages, and RSS
 * growth while parsing a 1,000-page PDF.
 *
 *   node --import tsx packages/scraper/src/pdf/bench.ts
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { makeLongPdf, makeReportPdf } from './fixtures';
import { parsePdf } from './parse';
import type { PdfParseOptions } from './types';

const exec = promisify(execFile);

export interface PdfBenchResult {
  fastPages: number;
  /** Best of `runs` end-to-end parsePdf calls (warm worker, markdown only), per page. */
  fastMsPerPage: number;
  fastMsPerPageMedian: number;
  /** Same with `pages` and `blocks` requested. */
  fastWithBlocksMsPerPage: number;
  /** First call in a fresh process (worker start + pdf.js load + JIT warm-up), whole document. */
  fastColdMs: number;
  pdftotextMsPerPage: number | null;
  /** fastMsPerPage / pdftotextMsPerPage (target ≤ 3). */
  ratioToPdftotext: number | null;
  ocrPages: number;
  ocrSecondsPerPage: number;
  bigPages: number;
  bigParseMs: number;
  /** Peak process RSS during the 1,000-page parse minus RSS just before it. */
  bigRssGrowthMb: number;
  bigMarkdownChars: number;
}

const fast = (over: Partial<PdfParseOptions> = {}): PdfParseOptions => ({
  mode: 'fast',
  pages: false,
  blocks: false,
  pageMarkers: false,
  timeoutMs: 300_000,
  ...over,
});

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

export async function runPdfBench(
  opts: { pages?: number; runs?: number; ocrPages?: number; bigPages?: number } = {},
): Promise<PdfBenchResult> {
  const pages = opts.pages ?? 200;
  const runs = opts.runs ?? 5;
  const ocrPages = opts.ocrPages ?? 3;
  const bigPages = opts.bigPages ?? 1000;
  const dir = await mkdtemp(join(tmpdir(), 'wds-pdf-bench-'));
  try {
    // 1. fast mode vs pdftotext.
    const pdf = await makeLongPdf(pages);
    const path = join(dir, 'long.pdf');
    await writeFile(path, pdf);
    let t = performance.now();
    await parsePdf(pdf, fast({ blocks: true, pages: true }));
    const fastColdMs = performance.now() - t;
    const fastTimes: number[] = [];
    const blockTimes: number[] = [];
    for (let i = 0; i < runs; i++) {
      t = performance.now();
      await parsePdf(pdf, fast());
      fastTimes.push(performance.now() - t);
      t = performance.now();
      await parsePdf(pdf, fast({ blocks: true, pages: true }));
      blockTimes.push(performance.now() - t);
    }
    let popplerBest: number | null = null;
    try {
      for (let i = 0; i < runs; i++) {
        t = performance.now();
        await exec('pdftotext', [path, join(dir, 'out.txt')]);
        const ms = performance.now() - t;
        popplerBest = popplerBest === null ? ms : Math.min(popplerBest, ms);
      }
    } catch {
      popplerBest = null;
    }
    const fastBest = Math.min(...fastTimes);

    // 2. OCR on full pages of text.
    const ocrPdf = await makeLongPdf(ocrPages);
    t = performance.now();
    await parsePdf(ocrPdf, fast({ mode: 'ocr' }));
    const ocrMs = performance.now() - t;

    // 3. RSS while parsing a big document.
    const big = await makeLongPdf(bigPages);
    await parsePdf(await makeReportPdf(), fast());
    (globalThis as { gc?: () => void }).gc?.();
    const rss0 = process.memoryUsage.rss();
    let peak = rss0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 20);
    t = performance.now();
    const r = await parsePdf(big, fast({ pages: true, blocks: true, pageMarkers: true }));
    const bigParseMs = performance.now() - t;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage.rss());

    return {
      fastPages: pages,
      fastMsPerPage: round(fastBest / pages),
      fastMsPerPageMedian: round(median(fastTimes) / pages),
      fastWithBlocksMsPerPage: round(Math.min(...blockTimes) / pages),
      fastColdMs: Math.round(fastColdMs),
      pdftotextMsPerPage: popplerBest === null ? null : round(popplerBest / pages),
      ratioToPdftotext: popplerBest === null ? null : round(fastBest / popplerBest),
      ocrPages,
      ocrSecondsPerPage: round(ocrMs / 1000 / ocrPages),
      bigPages,
      bigParseMs: Math.round(bigParseMs),
      bigRssGrowthMb: Math.round((peak - rss0) / 1024 / 1024),
      bigMarkdownChars: r.markdown.length,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await runPdfBench());
}
