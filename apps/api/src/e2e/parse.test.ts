import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { makeDocx } from '@wds/documents/fixtures';
import { makeReportPdf, renderTextPng } from '@wds/documents/fixtures';
import { call, namespaceFor, startStack, type Stack } from '@wds/test-utils';

// POST /v2/parse: multipart uploads through the JS SDK's parse() and raw fetch for the error
// cases. The upload is stored in Postgres and converted by a parseWorkflow on the worker.
const SMALL_LIMIT = 64 * 1024;
let stack: Stack;
let small: Stack;
let fc: Firecrawl;
let report: Buffer;

before(async () => {
  report = await makeReportPdf();
  [stack, small] = await Promise.all([
    startStack({ namespace: namespaceFor(import.meta.url) }),
    startStack({ namespace: namespaceFor(import.meta.url, 'b'), env: { WDS_MAX_UPLOAD_BYTES: String(SMALL_LIMIT) } }),
  ]);
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await Promise.all([stack?.stop(), small?.stop()]);
});

/** A raw multipart request (the SDK validates some inputs itself and hides status codes). */
async function upload(s: Stack, parts: { file?: { data: Buffer | string; name?: string; type?: string }; options?: string; optionsType?: string; extra?: Record<string, string> }, apiKey = s.apiKey) {
  const form = new FormData();
  // With a type the part carries its own Content-Type header (curl -F 'options=...;type=application/json').
  if (parts.options !== undefined) form.append('options', parts.optionsType ? new Blob([parts.options], { type: parts.optionsType }) : parts.options);
  if (parts.file) form.append('file', new Blob([parts.file.data], { type: parts.file.type ?? '' }), parts.file.name ?? 'upload.bin');
  for (const [k, v] of Object.entries(parts.extra ?? {})) form.append(k, v);
  return call({ url: s.url, apiKey }, 'POST', '/v2/parse', form);
}

describe('parse() through the SDK', () => {
  test('PDF: markdown, page counts, title, content type, file name; pages and blocks on request', async () => {
    const doc = await fc.parse({ data: report, filename: 'report.pdf', contentType: 'application/pdf' });
    assert.ok(doc.markdown!.startsWith('# Quarterly Report\n\nIntroduction text.'), doc.markdown!.slice(0, 80));
    assert.ok(doc.markdown!.includes('| Region | Revenue | Growth |'));
    const m = doc.metadata!;
    assert.equal(m.contentType, 'application/pdf');
    assert.equal(m.numPages, 3);
    assert.equal(m.totalPages, 3);
    assert.equal(m.title, 'Quarterly Report');
    assert.equal((m as Record<string, unknown>).sourceFile, 'report.pdf');
    assert.equal((m as Record<string, unknown>).creditsUsed, 3);

    const paged = await fc.parse({ data: report, filename: 'report.pdf' }, { parsers: [{ type: 'pdf', maxPages: 2, pages: true, blocks: true, pageMarkers: true }] });
    assert.deepEqual(paged.pages!.map((p) => p.pageNumber), [1, 2]);
    assert.equal(paged.metadata!.numPages, 2);
    assert.equal(paged.metadata!.totalPages, 3);
    assert.equal(paged.markdown, `${paged.pages![0]!.markdown}\n\n---\n\n<!-- page 2 -->\n\n${paged.pages![1]!.markdown}`);
    for (const b of paged.blocks!.flatMap((p) => p.items)) {
      if (b.markdownSpan) assert.equal(paged.markdown!.slice(b.markdownSpan[0], b.markdownSpan[1]), b.content);
    }
  });

  test('DOCX: headings, paragraphs and tables; html from the document', async () => {
    const docx = makeDocx([
      { heading: 1, text: 'Project Plan' },
      { text: 'The plan covers the next two quarters.', bold: 'Summary:' },
      { heading: 2, text: 'Milestones' },
      { table: [['Milestone', 'Date'], ['Kickoff', 'March'], ['Launch', 'June']] },
    ]);
    const doc = await fc.parse({ data: docx, filename: 'plan.docx' }, { formats: ['markdown', 'html'] });
    assert.match(doc.markdown!, /^# Project Plan$/m);
    assert.match(doc.markdown!, /^## Milestones$/m);
    assert.match(doc.markdown!, /\*\*Summary:\*\* The plan covers the next two quarters\./);
    assert.match(doc.markdown!, /\| Kickoff \| March \|/);
    assert.match(doc.html!, /<h1>Project Plan<\/h1>/);
    assert.equal(doc.metadata!.contentType, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    assert.equal(doc.metadata!.title, 'Project Plan');
  });

  test('HTML: main content only by default, page metadata, links', async () => {
    const html = `<!doctype html><html lang="en"><head><title>Uploaded page</title><meta name="description" content="An uploaded page"></head>
      <body><nav><a href="https://example.org/nav">Navigation entry</a></nav><main><h1>Article</h1><p>Body text with <a href="https://example.org/x">a link</a>.</p></main><footer>Footer words</footer></body></html>`;
    const doc = await fc.parse({ data: html, filename: 'page.html', contentType: 'text/html' }, { formats: ['markdown', 'links'] });
    assert.match(doc.markdown!, /^# Article$/m);
    assert.match(doc.markdown!, /\[a link\]\(https:\/\/example\.org\/x\)/);
    assert.ok(!doc.markdown!.includes('Navigation entry') && !doc.markdown!.includes('Footer words'));
    assert.ok(doc.links!.includes('https://example.org/x'));
    assert.equal(doc.metadata!.title, 'Uploaded page');
    assert.equal(doc.metadata!.description, 'An uploaded page');
    assert.equal(doc.metadata!.contentType, 'text/html');

    const all = await fc.parse({ data: html, filename: 'page.html' }, { onlyMainContent: false });
    assert.ok(all.markdown!.includes('Navigation entry'));
  });

  test('text and markdown files come back as they are', async () => {
    const text = 'Plain notes\nsecond line with ünïcödé';
    const doc = await fc.parse({ data: Buffer.from(text), filename: 'notes.txt', contentType: 'text/plain' });
    assert.equal(doc.markdown, text);
    assert.equal(doc.metadata!.contentType, 'text/plain');
    // No declared type (a Buffer without contentType): the .md extension decides.
    const md = await fc.parse({ data: Buffer.from('# Readme\n\nSome *markdown*.'), filename: 'README.md' });
    assert.equal(md.markdown, '# Readme\n\nSome *markdown*.');
    assert.equal(md.metadata!.title, 'Readme');
    assert.equal(md.metadata!.contentType, 'text/markdown');
  });

  test('PNG: OCR finds the words', async () => {
    const png = await renderTextPng(['Meeting Notes', 'Agenda for the quarterly review']);
    const doc = await fc.parse({ data: png, filename: 'scan.png', contentType: 'image/png' });
    assert.match(doc.markdown!, /Meeting Notes/);
    assert.match(doc.markdown!, /Agenda for the quarterly review/);
    assert.equal(doc.metadata!.contentType, 'image/png');
    assert.equal(doc.metadata!.numPages, 1);
  });

  test('the upload is dropped once parsed; the document stays with the team', async () => {
    await fc.parse({ data: 'kept result', filename: 'a.txt' });
    const r = await stack.db.pool.query(
      "SELECT p.upload, p.upload_bytes, j.status, j.credits_used FROM parse_jobs p JOIN jobs j ON j.id = p.id WHERE j.team_id = $1 AND p.document->>'markdown' = 'kept result'",
      [stack.teamId],
    );
    assert.equal(r.rowCount, 1);
    assert.equal(r.rows[0].upload, null);
    assert.equal(r.rows[0].upload_bytes, 11);
    assert.equal(r.rows[0].status, 'completed');
    assert.equal(r.rows[0].credits_used, 1);
  });
});

describe('parse errors', () => {
  test('unknown bytes → 415 Unsupported Media Type', async () => {
    const r = await upload(stack, { file: { data: Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 0, 7, 8]), name: 'blob.bin' } });
    assert.equal(r.status, 415, r.text);
    assert.equal(r.json.success, false);
    assert.match(r.json.error, /^Unsupported Media Type/);
    assert.equal(r.json.code, 'UNSUPPORTED_FILE_TYPE');
    const xlsx = await upload(stack, { file: { data: Buffer.from('PK\x03\x04rest', 'latin1'), name: 'sheet.xlsx' } });
    assert.equal(xlsx.status, 415, xlsx.text);
  });

  test('a file above WDS_MAX_UPLOAD_BYTES → 413 Payload Too Large; at the limit it is accepted', async () => {
    const over = await upload(small, { file: { data: Buffer.alloc(SMALL_LIMIT + 1, 'a'), name: 'big.txt', type: 'text/plain' } });
    assert.equal(over.status, 413, over.text);
    assert.equal(over.json.success, false);
    assert.equal(over.json.error, 'Payload Too Large');
    const huge = await upload(small, { file: { data: Buffer.alloc(3 * 1024 * 1024, 'a'), name: 'huge.txt', type: 'text/plain' } });
    assert.equal(huge.status, 413, huge.text);
    const fits = await upload(small, { file: { data: Buffer.alloc(SMALL_LIMIT, 'a'), name: 'fits.txt', type: 'text/plain' } });
    assert.equal(fits.status, 200, fits.text);
    assert.equal(fits.json.data.markdown.length, SMALL_LIMIT);
  });

  test('missing file part → 400 naming the file', async () => {
    const r = await upload(stack, { options: '{}' });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error, "A file is required: send it as the multipart part named 'file'.");
    assert.equal(r.json.code, 'BAD_REQUEST');
    assert.deepEqual(r.json.details[0].path, ['file']);
    const empty = await upload(stack, { file: { data: '', name: 'empty.txt' } });
    assert.equal(empty.status, 400, empty.text);
  });

  test('bad options → 400 with per-field details under options', async () => {
    const unknown = await upload(stack, { file: { data: 'x', name: 'a.txt' }, options: JSON.stringify({ bogus: 100 }) });
    assert.equal(unknown.status, 400, unknown.text);
    assert.equal(unknown.json.error, 'Unrecognized key in body -- please review the v2 API documentation for request body changes');
    assert.equal(unknown.json.code, 'BAD_REQUEST');
    assert.equal(unknown.json.details[0].code, 'unrecognized_keys');
    assert.deepEqual(unknown.json.details[0].path, ['options']);
    const badType = await upload(stack, { file: { data: 'x', name: 'a.txt' }, options: JSON.stringify({ timeout: 'soon' }) });
    assert.equal(badType.status, 400);
    assert.deepEqual(badType.json.details[0].path, ['options', 'timeout']);
    const badParser = await upload(stack, { file: { data: 'x', name: 'a.txt' }, options: JSON.stringify({ parsers: [{ type: 'pdf', maxPages: 0 }] }) });
    assert.equal(badParser.status, 400);
    const notJson = await upload(stack, { file: { data: 'x', name: 'a.txt' }, options: '{not json' });
    assert.equal(notJson.status, 400);
    assert.equal(notJson.json.error, "Invalid JSON in the 'options' field. Provide a valid JSON string.");
    assert.equal(notJson.json.details[0].code, 'invalid_json');
    const typedNotJson = await upload(stack, { file: { data: 'x', name: 'a.txt' }, options: '{not json', optionsType: 'application/json' });
    assert.equal(typedNotJson.status, 400, typedNotJson.text);
    assert.equal(typedNotJson.json.details[0].code, 'invalid_json');
    const llm = await upload(stack, { file: { data: 'x', name: 'a.txt' }, options: JSON.stringify({ formats: ['summary'] }) });
    assert.equal(llm.status, 400);
    assert.equal(llm.json.code, 'FEATURE_NOT_AVAILABLE');
  });

  test('options a parse cannot honour: 400 PARSE_UNSUPPORTED_OPTIONS only when they ask for something', async () => {
    const file = { data: '<h1>Up</h1><p>loaded</p>', name: 'a.html', type: 'text/html' };
    // What firecrawl-py sends for any ParseOptions: the do-nothing values pass.
    const idle = await upload(stack, { file, options: JSON.stringify({ mobile: false, waitFor: 0, actions: [], proxy: 'basic', onlyMainContent: true, skipTlsVerification: true, removeBase64Images: true, fastMode: false, blockAds: true }) });
    assert.equal(idle.status, 200, idle.text);
    assert.match(idle.json.data.markdown, /# Up/);
    const refused: [object, string][] = [
      [{ mobile: true }, 'Parse uploads do not support mobile rendering.'],
      [{ waitFor: 100 }, 'Parse uploads do not support waitFor.'],
      [{ actions: [{ type: 'wait', milliseconds: 10 }] }, 'Parse uploads do not support actions.'],
      [{ location: { country: 'DE' } }, 'Parse uploads do not support location overrides.'],
      [{ proxy: 'stealth' }, 'Parse uploads only support proxy values of auto or basic.'],
      [{ formats: ['markdown', 'screenshot'] }, 'Parse uploads do not support screenshot output.'],
      [{ formats: [{ type: 'changeTracking' }] }, 'Parse uploads do not support change tracking.'],
    ];
    for (const [options, error] of refused) {
      const r = await upload(stack, { file, options: JSON.stringify(options) });
      assert.equal(r.status, 400, `${JSON.stringify(options)}: ${r.text}`);
      assert.deepEqual(r.json, { success: false, code: 'PARSE_UNSUPPORTED_OPTIONS', error });
    }
  });

  test('GET /v2/parse/formats lists what an upload is detected as, in Firecrawl\'s shape', async () => {
    const r = await call({ url: stack.url, apiKey: stack.apiKey }, 'GET', '/v2/parse/formats');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('cache-control'), 'private, max-age=3600');
    const formats = r.json.data.formats as { format: string; kind: string; extensions: string[]; mimeTypes: string[]; available: boolean }[];
    const md = formats.find((f) => f.extensions.includes('.md'));
    assert.deepEqual(md, { format: 'md', kind: 'document', extensions: ['.md', '.markdown', '.mdx'], mimeTypes: ['text/markdown', 'text/x-markdown'], available: true });
    assert.deepEqual(formats.filter((f) => f.kind === 'image').map((f) => f.format), ['png', 'jpg', 'webp', 'tif', 'gif', 'bmp']);
    // A listed extension is accepted: a markdown file named by it parses.
    const parsed = await upload(stack, { file: { data: '# Listed\n\ntext', name: `notes${md!.extensions[1]}` } });
    assert.equal(parsed.status, 200, parsed.text);
    assert.match(parsed.json.data.markdown, /# Listed/);
    assert.equal((await call({ url: stack.url, apiKey: 'wrong-key-123' }, 'GET', '/v2/parse/formats')).status, 401);
  });

  test('an options part sent as application/json is read like a text one', async () => {
    const r = await upload(stack, { file: { data: '<main><h1>Typed</h1></main><footer>foot</footer>', name: 'a.html', type: 'text/html' }, options: JSON.stringify({ formats: ['html'], onlyMainContent: true }), optionsType: 'application/json' });
    assert.equal(r.status, 200, r.text);
    assert.match(r.json.data.html, /Typed/);
    assert.doesNotMatch(r.json.data.html, /foot/);
    assert.equal(r.json.data.markdown, undefined);
  });

  test('unexpected parts, a JSON body and a key without the parse scope are refused', async () => {
    const extra = await upload(stack, { file: { data: 'x', name: 'a.txt' }, extra: { url: 'https://example.com' } });
    assert.equal(extra.status, 400, extra.text);
    const json = await fetch(`${stack.url}/v2/parse`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ file: 'x' }),
    });
    assert.equal(json.status, 400);
    assert.match(((await json.json()) as { error: string }).error, /multipart/);
    const { apiKey } = await stack.newTeam({ scopes: ['scrape'] });
    const forbidden = await upload(stack, { file: { data: 'x', name: 'a.txt' } }, apiKey);
    assert.equal(forbidden.status, 403, forbidden.text);
    const unauth = await upload(stack, { file: { data: 'x', name: 'a.txt' } }, 'wrong-key-123');
    assert.equal(unauth.status, 401);
  });

  test('malformed multipart bodies → 400, never 500', async () => {
    const post = (contentType: string, body: string) =>
      fetch(`${stack.url}/v2/parse`, { method: 'POST', headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': contentType }, body });
    const noBoundary = await post('multipart/form-data', '--x\r\n');
    assert.equal(noBoundary.status, 400, await noBoundary.text());
    const truncated = await post('multipart/form-data; boundary=XYZ', '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhalf a fi');
    assert.equal(truncated.status, 400, await truncated.text());
    const octets = await post('application/octet-stream', 'raw bytes');
    assert.equal(octets.status, 400, await octets.text());
  });

  test('zeroDataRetention: 403 unless enabled for the team; when enabled nothing of the upload stays', async () => {
    const denied = await upload(stack, { file: { data: 'secret', name: 'a.txt' }, options: JSON.stringify({ zeroDataRetention: true }) });
    assert.equal(denied.status, 403, denied.text);
    const team = await stack.newTeam({ flags: { zeroDataRetention: true } });
    const r = await upload(stack, { file: { data: 'zdr secret text', name: 'a.txt' }, options: JSON.stringify({ zeroDataRetention: true }) }, team.apiKey);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.markdown, 'zdr secret text');
    const rows = await stack.db.pool.query("SELECT 1 FROM jobs WHERE team_id = $1 AND kind = 'parse'", [team.teamId]);
    assert.equal(rows.rowCount, 0);
  });

  test('a corrupt PDF → 422 PDF_CORRUPT from the worker', async () => {
    const r = await upload(stack, { file: { data: report.subarray(0, 300), name: 'broken.pdf', type: 'application/pdf' } });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.json.code, 'PDF_CORRUPT');
  });
});
