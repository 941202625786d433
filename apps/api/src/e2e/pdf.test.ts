import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { PDFDocument } from 'pdf-lib';
import { encryptPdf, makeLongPdf, makeReportPdf, makeScannedPdf } from '@wds/documents/fixtures';
import { call, namespaceFor, startFixtureSite, startStack, type FixtureSite, type Stack } from '@wds/test-utils';

// PDFs through POST /v2/scrape with the official JS SDK: conversion on the worker, the spec's
// parser options, credits per page, errors, and cached PDFs converted by the workflow.
let stack: Stack;
let site: FixtureSite;
let fc: Firecrawl;
let report: Buffer;
let encrypted: Buffer | null;

const serve = (type: string, body: () => Buffer) => (_q: unknown, r: import('node:http').ServerResponse) => void r.writeHead(200, { 'content-type': type }).end(body());

/** `n` copies of an image-only page: OCR takes seconds per page. */
async function scannedPages(n: number): Promise<Buffer> {
  const one = await PDFDocument.load(await makeScannedPdf(['Slow scanned page', 'Nothing to read quickly here']));
  const doc = await PDFDocument.create();
  for (let i = 0; i < n; i++) {
    const [p] = await doc.copyPages(one, [0]);
    doc.addPage(p);
  }
  return Buffer.from(await doc.save());
}

before(async () => {
  report = await makeReportPdf();
  encrypted = await encryptPdf(report);
  const scanned = await makeScannedPdf(['Invoice Summary', 'Total amount due 4250 EUR', 'Payment within thirty days']);
  const slow = await scannedPages(16);
  const long = await makeLongPdf(12);
  [stack, site] = await Promise.all([
    startStack({ namespace: namespaceFor(import.meta.url) }),
    startFixtureSite({
      '/report.pdf': serve('application/pdf', () => report),
      // No PDF content type and no .pdf in the URL: only the magic bytes say what it is.
      '/download': serve('application/octet-stream', () => report),
      '/scan.pdf': serve('application/pdf', () => scanned),
      '/slow.pdf': serve('application/pdf', () => slow),
      '/long.pdf': serve('application/pdf', () => long),
      '/cached.pdf': serve('application/pdf', () => long),
      '/truncated.pdf': serve('application/pdf', () => report.subarray(0, 400)),
      '/locked.pdf': serve('application/pdf', () => encrypted ?? Buffer.alloc(0)),
    }),
  ]);
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

async function jobCredits(scrapeId: string): Promise<number> {
  const r = await stack.db.pool.query('SELECT credits_used FROM scrape_jobs WHERE id = $1', [scrapeId]);
  return r.rows[0]?.credits_used;
}

describe('PDF conversion', () => {
  test('application/pdf: markdown, title from the PDF, page counts, content type, 1 credit per page', async () => {
    const doc = await fc.scrape(site.url('/report.pdf'), { maxAge: 0 });
    assert.deepEqual(Object.keys(doc).sort(), ['markdown', 'metadata']);
    const md = doc.markdown!;
    assert.ok(md.startsWith('# Quarterly Report\n\nIntroduction text.'), md.slice(0, 80));
    assert.match(md, /^## Key Points$/m);
    assert.ok(md.includes('| Region | Revenue | Growth |\n| --- | --- | --- |\n| North | 1,200 | 12% |'), md);
    assert.ok(!md.includes('<!-- page'), 'no page markers unless asked');
    const m = doc.metadata!;
    assert.equal(m.title, 'Quarterly Report');
    assert.equal(m.numPages, 3);
    assert.equal(m.totalPages, 3);
    assert.equal(m.contentType, 'application/pdf');
    assert.equal(m.statusCode, 200);
    assert.equal(m.sourceURL, site.url('/report.pdf'));
    assert.equal(m.creditsUsed, 3);
    assert.equal(await jobCredits(m.scrapeId!), 3);
  });

  test('detection by magic bytes: a PDF served as application/octet-stream without .pdf in the URL', async () => {
    const doc = await fc.scrape(site.url('/download'), { maxAge: 0 });
    assert.ok(doc.markdown!.startsWith('# Quarterly Report'));
    assert.equal(doc.metadata!.contentType, 'application/pdf');
    assert.equal(doc.metadata!.numPages, 3);
  });

  test('maxPages truncates: numPages < totalPages, credits follow the pages parsed', async () => {
    const doc = await fc.scrape(site.url('/report.pdf'), { maxAge: 0, parsers: [{ type: 'pdf', maxPages: 2 }] });
    assert.equal(doc.metadata!.numPages, 2);
    assert.equal(doc.metadata!.totalPages, 3);
    assert.equal(doc.metadata!.creditsUsed, 2);
    assert.match(doc.markdown!, /Results by Region/);
    assert.ok(!doc.markdown!.includes('Details'));
    assert.equal(await jobCredits(doc.metadata!.scrapeId!), 2);
  });

  test('pages and page markers: data.pages per physical page, markers exactly "\\n\\n---\\n\\n<!-- page N -->\\n\\n" between pages', async () => {
    const doc = await fc.scrape(site.url('/report.pdf'), { maxAge: 0, parsers: [{ type: 'pdf', pages: true, pageMarkers: true }] });
    const pages = doc.pages!;
    assert.deepEqual(pages.map((p) => p.pageNumber), [1, 2, 3]);
    assert.ok(pages[0]!.markdown.startsWith('# Quarterly Report'));
    assert.ok(pages[2]!.markdown.startsWith('### Details'));
    const expected = pages.map((p) => p.markdown).reduce((acc, md, i) => `${acc}\n\n---\n\n<!-- page ${i + 1} -->\n\n${md}`);
    assert.equal(doc.markdown, expected);
    assert.ok(!doc.markdown!.startsWith('\n') && !doc.markdown!.includes('<!-- page 1 -->'));
    assert.equal(doc.blocks, undefined);
    assert.equal(doc.metadata!.creditsUsed, 3, 'pages cost nothing extra');
  });

  test('blocks: typed layout blocks whose markdownSpan slices the returned markdown', async () => {
    const doc = await fc.scrape(site.url('/report.pdf'), { maxAge: 0, parsers: [{ type: 'pdf', blocks: true, pageMarkers: true }] });
    const md = doc.markdown!;
    assert.deepEqual(doc.blocks!.map((p) => p.pageNumber), [1, 2, 3]);
    let spans = 0;
    for (const page of doc.blocks!) {
      assert.ok(['ok', 'partial', 'failed'].includes(page.status));
      page.items.forEach((b, i) => {
        assert.equal(b.id, `p${page.pageNumber}.b${i}`);
        if (b.markdownSpan) {
          assert.equal(md.slice(b.markdownSpan[0], b.markdownSpan[1]), b.content, b.id);
          spans++;
        }
        if (b.bbox) for (const v of b.bbox) assert.ok(v >= 0 && v <= 1);
      });
    }
    assert.ok(spans >= 8, `${spans} blocks in the markdown`);
    const items = doc.blocks!.flatMap((p) => p.items);
    assert.equal(items.find((b) => b.content === '# Quarterly Report')?.type, 'title');
    assert.equal(items.find((b) => b.type === 'page_number')?.markdownSpan, null);
    assert.equal(doc.pages, undefined);
  });

  test('parsers: [] returns the PDF byte-exact as rawBase64 for a flat 1 credit', async () => {
    const doc = await fc.scrape(site.url('/report.pdf'), { maxAge: 0, parsers: [] });
    assert.ok(Buffer.from((doc as { rawBase64?: string }).rawBase64!, 'base64').equals(report));
    assert.equal(doc.markdown, undefined);
    assert.equal(doc.metadata!.creditsUsed, 1);
    assert.equal(doc.metadata!.numPages, undefined);
    assert.equal(await jobCredits(doc.metadata!.scrapeId!), 1);
  });

  test('HTML-only formats on a PDF: html is a plain rendering, links and images are empty, no rawHtml', async () => {
    const doc = await fc.scrape(site.url('/report.pdf'), { maxAge: 0, formats: ['markdown', 'html', 'rawHtml', 'links', 'images'] });
    assert.match(doc.html!, /<h1>Quarterly Report<\/h1>/);
    assert.match(doc.html!, /<table><thead><tr><th>Region<\/th>/);
    assert.deepEqual(doc.links, []);
    assert.deepEqual(doc.images, []);
    assert.equal(doc.rawHtml, undefined);
    assert.ok(doc.markdown!.startsWith('# Quarterly Report'));
  });

  test('an image-only PDF is OCR-ed in the default auto mode', async () => {
    const doc = await fc.scrape(site.url('/scan.pdf'), { maxAge: 0 });
    assert.match(doc.markdown!, /Invoice Summary/);
    assert.match(doc.markdown!, /Total amount due 4250 EUR/);
    assert.match(doc.markdown!, /Payment within thirty days/);
    assert.equal(doc.metadata!.numPages, 1);
  });
});

describe('PDF errors', () => {
  test('a truncated PDF gives the documented error body: 422 PDF_CORRUPT', async () => {
    const r = await call(stack, 'POST', '/v2/scrape', { url: site.url('/truncated.pdf'), maxAge: 0 });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.json.success, false);
    assert.equal(r.json.code, 'PDF_CORRUPT');
    assert.equal(typeof r.json.error, 'string');
  });

  test('a password-protected PDF: 422 PDF_ENCRYPTED', async () => {
    assert.ok(encrypted, 'qpdf is installed (.ci/run installs it)');
    const r = await call(stack, 'POST', '/v2/scrape', { url: site.url('/locked.pdf'), maxAge: 0 });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.json.code, 'PDF_ENCRYPTED');
  });

  test('conversion is bounded by the request timeout: 408 SCRAPE_TIMEOUT on time', async () => {
    const t0 = Date.now();
    const r = await call(stack, 'POST', '/v2/scrape', { url: site.url('/slow.pdf'), maxAge: 0, timeout: 1500, parsers: [{ type: 'pdf', mode: 'ocr' }] });
    assert.equal(r.status, 408, r.text);
    assert.equal(r.json.code, 'SCRAPE_TIMEOUT');
    assert.ok(Date.now() - t0 < 5_500, `answered in ${Date.now() - t0} ms`);
  });
});

describe('cached PDFs', () => {
  test('a cache hit is converted by the workflow: no outbound request, cacheState hit, same document', async () => {
    const first = await fc.scrape(site.url('/cached.pdf'), { parsers: [{ type: 'pdf', pages: true }] });
    assert.equal(first.metadata!.cacheState, 'miss');
    assert.equal(site.hits('/cached.pdf'), 1);
    const again = await fc.scrape(site.url('/cached.pdf'), { parsers: [{ type: 'pdf', maxPages: 5 }] });
    assert.equal(site.hits('/cached.pdf'), 1, 'served from the cache');
    assert.equal(again.metadata!.cacheState, 'hit');
    assert.equal(again.metadata!.numPages, 5);
    assert.equal(again.metadata!.totalPages, 12);
    assert.equal(again.metadata!.creditsUsed, 5);
    assert.ok(again.markdown!.startsWith(first.pages![0]!.markdown));
    assert.equal(await jobCredits(again.metadata!.scrapeId!), 5);

    // parsers: [] hits stay in the API (no conversion needed) and are byte-exact too.
    const raw = await call(stack, 'POST', '/v2/scrape', { url: site.url('/cached.pdf'), parsers: [] });
    assert.equal(raw.status, 200, raw.text);
    assert.equal(raw.json.data.metadata.cacheState, 'hit');
    assert.equal(raw.json.data.metadata.creditsUsed, 1);
    assert.equal(site.hits('/cached.pdf'), 1);
  });

  test('lockdown and minAge on a cached PDF: converted from the cache, lockdown billed 5 and leaves no row', async () => {
    const locked = await call(stack, 'POST', '/v2/scrape', { url: site.url('/cached.pdf'), lockdown: true });
    assert.equal(locked.status, 200, locked.text);
    assert.equal(locked.json.data.metadata.cacheState, 'hit');
    assert.equal(locked.json.data.metadata.creditsUsed, 5);
    assert.equal(locked.json.data.metadata.numPages, 12);
    const rows = await stack.db.pool.query('SELECT 1 FROM scrape_jobs WHERE id = $1', [locked.json.data.metadata.scrapeId]);
    assert.equal(rows.rowCount, 0, 'lockdown leaves nothing behind');

    const old = await call(stack, 'POST', '/v2/scrape', { url: site.url('/cached.pdf'), minAge: 1 });
    assert.equal(old.status, 200, old.text);
    assert.equal(old.json.data.metadata.cacheState, 'hit');
    assert.equal(site.hits('/cached.pdf'), 1);

    const miss = await call(stack, 'POST', '/v2/scrape', { url: site.url('/never-fetched.pdf'), lockdown: true });
    assert.equal(miss.status, 404);
    assert.equal(miss.json.code, 'SCRAPE_LOCKDOWN_CACHE_MISS');
  });
});
