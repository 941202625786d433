/**
 * PDF parser figures: `fast` mode ms/page against poppler's pdftotext on the
 * same generated 200-page PDF (the baseline), OCR seconds/page on full text
 * pages, and RSS growth while parsing a 1,000-page PDF.
 *
 *   npm run bench -- pdf     (BENCH_PDF_PAGES, BENCH_PDF_RUNS, BENCH_PDF_OCR_PAGES, BENCH_PDF_BIG_PAGES)
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parsePdf, type PdfParseOptions } from '@wds/documents';
import { makeLongPdf, makeReportPdf } from '@wds/documents/fixtures';
import { round, writeResult } from './stats';

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

const envNum = (name: string): number | undefined => (process.env[name] ? Number(process.env[name]) : undefined);

/** `npm run bench -- pdf`: measures, prints and writes bench/results/pdf-<time>.json. */
export async function runPdfBench(
  opts: { pages?: number; runs?: number; ocrPages?: number; bigPages?: number } = {},
): Promise<PdfBenchResult> {
  const result = await measure({
    pages: opts.pages ?? envNum('BENCH_PDF_PAGES') ?? 200,
    runs: opts.runs ?? envNum('BENCH_PDF_RUNS') ?? 5,
    ocrPages: opts.ocrPages ?? envNum('BENCH_PDF_OCR_PAGES') ?? 3,
    bigPages: opts.bigPages ?? envNum('BENCH_PDF_BIG_PAGES') ?? 1000,
  });
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${writeResult('pdf', result)}`);
  return result;
}

async function measure({ pages, runs, ocrPages, bigPages }: { pages: number; runs: number; ocrPages: number; bigPages: number }): Promise<PdfBenchResult> {
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
