import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { WdsError } from '@wds/errors';
import { encryptPdf, makeLongPdf, makeReportPdf, makeScannedPdf } from './fixtures';
import { isPdf, parsePdf } from './index';
import type { PdfParseOptions, PdfParseResult } from './index';
import { joinLines } from './layout';
import { parseTesseractTsv } from './ocr';

const BLOCK_TYPES = new Set(['title', 'section_header', 'text', 'table', 'formula', 'figure', 'caption', 'page_number', 'page_header', 'page_footer']);

function opts(over: Partial<PdfParseOptions> = {}): PdfParseOptions {
  return { mode: 'fast', pages: false, blocks: false, pageMarkers: false, timeoutMs: 20000, ...over };
}

async function rejectsWith(p: Promise<unknown>, kind: string, code: string): Promise<WdsError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof WdsError, `expected a WdsError, got ${String(e)}`);
    assert.equal(e.kind, kind, e.message);
    assert.equal(e.code, code, e.message);
    return e;
  }
  assert.fail(`expected ${kind}/${code}, resolved instead`);
}

/** Every block span slices the markdown to exactly the block's content; spans are ordered and disjoint. */
function checkBlocks(r: PdfParseResult): void {
  assert.ok(r.blocks);
  let lastEnd = 0;
  for (const page of r.blocks) {
    assert.equal(typeof page.width, 'number');
    assert.equal(typeof page.height, 'number');
    assert.ok(['ok', 'partial', 'failed'].includes(page.status));
    page.items.forEach((b, i) => {
      assert.equal(b.id, `p${page.pageNumber}.b${i}`);
      assert.equal(b.readingOrder, i);
      assert.ok(BLOCK_TYPES.has(b.type), b.type);
      assert.ok(b.bbox, `${b.id} has a bbox`);
      const [x0, y0, x1, y1] = b.bbox;
      for (const v of b.bbox) assert.ok(v >= 0 && v <= 1, `${b.id} bbox ${b.bbox}`);
      assert.ok(x0 <= x1 && y0 <= y1, `${b.id} bbox ordered`);
      if (b.markdownSpan) {
        const [s, e] = b.markdownSpan;
        assert.equal(r.markdown.slice(s, e), b.content, `${b.id} span`);
        assert.ok(s >= lastEnd, `${b.id} spans in order`);
        lastEnd = e;
      } else {
        assert.ok(['page_header', 'page_footer', 'page_number'].includes(b.type), `${b.id} (${b.type}) is in the markdown`);
      }
    });
  }
}

describe('parsePdf: text layer', () => {
  let report: Buffer;
  before(async () => {
    report = await makeReportPdf();
  });

  test('markdown: headings by size, paragraphs, hyphenation, list, table; page furniture left out', async () => {
    const r = await parsePdf(report, opts());
    assert.equal(r.numPages, 3);
    assert.equal(r.totalPages, 3);
    assert.equal(r.metadata.title, 'Quarterly Report');
    assert.equal(r.metadata.author, 'Jane Analyst');
    const md = r.markdown;
    assert.ok(md.startsWith('# Quarterly Report\n\nIntroduction text.'), md.slice(0, 80));
    assert.match(md, /^## Key Points$/m);
    assert.match(md, /^## Results by Region$/m);
    assert.match(md, /^### Details$/m);
    assert.match(md, /for example a hyphenated word that must be joined again\./);
    assert.ok(!md.includes('exam-'));
    assert.ok(md.includes('- Revenue grew by twelve percent\n- Costs stayed flat\n- Two new offices opened'), md);
    assert.ok(
      md.includes(
        '| Region | Revenue | Growth |\n| --- | --- | --- |\n| North | 1,200 | 12% |\n| South | 950 | 8% |\n| West | 1,430 | 15% |',
      ),
      md,
    );
    assert.ok(!md.includes('ACME Corporation'), 'running header stays out');
    assert.ok(!/Page \d of 3/.test(md), 'page numbers stay out');
    assert.ok(!md.includes('<!-- page'), 'no markers unless asked');
    assert.equal(r.pages, undefined);
    assert.equal(r.blocks, undefined);
  });

  test('pages and page markers: exact format, none before page 1', async () => {
    const r = await parsePdf(report, opts({ pages: true, pageMarkers: true }));
    assert.ok(r.pages);
    assert.deepEqual(r.pages.map((p) => p.pageNumber), [1, 2, 3]);
    assert.ok(r.pages[0].markdown.startsWith('# Quarterly Report'));
    assert.ok(r.pages[2].markdown.startsWith('### Details'));
    assert.ok(!r.markdown.startsWith('\n') && !r.markdown.startsWith('---'));
    assert.ok(!r.markdown.includes('<!-- page 1 -->'));
    const expected = r.pages.map((p) => p.markdown).reduce((acc, md, i) => `${acc}\n\n---\n\n<!-- page ${i + 1} -->\n\n${md}`);
    assert.equal(r.markdown, expected);
    assert.equal((r.markdown.match(/<!-- page \d+ -->/g) ?? []).length, 2);

    const plain = await parsePdf(report, opts({ pages: true }));
    assert.equal(plain.markdown, plain.pages!.map((p) => p.markdown).join('\n\n'));
  });

  test('blocks: ids, types, bbox in 0..1, spans slice the returned markdown', async () => {
    for (const pageMarkers of [false, true]) {
      const r = await parsePdf(report, opts({ blocks: true, pageMarkers }));
      checkBlocks(r);
      const items = r.blocks!.flatMap((p) => p.items);
      const byContent = (c: string) => items.find((b) => b.content === c);
      assert.equal(byContent('# Quarterly Report')?.type, 'title');
      assert.equal(byContent('## Key Points')?.type, 'section_header');
      assert.equal(byContent('### Details')?.type, 'section_header');
      assert.equal(items.filter((b) => b.type === 'table').length, 1);
      assert.ok(items.find((b) => b.type === 'table')!.content.startsWith('| Region | Revenue | Growth |'));
      assert.equal(byContent('- Costs stayed flat')?.label, 'list_item');
      for (const page of r.blocks!) {
        const header = page.items.find((b) => b.type === 'page_header');
        const num = page.items.find((b) => b.type === 'page_number');
        assert.equal(header?.content, 'ACME Corporation - Internal Report');
        assert.equal(num?.content, `Page ${page.pageNumber} of 3`);
        assert.equal(num?.markdownSpan, null);
        assert.ok(num!.bbox![1] > 0.9, 'page number at the bottom');
        assert.equal(page.width, 612);
        assert.equal(page.height, 792);
      }
      const title = byContent('# Quarterly Report')!;
      assert.equal(title.source, 'text-layer');
      assert.deepEqual(title.confidence, { layout: null, ocr: null });
      assert.ok(title.bbox![0] > 0.1 && title.bbox![0] < 0.13, `title x0 ${title.bbox}`);
    }
  });

  test('maxPages truncates; totalPages keeps the real count', async () => {
    const r = await parsePdf(report, opts({ maxPages: 2, pages: true, blocks: true }));
    assert.equal(r.numPages, 2);
    assert.equal(r.totalPages, 3);
    assert.equal(r.pages!.length, 2);
    assert.equal(r.blocks!.length, 2);
    assert.ok(r.markdown.includes('Results by Region'));
    assert.ok(!r.markdown.includes('Details'));
  });

  test('two-column page: left column read before the right one', async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    const page = doc.addPage([612, 792]);
    page.drawText('Two Column Article', { x: 60, y: 720, size: 22, font });
    const words = (tag: string, n: number) =>
      Array.from({ length: n }, (_, i) => `${tag}${i} alpha beta gamma delta epsilon zeta`).map((s) => s.slice(0, 38));
    words('left', 12).forEach((t, i) => page.drawText(t, { x: 60, y: 680 - i * 14, size: 10, font }));
    words('right', 12).forEach((t, i) => page.drawText(t, { x: 330, y: 680 - i * 14, size: 10, font }));
    const r = await parsePdf(Buffer.from(await doc.save()), opts());
    const md = r.markdown;
    assert.ok(md.startsWith('# Two Column Article'), md);
    assert.ok(md.indexOf('left11') < md.indexOf('right0'), md);
    assert.ok(md.indexOf('left0') < md.indexOf('left11'));
    assert.ok(!md.includes('|'), 'not a table');
  });

  test('auto mode does not OCR pages that have text', async () => {
    const r = await parsePdf(report, opts({ mode: 'auto' }));
    assert.equal(r.ocrPages, undefined);
    assert.ok(r.markdown.startsWith('# Quarterly Report'));
  });
});

describe('parsePdf: OCR', () => {
  let scanned: Buffer;
  before(async () => {
    scanned = await makeScannedPdf(['Invoice Summary', 'Total amount due 4250 EUR', 'Payment within thirty days']);
  });

  test('fast mode finds no text in an image-only page', async () => {
    const r = await parsePdf(scanned, opts({ blocks: true }));
    assert.equal(r.markdown, '');
    assert.equal(r.numPages, 1);
    assert.equal(r.blocks![0].items.length, 0);
  });

  for (const mode of ['auto', 'ocr'] as const) {
    test(`${mode} mode OCRs the page`, async () => {
      const r = await parsePdf(scanned, opts({ mode, blocks: true, pages: true }));
      assert.match(r.markdown, /Invoice Summary/);
      assert.match(r.markdown, /Total amount due 4250 EUR/);
      assert.match(r.markdown, /Payment within thirty days/);
      assert.deepEqual(r.ocrPages, [1]);
      checkBlocks(r);
      const page = r.blocks![0];
      assert.ok(page.width! > 1000, 'raster width in px');
      for (const b of page.items) {
        assert.equal(b.source, 'ocr');
        assert.ok(b.confidence.ocr !== null && b.confidence.ocr > 0.5 && b.confidence.ocr <= 1);
      }
    });
  }

  test('invalid OCR language is a bad request', async () => {
    await rejectsWith(parsePdf(scanned, opts({ mode: 'ocr', ocrLanguages: ['eng; rm -rf /'] })), 'BAD_REQUEST', 'OCR_LANGUAGE_INVALID');
  });
});

describe('parsePdf: bad input, limits', () => {
  test('isPdf', () => {
    assert.equal(isPdf(Buffer.from('%PDF-1.7\n')), true);
    assert.equal(isPdf(Buffer.from('\n %PDF-1.4')), true);
    assert.equal(isPdf(Buffer.from('<html>')), false);
    assert.equal(isPdf(Buffer.alloc(0)), false);
  });

  test('not a PDF, truncated, garbage → PDF_CORRUPT quickly', async () => {
    const report = await makeReportPdf();
    const t0 = Date.now();
    await rejectsWith(parsePdf(Buffer.from('hello'), opts()), 'UNPROCESSABLE', 'PDF_CORRUPT');
    await rejectsWith(parsePdf(report.subarray(0, Math.floor(report.length / 2)), opts()), 'UNPROCESSABLE', 'PDF_CORRUPT');
    await rejectsWith(parsePdf(report.subarray(0, 400), opts({ mode: 'auto' })), 'UNPROCESSABLE', 'PDF_CORRUPT');
    await rejectsWith(parsePdf(Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(10000, 0x37)]), opts()), 'UNPROCESSABLE', 'PDF_CORRUPT');
    assert.ok(Date.now() - t0 < 10000);
  });

  test('password-protected PDF → PDF_ENCRYPTED', async (t) => {
    const enc = await encryptPdf(await makeReportPdf());
    if (!enc) return t.skip('qpdf not installed');
    const e = await rejectsWith(parsePdf(enc, opts({ mode: 'auto' })), 'UNPROCESSABLE', 'PDF_ENCRYPTED');
    assert.match(e.message, /password/);
  });

  test('timeout → REQUEST_TIMEOUT / SCRAPE_TIMEOUT, not retryable, on time; the next parse works', async () => {
    const long = await makeLongPdf(200);
    const t0 = Date.now();
    const e = await rejectsWith(parsePdf(long, opts({ timeoutMs: 40 })), 'REQUEST_TIMEOUT', 'SCRAPE_TIMEOUT');
    assert.equal(e.retryable, false);
    // Rejected at the deadline; the bound is loose for loaded CI machines.
    assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
    const r = await parsePdf(long, opts({ maxPages: 5 }));
    assert.equal(r.numPages, 5);
    assert.equal(r.totalPages, 200);
    assert.match(r.markdown, /^# Chapter 1\n\nParagraph 1 of page 1\./);
  });

  test('abort signal stops the parse', async () => {
    const long = await makeLongPdf(200);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    await assert.rejects(parsePdf(long, opts({ signal: ac.signal })), (e: unknown) => e instanceof WdsError && e.kind === 'REQUEST_TIMEOUT');
  });

  test('long documents: chunked (and shared between workers) extraction gives the same result every time', async () => {
    const long = await makeLongPdf(90);
    const runs: PdfParseResult[] = [];
    // The first run finds no warm helper and starts one; later runs share the pages with it.
    for (let i = 0; i < 3; i++) runs.push(await parsePdf(long, opts({ pages: true, blocks: true, pageMarkers: true })));
    for (const r of runs) {
      assert.equal(r.numPages, 90);
      assert.deepEqual(r.pages!.map((p) => p.pageNumber), Array.from({ length: 90 }, (_, i) => i + 1));
      assert.equal(r.markdown, runs[0].markdown);
      checkBlocks(r);
    }
    assert.match(runs[0].markdown, /\n\n---\n\n<!-- page 90 -->\n\n# Chapter 90\n\n/);
    // Page numbers at the bottom are blocks, not markdown.
    assert.ok(!/^\d+$/m.test(runs[0].markdown));
  });

  test('maxPages out of range → BAD_REQUEST', async () => {
    await rejectsWith(parsePdf(await makeReportPdf(), opts({ maxPages: 0 })), 'BAD_REQUEST', 'INVALID_MAX_PAGES');
  });
});

describe('layout helpers', () => {
  test('joinLines repairs hyphenation only before lower-case continuations', () => {
    assert.equal(joinLines(['for exam-', 'ple here']), 'for example here');
    assert.equal(joinLines(['the COVID-', 'Nineteen']), 'the COVID- Nineteen');
    assert.equal(joinLines(['soft\u00ad', 'ware']), 'software');
    assert.equal(joinLines(['one', 'two']), 'one two');
  });

  test('parseTesseractTsv: words get their line box, scaled', () => {
    const tsv = [
      'level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext',
      '1\t1\t0\t0\t0\t0\t0\t0\t600\t300\t-1\t',
      '4\t1\t1\t1\t1\t0\t10\t20\t200\t30\t-1\t',
      '5\t1\t1\t1\t1\t1\t10\t22\t80\t26\t96.5\tHello',
      '5\t1\t1\t1\t1\t2\t100\t20\t110\t30\t91\tWorld',
    ].join('\n');
    const [page] = parseTesseractTsv(tsv, 0.5);
    assert.equal(page.width, 600);
    assert.equal(page.spans.length, 2);
    assert.deepEqual(
      page.spans.map((s) => [s.text, s.x0, s.y0, s.y1, s.conf]),
      [
        ['Hello', 5, 10, 25, 96.5],
        ['World', 50, 10, 25, 91],
      ],
    );
  });
});
