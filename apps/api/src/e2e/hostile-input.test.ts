import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { call, html, namespaceFor, startFixtureSite, startStack, until, type FixtureSite, type Stack } from '@wds/test-utils';

// Input crafted to make a regex or a parser run for seconds must never stop a worker's event
// loop: while each one is being processed, a scrape of another page on the same worker answers
// within 5 s. Each input below stalled the worker for 15 s or more before (sitemap regex,
// include-path RegExp, quadratic heuristics), so the concurrent scrape failed there.
let stack: Stack;
let site: FixtureSite;
let fc: Firecrawl;

const CONCURRENT_SCRAPE_MS = 5_000;
const doc = (title: string, body: string) => `<!doctype html><html lang="en"><head><title>${title}</title></head><body>${body}</body></html>`;
const prose = `<p>${'Plain server-rendered text for readers, long enough to stay on HTTP. '.repeat(20)}</p>`;

/** <loc> followed by spaces that never close: the old pattern backtracked ~5 s per block. */
const REDOS_SITEMAP = `<?xml version="1.0"?><urlset>${`<url><loc>${' '.repeat(200)}</url>`.repeat(3)}<url><loc>SITE/listed</loc></url></urlset>`;
/** 28 a's then a character `(a+)+$` cannot end on: 2^28 backtracking steps for a RegExp (26 took 5.3 s). */
const EVIL_PATH = `/${'a'.repeat(28)}!`;
const GOOD_PATH = `/${'a'.repeat(28)}`;
/** 240 KB of unclosed comment openers: the old heuristics took 19.5 s. */
const QUADRATIC_PAGE = `<html><body>${'<!--'.repeat(60_000)}`;

/** Scrapes /ok (never cached) and says how long the answer took. */
async function timedScrape(): Promise<number> {
  const t = Date.now();
  const d = await fc.scrape(site.url(`/ok`), { formats: ['markdown'], maxAge: 0 });
  assert.match(d.markdown ?? '', /Plain server-rendered text/);
  return Date.now() - t;
}

before(async () => {
  site = await startFixtureSite({
    '/ok': html(doc('OK', prose)),
    '/listed': html(doc('Listed', prose)),
    [GOOD_PATH]: html(doc('Good', prose)),
    [EVIL_PATH]: html(doc('Evil', prose)),
    '/links': html(doc('Links', `${prose}<a href="${GOOD_PATH}">good</a> <a href="${EVIL_PATH}">evil</a>`)),
    '/quadratic': html(QUADRATIC_PAGE),
  });
  site.route('/sitemap.xml', (_q, r) => void r.writeHead(200, { 'content-type': 'application/xml' }).end(REDOS_SITEMAP.replace('SITE', site.origin)));
  stack = await startStack({ namespace: namespaceFor(import.meta.url) });
  // A browser worker makes the HTTP worker run the escalation test (looksClientRendered) on the pages it fetches.
  await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-browser', WDS_BROWSER_PAGES: '1' });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  await timedScrape(); // warm: the first scrape pays for connections and thread start-up
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

describe('hostile input never stalls a worker', () => {
  test('a sitemap crafted against the old <loc> regex: the crawl seeds, a concurrent scrape answers', async () => {
    const crawl = fc.crawl(site.url('/ok'), { sitemap: 'include', crawlEntireDomain: true, limit: 10, pollInterval: 1 } as never);
    await until(() => site.hits('/sitemap.xml') > 0, 'the sitemap is fetched', { timeoutMs: 30_000 });
    const ms = await timedScrape();
    assert.ok(ms < CONCURRENT_SCRAPE_MS, `a scrape during sitemap parsing took ${ms} ms`);
    const job = await crawl;
    assert.equal(job.status, 'completed');
    const got = job.data.map((d) => new URL(d.metadata!.sourceURL!).pathname).sort();
    assert.deepEqual(got, ['/listed', '/ok'], 'the well-formed <url> after the hostile ones is still read');
  });

  test('includePaths (a+)+$ against a long path: matched in linear time while a concurrent scrape answers', async () => {
    const before = site.hits('/links');
    const crawl = fc.crawl(site.url('/links'), { includePaths: ['(a+)+$'], crawlEntireDomain: true, sitemap: 'skip', limit: 10, pollInterval: 1 } as never);
    await until(() => site.hits('/links') > before, 'the start page is fetched', { timeoutMs: 30_000 });
    const ms = await timedScrape();
    assert.ok(ms < CONCURRENT_SCRAPE_MS, `a scrape during link matching took ${ms} ms`);
    const job = await crawl;
    assert.equal(job.status, 'completed');
    const got = job.data.map((d) => new URL(d.metadata!.sourceURL!).pathname);
    assert.ok(got.includes(GOOD_PATH), `the matching path is crawled: ${got.join(' ')}`);
    assert.ok(!got.includes(EVIL_PATH), 'the path (a+)+$ does not match is not');
  });

  test('a pattern the linear-time engine cannot run is a 400 that names it', async () => {
    const r = await call(stack, 'POST', '/v2/crawl', { url: site.url('/'), includePaths: ['^/ok', '(\\w+)\\1'], excludePaths: ['(?!x)y'] });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.success, false);
    const details = r.json.details as { path: (string | number)[]; message: string }[];
    assert.deepEqual(details.map((d) => d.path), [['includePaths', 1], ['excludePaths', 0]]);
    assert.match(details[0]!.message, /'\(\\w\+\)\\1' is not a supported regular expression/);
    assert.match(details[1]!.message, /'\(\?!x\)y'/);
    const big = await call(stack, 'POST', '/v2/crawl', { url: site.url('/'), includePaths: ['[a-z]{1,900}'] });
    assert.equal(big.status, 400);
    assert.match(big.json.details[0].message, /too complex/);
  });

  test('a page crafted against the old escalation heuristics: examined off the event loop while a concurrent scrape answers', async () => {
    const bad = fc.scrape(site.url('/quadratic'), { formats: ['markdown'], maxAge: 0 });
    await until(() => site.hits('/quadratic') > 0, 'the page is fetched', { timeoutMs: 30_000 });
    const ms = await timedScrape();
    assert.ok(ms < CONCURRENT_SCRAPE_MS, `a scrape during the escalation test took ${ms} ms`);
    const d = await bad;
    assert.equal(d.metadata?.statusCode, 200);
    assert.equal(d.metadata?.engine, 'http', 'an unclosed comment is no sign of a script-rendered page');
  });
});
