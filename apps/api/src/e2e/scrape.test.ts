import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { call, namespaceFor, startFixtureSite, startStack, type FixtureSite, type Stack } from '@wds/test-utils';
import { routes, SJIS_TEXT } from './fixtures';

// POST /v2/scrape through the official JS SDK against the real stack: formats, metadata, engine rules.
let stack: Stack;
let site: FixtureSite;
let fc: Firecrawl;

before(async () => {
  [stack, site] = await Promise.all([startStack({ namespace: namespaceFor(import.meta.url) }), startFixtureSite(routes)]);
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

describe('formats', () => {
  test('default format is markdown, built from main content only', async () => {
    const doc = await fc.scrape(site.url('/rich'), { maxAge: 0 });
    assert.deepEqual(Object.keys(doc).sort(), ['markdown', 'metadata']);
    assert.match(doc.markdown!, /^# Main heading/m);
    assert.match(doc.markdown!, /\[relative link\]\(http:\/\/127\.0\.0\.1:\d+\/relative\/page\?x=1\)/);
    assert.match(doc.markdown!, /\| Name \| Qty \|/);
    assert.match(doc.markdown!, /^- one$/m);
    for (const boiler of ['Navigation entry', 'Footer words', 'Sidebar words', 'Home link in header', 'Enable JavaScript', 'window.secret']) {
      assert.ok(!doc.markdown!.includes(boiler), `markdown should not contain ${boiler}`);
    }
  });

  test('onlyMainContent:false keeps navigation, header and footer', async () => {
    const doc = await fc.scrape(site.url('/rich'), { onlyMainContent: false, maxAge: 0 });
    for (const text of ['Navigation entry', 'Footer words', 'Main heading']) assert.ok(doc.markdown!.includes(text), text);
  });

  test('html is cleaned: no script/style/noscript/meta/head, absolute URLs, largest srcset candidate', async () => {
    const doc = await fc.scrape(site.url('/rich'), { formats: ['html'], maxAge: 0 });
    const h = doc.html!;
    for (const tag of ['<script', '<style', '<noscript', '<meta', '<head']) assert.ok(!h.includes(tag), `html contains ${tag}`);
    assert.ok(h.includes(`href="${site.origin}/relative/page?x=1"`), 'relative link made absolute');
    assert.ok(h.includes(`src="${site.origin}/img/large.png"`), 'largest srcset candidate chosen');
    assert.ok(!h.includes('srcset'), 'srcset resolved away');
    assert.equal(doc.markdown, undefined);
  });

  test('rawHtml is the body exactly as received', async () => {
    const doc = await fc.scrape(site.url('/rich'), { formats: ['rawHtml'], maxAge: 0 });
    const { RICH_PAGE } = await import('./fixtures');
    assert.equal(doc.rawHtml, RICH_PAGE);
  });

  test('links are absolute and deduplicated; images resolved; object form of formats accepted', async () => {
    const doc = await fc.scrape(site.url('/rich'), { formats: [{ type: 'links' }, 'images'], maxAge: 0 });
    const rel = `${site.origin}/relative/page?x=1`;
    assert.equal(doc.links!.filter((l) => l === rel).length, 1);
    assert.ok(doc.links!.includes('https://example.org/abs'));
    assert.ok(doc.links!.includes(`${site.origin}/nav-target`), 'links cover the whole page');
    assert.ok(doc.links!.every((l) => /^https?:\/\//.test(l)));
    assert.ok(doc.images!.includes(`${site.origin}/img/large.png`));
    assert.ok(!doc.images!.some((i) => i.startsWith('data:')));
  });

  test('includeTags and excludeTags select content', async () => {
    const inc = await fc.scrape(site.url('/rich'), { includeTags: ['table'], onlyMainContent: false, maxAge: 0 });
    assert.match(inc.markdown!, /Apple/);
    assert.ok(!inc.markdown!.includes('Main heading'));
    const exc = await fc.scrape(site.url('/rich'), { excludeTags: ['.promo-box', 'table'], maxAge: 0 });
    assert.ok(!exc.markdown!.includes('Promo text kept'));
    assert.ok(!exc.markdown!.includes('Apple'));
    assert.match(exc.markdown!, /Main heading/);
  });

  test('removeBase64Images replaces data URIs in markdown, keeping alt text; false keeps them', async () => {
    const on = await fc.scrape(site.url('/rich'), { maxAge: 0 });
    assert.match(on.markdown!, /!\[inline dot\]\(<base64-image-removed>\)/);
    assert.ok(!on.markdown!.includes('data:image/png'));
    const off = await fc.scrape(site.url('/rich'), { removeBase64Images: false, maxAge: 0 });
    assert.match(off.markdown!, /!\[inline dot\]\(data:image\/png;base64,/);
  });
});

describe('metadata', () => {
  test('page metadata and service fields', async () => {
    const { metadata: m } = await fc.scrape(site.url('/rich'), { maxAge: 0 });
    assert.ok(m);
    assert.equal(m.title, 'Rich fixture page');
    assert.equal(m.description, 'A page with everything');
    assert.equal(m.keywords, 'alpha, beta');
    assert.equal(m.language, 'en-GB');
    assert.equal(m.ogTitle, 'OG rich title');
    assert.deepEqual(m.ogLocaleAlternate, ['fr_FR', 'de_DE']);
    assert.deepEqual(m.author, ['Ann', 'Bob']);
    assert.equal(m.sourceURL, site.url('/rich'));
    assert.equal(m.url, site.url('/rich'));
    assert.equal(m.statusCode, 200);
    assert.match(m.contentType!, /^text\/html/);
    assert.match(m.scrapeId!, /^[0-9a-f-]{36}$/);
    assert.equal(m.cacheState, 'miss');
  });

  test('redirects: sourceURL is the requested URL, url the final one', async () => {
    const { metadata: m } = await fc.scrape(site.url('/redirect-1'), { maxAge: 0 });
    assert.equal(m!.sourceURL, site.url('/redirect-1'));
    assert.equal(m!.url, site.url('/rich'));
    assert.equal(m!.statusCode, 200);
  });

  test('a 404 page is still a successful scrape with statusCode 404', async () => {
    const doc = await fc.scrape(site.url('/missing'), { maxAge: 0 });
    assert.equal(doc.metadata!.statusCode, 404);
    assert.equal(doc.metadata!.title, 'Gone');
    assert.match(doc.markdown!, /Not found here/);
  });
});

describe('bodies and transport', () => {
  test('Shift_JIS declared in the Content-Type header decodes correctly', async () => {
    const doc = await fc.scrape(site.url('/sjis-header'), { maxAge: 0 });
    assert.ok(doc.markdown!.includes(SJIS_TEXT), doc.markdown);
    assert.equal(doc.metadata!.title, SJIS_TEXT);
  });

  test('Shift_JIS declared only by <meta charset> decodes correctly', async () => {
    const doc = await fc.scrape(site.url('/sjis-meta'), { maxAge: 0 });
    assert.ok(doc.markdown!.includes(SJIS_TEXT), doc.markdown);
  });

  test('gzip bodies are decompressed', async () => {
    const doc = await fc.scrape(site.url('/gzip'), { maxAge: 0 });
    assert.match(doc.markdown!, /Compressed body text/);
  });

  test('JSON and plain text bodies come back usable', async () => {
    const json = await fc.scrape(site.url('/json'), { formats: ['markdown', 'rawHtml'], maxAge: 0 });
    assert.equal(json.rawHtml, '{"hello":"world","n":1}');
    assert.equal(json.markdown, '{"hello":"world","n":1}');
    assert.equal(json.metadata!.contentType, 'application/json');
    const text = await fc.scrape(site.url('/text'), { maxAge: 0 });
    assert.equal(text.markdown, 'Plain text body\nsecond line');
  });

  test('headers are sent to the target, and location sets Accept-Language', async () => {
    const doc = await fc.scrape(site.url('/echo-headers'), {
      headers: { 'X-Test': 'hello-header', 'User-Agent': 'CustomAgent/1.0' },
      location: { country: 'DE', languages: ['de-DE', 'en'] },
      onlyMainContent: false,
    });
    const h = site.lastHeaders('/echo-headers')!;
    assert.equal(h['x-test'], 'hello-header');
    assert.equal(h['user-agent'], 'CustomAgent/1.0');
    assert.match(String(h['accept-language']), /^de-DE,/);
    assert.match(doc.markdown!, /hello-header/);
  });

  test('location.country alone gives that country\'s language', async () => {
    await fc.scrape(site.url('/echo-headers'), { location: { country: 'JP' }, maxAge: 0 });
    assert.match(String(site.lastHeaders('/echo-headers')!['accept-language']), /^ja-JP/);
  });

  test('a page slower than timeout gives 408 Request Timeout', async () => {
    const t0 = Date.now();
    const r = await call(stack, 'POST', '/v2/scrape', { url: site.url('/slow'), timeout: 1500 });
    assert.equal(r.status, 408);
    assert.equal(r.json.success, false);
    assert.equal(r.json.error.startsWith('Request Timeout'), true, r.json.error);
    assert.equal(r.json.code, 'SCRAPE_TIMEOUT');
    assert.ok(Date.now() - t0 < 9_000, 'answered within the budget');
  });

  test('waitFor delays the fetch (the page says when it was fetched)', async () => {
    const fetchedAt = (d: { markdown?: string }) => Number(/fetched at (\d+)/.exec(d.markdown ?? '')?.[1]);
    const t0 = Date.now();
    const waited = await fc.scrape(site.url('/clock'), { waitFor: 700, maxAge: 0 });
    assert.ok(fetchedAt(waited) - t0 >= 700, `fetched ${fetchedAt(waited) - t0} ms after the request`);
    const t1 = Date.now();
    const direct = await fc.scrape(site.url('/clock'), { maxAge: 0 });
    assert.ok(fetchedAt(direct) - t1 < 700, `without waitFor fetched ${fetchedAt(direct) - t1} ms after the request`);
  });

  test('a PDF with parsers: [] comes back as bare base64, byte-exact', async () => {
    const r = await call(stack, 'POST', '/v2/scrape', { url: site.url('/doc.pdf'), parsers: [] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.metadata.contentType, 'application/pdf');
    assert.equal(Buffer.from(r.json.data.rawBase64, 'base64').toString('latin1'), '%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
  });

  test('a broken PDF with the default pdf parser gives the documented error body (422 PDF_CORRUPT)', async () => {
    const r = await call(stack, 'POST', '/v2/scrape', { url: site.url('/doc.pdf'), maxAge: 0 });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.json.success, false);
    assert.equal(r.json.code, 'PDF_CORRUPT');
    assert.equal(typeof r.json.error, 'string');
  });

  test('a binary body that cannot be converted gives 415', async () => {
    const r = await call(stack, 'POST', '/v2/scrape', { url: site.url('/image.png') });
    assert.equal(r.status, 415);
    assert.equal(r.json.success, false);
  });
});

describe('GET /v2/scrape/{id}', () => {
  test('returns the stored result to the same team only', async () => {
    const doc = await fc.scrape(site.url('/rich'), { maxAge: 0 });
    const id = doc.metadata!.scrapeId!;
    const mine = await call(stack, 'GET', `/v2/scrape/${id}`);
    assert.equal(mine.status, 200);
    assert.equal(mine.json.data.markdown, doc.markdown);
    const other = await stack.newTeam();
    const theirs = await call({ url: stack.url, apiKey: other.apiKey }, 'GET', `/v2/scrape/${id}`);
    assert.equal(theirs.status, 404);
    assert.equal(theirs.json.success, false);
    const bad = await call(stack, 'GET', '/v2/scrape/not-a-uuid');
    assert.equal(bad.status, 400);
  });

  test('a failed scrape reports its error', async () => {
    const r = await call(stack, 'POST', '/v2/scrape', { url: site.url('/image.png'), maxAge: 0 });
    assert.equal(r.status, 415);
    // The failed job's id is not returned by POST; read it back through the team's latest rows.
    const { rows } = await stack.db.pool.query("SELECT id FROM scrape_jobs WHERE team_id = $1 AND status = 'failed' ORDER BY created_at DESC LIMIT 1", [stack.teamId]);
    const got = await call(stack, 'GET', `/v2/scrape/${rows[0].id}`);
    assert.equal(got.status, 415);
    assert.equal(got.json.code, 'SCRAPE_UNSUPPORTED_FILE_TYPE');
  });
});
