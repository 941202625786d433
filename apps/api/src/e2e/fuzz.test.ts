import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { call, html, namespaceFor, startFixtureSite, startStack, until, type FixtureSite, type Stack } from '@wds/test-utils';
import { fuzzCorpus, type FuzzCase } from './fuzz-corpus';

// Bad bytes (NUL, lone surrogates) are 400s naming the field, pages containing them scrape and
// crawl, and a seeded corpus of hostile requests over every route never gets a 5xx.
let stack: Stack;
let site: FixtureSite;

/** A UTF-16 page whose text holds unpaired surrogates (decoding UTF-16 keeps them). */
const UTF16_PAGE = Buffer.from('<html><head><title>Half \ud800 pair</title></head><body><main><p>lone \udc00 low</p><a href="/nul">next</a></main></body></html>', 'utf16le');
/** NUL bytes in the title, the text, an attribute and a link. */
const NUL_PAGE = '<html><head><title>Ti\u0000tle</title><meta name="description" content="d\u0000esc"></head><body><main><h1>Nul\u0000page</h1><p>body \u0000 text</p><a href="/utf16?\u0000">back</a></main></body></html>';

before(async () => {
  // The site first: were the stack to fail to start, nothing would be left open.
  site = await startFixtureSite({
      '/page': html('<html><body><main><p>fuzz target</p></main></body></html>'),
      '/nul': (_q, r) => void r.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(Buffer.from(NUL_PAGE, 'utf8')),
      '/utf16': (_q, r) => void r.writeHead(200, { 'content-type': 'text/html; charset=utf-16le' }).end(UTF16_PAGE),
    '/nul.txt': (_q, r) => void r.writeHead(200, { 'content-type': 'text/plain' }).end('plain \u0000 text'),
  });
  // No rate limits: every request of the corpus must reach validation, not stop at a 429.
  const unlimited = Object.fromEntries(['SCRAPE', 'CRAWL', 'BATCH', 'MAP', 'PARSE', 'STATUS', 'OTHER'].map((c) => [`WDS_RATE_LIMIT_${c}`, '0']));
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: unlimited });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

/** Raw HTTP (fetch refuses `Expect` and odd framing): status and parsed body. */
function send(c: FuzzCase): Promise<{ status: number; text: string }> {
  const u = new URL(stack.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, method: c.method, path: c.path, headers: { authorization: `Bearer ${stack.apiKey}`, ...(c.body ? { 'content-length': String(c.body.length) } : {}), ...c.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer in 30 s: ${c.label}`)));
    req.on('error', reject);
    // With `Expect: 100-continue` the body goes once the server says so (a 417 ends the exchange).
    if (c.headers.expect?.toLowerCase() === '100-continue') req.once('continue', () => req.end(c.body));
    else req.end(c.body);
    if (c.headers.expect && c.headers.expect.toLowerCase() !== '100-continue') req.once('information', () => {});
  });
}

/** 5xx the spec documents for a target site or a missing engine; never 500. */
const UPSTREAM = new Set([502, 503, 504]);

describe('bad bytes in requests are 400s naming the field', () => {
  const url = () => site.url('/page');
  for (const [label, path, body, field, error] of [
    ['NUL in scrape url', '/v2/scrape', () => ({ url: `${url()}?q=\u0000` }), 'url', 'Invalid URL'],
    ['lone surrogate in scrape url', '/v2/scrape', () => ({ url: `${url()}/\ud800` }), 'url', 'Invalid URL'],
    ['NUL in a scrape header value', '/v2/scrape', () => ({ url: url(), headers: { Cookie: 'sid=\u0000' } }), 'headers.Cookie', 'Bad Request'],
    ['NUL in a header name', '/v2/scrape', () => ({ url: url(), headers: { 'X-\u0000': 'v' } }), 'headers.X-\u0000', 'Bad Request'],
    ['lone surrogate in includeTags', '/v2/scrape', () => ({ url: url(), includeTags: ['main\udc00'] }), 'includeTags.0', 'Bad Request'],
    ['NUL in a catalog option', '/v2/scrape', () => ({ catalog: { provider: 'p', capability: 'c', options: { q: 'a\u0000' } } }), 'catalog.options.q', 'Bad Request'],
    ['NUL in crawl includePaths', '/v2/crawl', () => ({ url: url(), includePaths: ['a\u0000'] }), 'includePaths.0', 'Bad Request'],
    ['lone surrogate in crawl webhook metadata', '/v2/crawl', () => ({ url: url(), webhook: { url: url(), metadata: { k: '\ud800' } } }), 'webhook.metadata.k', 'Bad Request'],
    ['NUL in crawl scrapeOptions headers', '/v2/crawl', () => ({ url: url(), scrapeOptions: { headers: { A: '\u0000' } } }), 'scrapeOptions.headers.A', 'Bad Request'],
    ['NUL in a batch URL', '/v2/batch/scrape', () => ({ urls: [url(), `${url()}\u0000`] }), 'urls.1', 'Bad Request'],
    ['lone surrogate in map search', '/v2/map', () => ({ url: url(), search: 'x\udfff' }), 'search', 'Bad Request'],
    ['NUL in params-preview prompt', '/v2/crawl/params-preview', () => ({ url: url(), prompt: 'p\u0000' }), 'prompt', 'Bad Request'],
  ] as const) {
    test(label, async () => {
      const r = await call(stack, 'POST', path, body());
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.success, false);
      assert.equal(r.json.error, error);
      assert.equal(r.json.code, 'BAD_REQUEST');
      const d = (r.json.details as { code: string; path: (string | number)[]; message: string }[]).find((x) => x.code === 'invalid_characters');
      assert.ok(d, r.text);
      assert.equal(d.path.join('.'), field);
      assert.match(d.message, /NUL|unpaired UTF-16 surrogate/);
    });
  }

  test('a multipart upload whose options hold a NUL → 400 naming the option', async () => {
    const form = new FormData();
    form.append('file', new Blob(['hello']), 'a.txt');
    form.append('options', JSON.stringify({ formats: ['markdown'], parsers: ['\u0000'] }));
    const r = await call(stack, 'POST', '/v2/parse', form);
    assert.equal(r.status, 400, r.text);
    assert.ok(JSON.stringify(r.json.details).includes('invalid_characters'), r.text);
  });

  test('Expect: 100-continue is honoured (the body is read after the 100 and answered)', async () => {
    const body = Buffer.from(JSON.stringify({ url: site.url('/page') }));
    const r = await send({ label: 'expect', method: 'POST', path: '/v2/scrape', headers: { 'content-type': 'application/json', expect: '100-continue' }, body });
    assert.equal(r.status, 200, r.text);
    assert.match(JSON.parse(r.text).data.markdown, /fuzz target/);
    const other = await send({ label: 'expect other', method: 'POST', path: '/v2/scrape', headers: { 'content-type': 'application/json', expect: 'teapot' }, body });
    assert.equal(other.status, 417);
    assert.equal(JSON.parse(other.text).success, false, 'in the error body shape');
  });
});

describe('pages holding NUL bytes and unpaired surrogates are stored, not refused', () => {
  test('scrape: each becomes U+FFFD in every format, through the SDK and GET /v2/scrape/{id}', async () => {
    const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
    for (const [path, text] of [['/nul', 'body'], ['/utf16', 'lone'], ['/nul.txt', 'plain']] as const) {
      const doc = await fc.scrape(site.url(path), { formats: ['markdown', 'html', 'rawHtml', 'links'] });
      const all = JSON.stringify(doc);
      assert.ok(doc.markdown?.includes(text), `${path}: ${doc.markdown}`);
      assert.ok(!all.includes('\\u0000') && !/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i.test(all), `${path} holds no NUL or lone surrogate: ${all.slice(0, 300)}`);
      assert.ok(all.includes('\ufffd'), `${path}: replaced by U+FFFD`);
      const again = await call(stack, 'GET', `/v2/scrape/${doc.metadata?.scrapeId}`);
      assert.equal(again.status, 200, again.text);
      assert.equal(again.json.data.markdown, doc.markdown);
    }
  });

  test('crawl: every page ends as a document (a NUL in a link included) and the job completes', async () => {
    const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
    const job = await fc.crawl(site.url('/utf16'), { limit: 5, sitemap: 'skip', crawlEntireDomain: true, pollInterval: 1 });
    assert.equal(job.status, 'completed', JSON.stringify(job).slice(0, 500));
    const urls = job.data.map((d) => { const u = new URL(d.metadata!.sourceURL!); return u.pathname + u.search; }).sort();
    // The HTML parser reads the NUL in the link as U+FFFD, which the URL then percent-encodes: /utf16?%EF%BF%BD is
    // fetched, and as the site answers it with /utf16's page it is that page's duplicate (not a second document).
    assert.deepEqual(urls, ['/nul', '/utf16']);
    const errors = await call(stack, 'GET', `/v2/crawl/${job.id}/errors`);
    assert.deepEqual(errors.json.errors, []);
    assert.deepEqual(errors.json.duplicates, [{ url: site.url('/utf16?%EF%BF%BD'), duplicateOf: site.url('/utf16') }]);
  });
});

describe('fuzz', () => {
  test('a seeded corpus of 3,000 hostile requests over every route: no 5xx, every error in the error body shape', { timeout: 120_000 }, async () => {
    const corpus = fuzzCorpus(20_261_125, 3_000, site.url('/page'));
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let next = 0;
    const t0 = performance.now();
    // A few at a time: the machine is shared, and requests that start jobs take a moment.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < corpus.length) {
          const c = corpus[next++]!;
          const r = await send(c).catch((e: Error) => ({ status: -1, text: e.message }));
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          let body: any;
          try {
            body = JSON.parse(r.text);
          } catch {
            body = undefined;
          }
          const upstream = UPSTREAM.has(r.status) && typeof body?.code === 'string' && body.code !== 'UNKNOWN_ERROR';
          if (r.status < 100 || (r.status >= 500 && !upstream)) failures.push(`${r.status} ${c.method} ${c.label}: ${r.text.slice(0, 200)}`);
          else if (r.status >= 400 && (body?.success !== false || typeof body.error !== 'string')) failures.push(`${r.status} not in the error shape: ${c.label}: ${r.text.slice(0, 200)}`);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const summary = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ');
    console.log(`# fuzz: ${corpus.length} requests in ${seconds.toFixed(1)} s: ${summary}`);
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} bad answers`);
    // Every route family answered, and some requests were valid enough to run.
    assert.ok((statuses.get(400) ?? 0) > 1_000, summary);
    assert.ok((statuses.get(200) ?? 0) > 50, summary);
    assert.equal(stack.api.child.exitCode, null, 'the API is still running');
    assert.equal(stack.worker.child.exitCode, null, 'the worker is still running');
    // And still serves: jobs the corpus started do not block a plain scrape.
    await until(async () => (await call(stack, 'POST', '/v2/scrape', { url: site.url('/page') })).status === 200, 'a plain scrape after the fuzz', { timeoutMs: 60_000 });
  });
});
