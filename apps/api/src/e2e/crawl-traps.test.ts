import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Firecrawl from '@mendable/firecrawl-js';
import { TRAP_LIMITS } from '@wds/crawl';
import { call, namespaceFor, startFixtureSite, startStack, type FixtureSite, type Stack } from '@wds/test-utils';

// Crawler traps and duplicates (issue 32 item 4) through the SDK, on a site built to trap crawlers:
// one article under twelve session-id URLs (each linking on with new session ids), an endless
// calendar of ?month= pages, relative links that nest for ever, and a story whose tracking-parameter
// copy names the story as its canonical URL.
let stack: Stack;
let site: FixtureSite;
let fc: Firecrawl;

const send = (res: ServerResponse, title: string, body: string, head = '') => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<html><head><title>${title}</title>${head}</head><body><h1>${title}</h1>${body}</body></html>`);
};
const query = (req: IncomingMessage) => new URL(req.url ?? '/', 'http://x').searchParams;
let sid = 100;

before(async () => {
  site = await startFixtureSite({
    '/': (_q, res) =>
      send(res, 'Home', [
        ...Array.from({ length: 12 }, (_, i) => `<a href="/article?sid=${i + 1}">article</a>`),
        '<a href="/calendar?month=0">calendar</a>', '<a href="/loop/">loop</a>', '<a href="/story">story</a>',
      ].join(' ')),
    // The same article whatever the session id; its links carry fresh ones (a session-id trap).
    '/article': (_q, res) => send(res, 'The article', `<p>One article, many URLs.</p><a href="/article?sid=${++sid}">again</a>`),
    '/calendar': (req, res) => {
      const m = Number(query(req).get('month') ?? 0);
      send(res, `Month ${m}`, `<p>Events of month ${m}.</p><a href="/calendar?month=${m + 1}">next month</a>`);
    },
    // Relative links under /loop/ nest: /loop/x/, /loop/x/x/, … (every path answers).
    '/loop/': (_q, res) => send(res, 'Loop', '<a href="x/">deeper</a>'),
    '/loop/x/': (_q, res) => send(res, 'Loop x', '<a href="x/">deeper</a>'),
    '/loop/x/x/': (_q, res) => send(res, 'Loop x x', '<a href="x/">deeper</a>'),
    '/loop/x/x/x/': (_q, res) => send(res, 'Loop x x x', '<a href="x/">deeper</a>'),
    '/story': (req, res) => {
      const tracked = query(req).has('utm');
      // The tracked copy differs (a timestamp) but names the story as canonical.
      send(res, 'Story', `<p>The story.</p><p>${tracked ? `served ${Date.now()}` : ''}</p>${tracked ? '' : '<a href="/story?utm=feed">share</a>'}`, tracked ? '<link rel="canonical" href="/story">' : '');
    },
  });
  stack = await startStack({ namespace: namespaceFor(import.meta.url) });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

describe('crawl traps and duplicates', () => {
  test('a trap site ends within its limits with one document per article; duplicates are listed, not stored or billed', async () => {
    const job = await fc.crawl(site.url('/'), { limit: 300, sitemap: 'skip', scrapeOptions: { maxAge: 0 }, pollInterval: 1 } as never);
    assert.equal(job.status, 'completed');
    const urls = job.data.map((d) => d.metadata!.sourceURL!);
    const articles = urls.filter((u) => new URL(u).pathname === '/article');
    assert.equal(articles.length, 1, `one document for the article (${articles.join(' ')})`);
    const months = urls.filter((u) => new URL(u).pathname === '/calendar');
    assert.equal(months.length, TRAP_LIMITS.maxQueryVariants, 'the calendar stops at its query-variant cap (one worker)');
    assert.equal(site.hits('/loop/x/x/x/'), 0, 'a segment three times in a row is not followed');
    assert.equal(urls.filter((u) => new URL(u).pathname.startsWith('/loop')).length, 3);
    assert.deepEqual(urls.filter((u) => new URL(u).pathname === '/story'), [site.url('/story')], 'the tracked copy is not stored');
    assert.equal(job.creditsUsed, job.data.length, 'duplicates are not billed');

    const errors = await fc.getCrawlErrors((job as { id: string }).id);
    assert.deepEqual(errors.errors, []);
    // The SDK's getCrawlErrors keeps only errors and robotsBlocked: the body's `duplicates` is read over HTTP.
    assert.equal((errors as { duplicates?: unknown }).duplicates, undefined);
    const raw = await call(stack, 'GET', `/v2/crawl/${(job as { id: string }).id}/errors`);
    const dups = raw.json.duplicates as { url: string; duplicateOf: string }[];
    const articleDups = dups.filter((d) => new URL(d.url).pathname === '/article');
    assert.ok(articleDups.length >= 11, `the other session-id URLs are duplicates (${articleDups.length})`);
    assert.ok(articleDups.every((d) => d.duplicateOf === articles[0]), 'each linked to the stored article');
    assert.ok(dups.some((d) => d.url === site.url('/story?utm=feed') && d.duplicateOf === site.url('/story')), 'the canonical copy names the story');
    // A duplicate's links are not followed: no more article fetches than the 12 linked + those the stored one linked.
    assert.ok(site.hits('/article') <= 13, `${site.hits('/article')} article fetches`);
  });
});
