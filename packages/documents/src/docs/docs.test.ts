import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import iconv from 'iconv-lite';
import { WdsError } from '@wds/errors';
import { makeReportPdf, renderTextPng } from '../pdf/fixtures';
import type { PdfParseOptions } from '../pdf/types';
import { makeDocx, zip } from './fixtures';
import { DOCX_MIME, detectDocument, parseDocument } from './index';

const pdf: PdfParseOptions = { mode: 'auto', pages: false, blocks: false, pageMarkers: false, timeoutMs: 20000 };

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

describe('parseDocument', () => {
  let png: Buffer;
  before(async () => {
    png = await renderTextPng(['Meeting Notes', 'Agenda for the quarterly review']);
  });

  test('DOCX → HTML → markdown (headings, bold, table)', async () => {
    const docx = makeDocx([
      { heading: 1, text: 'Project Plan' },
      { bold: 'Summary:', text: 'The plan has three phases.' },
      { heading: 2, text: 'Budget' },
      { table: [['Item', 'Cost'], ['Design', '100'], ['Build', '400']] },
    ]);
    // Detected by magic bytes + the ZIP directory, whatever the declared type.
    const r = await parseDocument(docx, { filename: 'upload.bin', contentType: 'application/octet-stream', pdf });
    assert.equal(r.kind, 'docx');
    assert.equal(r.metadata.contentType, DOCX_MIME);
    assert.equal(r.metadata.title, 'Project Plan');
    assert.equal(
      r.markdown,
      '# Project Plan\n\n**Summary:** The plan has three phases.\n\n## Budget\n\n| Item | Cost |\n| --- | --- |\n| Design | 100 |\n| Build | 400 |',
    );
    assert.match(r.html ?? '', /<h1>Project Plan<\/h1>/);
  });

  test('a ZIP without word/document.xml is not a DOCX', async () => {
    const broken = zip({ '[Content_Types].xml': '<Types/>', 'xl/workbook.xml': '<workbook/>' });
    const e = await rejectsWith(parseDocument(broken, { filename: 'book.xlsx', pdf }), 'UNSUPPORTED_MEDIA_TYPE', 'UNSUPPORTED_FILE_TYPE');
    assert.match(e.message, /Excel/);
    await rejectsWith(
      parseDocument(zip({ 'word/document.xml': '<not-xml' }), { filename: 'a.docx', pdf }),
      'UNPROCESSABLE',
      'DOCX_CORRUPT',
    );
  });

  test('HTML: whole page (no main-content filter), declared charset, title', async () => {
    const html = '<html><head><title>Café menu</title></head><body><nav><a href="/home">Home</a></nav><main><h1>Café</h1><p>Crème brûlée</p></main></body></html>';
    const bytes = iconv.encode(html, 'latin1');
    const r = await parseDocument(bytes, { contentType: 'text/html; charset=ISO-8859-1', pdf });
    assert.equal(r.kind, 'html');
    assert.equal(r.metadata.contentType, 'text/html');
    assert.equal(r.metadata.title, 'Café menu');
    assert.equal(r.markdown, '[Home](/home)\n\n# Café\n\nCrème brûlée');
    assert.ok(r.html?.includes('<h1>Café</h1>'));
    // Sniffed without any declared type.
    const sniffed = await parseDocument(Buffer.from('<!DOCTYPE html><p>Hello <b>there</b></p>'), { pdf });
    assert.equal(sniffed.kind, 'html');
    assert.equal(sniffed.markdown, 'Hello **there**');
  });

  test('plain text and markdown are returned as is', async () => {
    const md = '# Notes\n\n- one\n- two\n';
    const r = await parseDocument(Buffer.from(md), { filename: 'notes.md', pdf });
    assert.equal(r.kind, 'text');
    assert.equal(r.markdown, md);
    assert.equal(r.metadata.contentType, 'text/markdown');
    assert.equal(r.metadata.title, 'Notes');
    const txt = await parseDocument(Buffer.from('\ufeffplain words'), { contentType: 'text/plain', pdf });
    assert.equal(txt.markdown, 'plain words');
    assert.equal(txt.metadata.contentType, 'text/plain');
    // Undeclared non-UTF-8 text is read as windows-1252.
    const latin = await parseDocument(iconv.encode('naïve façade', 'latin1'), { filename: 'a.txt', pdf });
    assert.equal(latin.markdown, 'naïve façade');
  });

  test('PNG → OCR, with blocks', async () => {
    const r = await parseDocument(png, { filename: 'scan.png', pdf: { ...pdf, blocks: true, pages: true } });
    assert.equal(r.kind, 'image');
    assert.equal(r.metadata.contentType, 'image/png');
    assert.equal(r.metadata.numPages, 1);
    assert.match(r.markdown, /Meeting Notes/);
    assert.match(r.markdown, /Agenda for the quarterly review/);
    assert.equal(r.pages?.length, 1);
    const items = r.blocks![0].items;
    assert.ok(items.length >= 2);
    for (const b of items) {
      assert.equal(b.source, 'ocr');
      if (b.markdownSpan) assert.equal(r.markdown.slice(...b.markdownSpan), b.content);
    }
  });

  test('PDF goes through parsePdf; metadata has contentType and page counts', async () => {
    const r = await parseDocument(await makeReportPdf(), { filename: 'r.pdf', contentType: 'application/pdf', pdf: { ...pdf, maxPages: 1 } });
    assert.equal(r.kind, 'pdf');
    assert.equal(r.metadata.contentType, 'application/pdf');
    assert.equal(r.metadata.numPages, 1);
    assert.equal(r.metadata.totalPages, 3);
    assert.equal(r.metadata.title, 'Quarterly Report');
    // One parsed page: its running header cannot be told from content (no repetition to see).
    assert.match(r.markdown, /^# Quarterly Report$/m);
  });

  test('unknown bytes → UNSUPPORTED_MEDIA_TYPE / UNSUPPORTED_FILE_TYPE', async () => {
    const junk = Buffer.from([0x00, 0x01, 0x02, 0x03, 0xc8, 0xc9, 0x05, 0x00, 0x09, 0xff, 0x10]);
    await rejectsWith(parseDocument(junk, { pdf }), 'UNSUPPORTED_MEDIA_TYPE', 'UNSUPPORTED_FILE_TYPE');
    await rejectsWith(parseDocument(junk, { contentType: 'application/x-foo', filename: 'x.foo', pdf }), 'UNSUPPORTED_MEDIA_TYPE', 'UNSUPPORTED_FILE_TYPE');
    await rejectsWith(parseDocument(junk, { contentType: 'text/plain', pdf }), 'UNSUPPORTED_MEDIA_TYPE', 'UNSUPPORTED_FILE_TYPE');
    const ole = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0]);
    const e = await rejectsWith(parseDocument(ole, { filename: 'old.doc', pdf }), 'UNSUPPORTED_MEDIA_TYPE', 'UNSUPPORTED_FILE_TYPE');
    assert.match(e.message, /Legacy Office/);
  });

  test('a declared PDF that is not one → PDF_CORRUPT', async () => {
    await rejectsWith(parseDocument(Buffer.from('not a pdf'), { contentType: 'application/pdf', pdf }), 'UNPROCESSABLE', 'PDF_CORRUPT');
  });
});

describe('detectDocument', () => {
  test('magic bytes beat the declared type', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]);
    assert.equal(detectDocument(png, 'a.txt', 'text/plain').kind, 'image');
    assert.equal(detectDocument(Buffer.from('%PDF-1.4 ...'), 'a.html', 'text/html').kind, 'pdf');
    assert.equal(detectDocument(Buffer.from('RIFF\0\0\0\0WEBPVP8 '), undefined, undefined).imageExt, 'webp');
    assert.equal(detectDocument(Buffer.from([0x49, 0x49, 0x2a, 0x00, 8, 0, 0, 0]), undefined, undefined).contentType, 'image/tiff');
    assert.equal(detectDocument(Buffer.from([0xff, 0xd8, 0xff, 0xe0]), undefined, undefined).contentType, 'image/jpeg');
  });

  test('text types by declared type, extension, sniffing', () => {
    assert.equal(detectDocument(Buffer.from('{"a":1}'), undefined, 'application/json').contentType, 'application/json');
    assert.equal(detectDocument(Buffer.from('a,b\n1,2'), 'data.csv', undefined).contentType, 'text/csv');
    assert.equal(detectDocument(Buffer.from('  <!-- c --><html><body>x'), undefined, undefined).kind, 'html');
    assert.equal(detectDocument(Buffer.from('just words'), undefined, 'application/octet-stream').kind, 'text');
  });
});
