import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scrapeUrlRequestSchema } from '@wds/contracts';
import { buildDocument, documentFromOutputs, type PageContent } from './build-document';
import { buildFromCache } from './cached';
import { outputsCover, outputsVariant, storedFormatsNeeded, type PageOutputs } from './outputs';

// A cache hit served from stored outputs must answer exactly what converting the cached body
// answers: same formats, same page metadata, same redaction and credits.
const HTML = `<!doctype html><html lang="en"><head><title>Shop</title><meta name="description" content="A page">
<meta property="og:title" content="OG shop"><script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Mug","offers":{"@type":"Offer","price":"9.50","priceCurrency":"EUR"}}</script></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav><main><h1>Mug</h1><p>Write to jane.doe@example.com or call +1 415 555 0100.</p>
<p><img src="/mug.png" alt="A mug"> <a href="/buy?x=1">Buy</a></p><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table></main><footer>© shop</footer></body></html>`;

const page: PageContent = { requestedUrl: 'https://shop.test/mug', finalUrl: 'https://shop.test/mug', statusCode: 200, contentTypeHeader: 'text/html; charset=utf-8', body: Buffer.from(HTML) };
const options = (extra: Record<string, unknown>) => scrapeUrlRequestSchema.parse({ url: page.requestedUrl, ...extra });

const cases: Record<string, unknown>[] = [
  {},
  { formats: ['markdown', 'html', 'rawHtml', 'links', 'images'] },
  { formats: ['html'], onlyMainContent: false },
  { formats: ['markdown', 'product'] },
  { formats: ['markdown'], redactPII: true },
  { formats: ['markdown', 'html'], redactPII: { replaceStyle: 'hash' } },
  { formats: ['markdown'], includeTags: ['table'], removeBase64Images: false },
];

test('a document served from stored outputs equals the fresh conversion, whatever the formats and options', () => {
  for (const extra of cases) {
    const o = options(extra);
    const ctx = { scrapeId: 'b3f7c6de-0000-4000-8000-000000000001', engine: 'http' };
    const fresh = buildDocument(page, o, ctx);
    assert.ok(fresh.outputs, 'an HTML page has outputs to store');
    // Through JSON, as they come back from Postgres.
    const stored = JSON.parse(JSON.stringify(fresh.outputs)) as PageOutputs;
    assert.ok(outputsCover(stored, storedFormatsNeeded(o)), JSON.stringify(extra));
    const served = documentFromOutputs({ ...page, charset: fresh.charset }, stored, o, ctx);
    assert.deepEqual(served.document, fresh.document, JSON.stringify(extra));
    assert.equal(served.creditsUsed, fresh.creditsUsed);
  }
});

test('stored outputs hold the page before redaction: redaction is applied per request', () => {
  const o = options({ formats: ['markdown'], redactPII: true });
  const fresh = buildDocument(page, o, { scrapeId: 's1', engine: 'http' });
  assert.doesNotMatch(fresh.document.markdown!, /jane\.doe@example\.com/);
  assert.match(fresh.outputs!.markdown!, /jane\.doe@example\.com/, 'the outputs are the conversion, shared by requests with and without redaction');
});

test('the variant separates every conversion option and the formats are not part of it', () => {
  const base = outputsVariant(options({}));
  assert.equal(outputsVariant(options({ formats: ['html', 'links'] })), base);
  for (const extra of [{ onlyMainContent: false }, { includeTags: ['main'] }, { excludeTags: ['nav'] }, { removeBase64Images: false }]) {
    assert.notEqual(outputsVariant(options(extra)), base, JSON.stringify(extra));
  }
});

test('buildFromCache converts only what the outputs lack, and says what it added', async () => {
  const md = options({ formats: ['markdown'] });
  const first = buildDocument(page, md, { scrapeId: 's', engine: 'http' });
  const stored = JSON.parse(JSON.stringify(first.outputs)) as PageOutputs;
  const hit = { finalUrl: page.finalUrl, statusCode: 200, contentType: page.contentTypeHeader, charset: first.charset };
  const ctx = { scrapeId: 's2', engine: 'http', cache: { state: 'hit' as const, cachedAt: new Date(0) }, timeoutMs: 10_000 };

  const served = await buildFromCache(page.requestedUrl, { ...hit, body: null, outputs: { ...stored, markdown: 'STORED' } }, md, ctx);
  assert.equal(served.built.document.markdown, 'STORED', 'served from the outputs, not converted');
  assert.equal(served.added, undefined);
  assert.equal(served.built.document.metadata.cacheState, 'hit');

  const html = options({ formats: ['markdown', 'html'] });
  const converted = await buildFromCache(page.requestedUrl, { ...hit, body: page.body, outputs: stored }, html, ctx);
  assert.match(converted.built.document.html!, /<h1>Mug<\/h1>/);
  assert.ok(converted.added?.html, 'the html format is added to the entry');
  await assert.rejects(buildFromCache(page.requestedUrl, { ...hit, body: null, outputs: stored }, html, ctx), /without its body/);
});
