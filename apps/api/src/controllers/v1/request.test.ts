import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WdsError } from '@wds/errors';
import { batchToV2, crawlToV2, mapToV2, scrapeOptionsToV2, searchToV2 } from './request';
import { documentToV1, v1Answers } from './response';

const refused = (f: () => unknown, path: (string | number)[]) =>
  assert.throws(f, (e: unknown) => e instanceof WdsError && JSON.stringify((e.details as { path: unknown }[])[0]!.path) === JSON.stringify(path));

test('v1 formats become v2 format objects, with their options', () => {
  const { body, wants } = scrapeOptionsToV2({
    formats: ['markdown', 'screenshot@fullPage', 'extract', 'changeTracking'],
    extract: { schema: { type: 'object' }, systemPrompt: 'Be terse.', prompt: 'The price.' },
    changeTrackingOptions: { modes: ['git-diff'], tag: 'daily' },
    parsePDF: false,
  });
  assert.deepEqual(body.formats, [
    'markdown',
    { type: 'screenshot', fullPage: true },
    { type: 'json', schema: { type: 'object' }, prompt: 'Be terse.\n\nThe price.' },
    { type: 'changeTracking', modes: ['git-diff'], tag: 'daily' },
  ]);
  assert.deepEqual(body.parsers, []);
  assert.equal(body.skipTlsVerification, false, "v1's default");
  assert.equal(wants.extract, true);
  assert.equal(scrapeOptionsToV2({ formats: ['json'], jsonOptions: { prompt: 'x' } }).wants.extract, false);
  refused(() => scrapeOptionsToV2({ formats: ['json'] }), ['jsonOptions']);
  refused(() => scrapeOptionsToV2({ formats: ['json', 'extract'], jsonOptions: { prompt: 'x' } }), ['formats']);
  refused(() => scrapeOptionsToV2({ formats: ['markdown', 'summary'] }), ['formats', 1]);
});

test('crawl: maxDepth as a path-depth pattern, allowBackwardLinks, ignoreSitemap, nested scrapeOptions', () => {
  const b = crawlToV2({ url: 'http://a.test/docs/', maxDepth: 1, allowBackwardLinks: true, ignoreSitemap: true, excludePaths: ['^/x'], scrapeOptions: { formats: ['html'] } });
  assert.equal(b.crawlEntireDomain, true);
  assert.equal(b.sitemap, 'skip');
  const [own, depth] = b.excludePaths as string[];
  assert.equal(own, '^/x');
  const re = new RegExp(depth!);
  // /docs is one segment: maxDepth 1 allows two.
  assert.ok(!re.test('/docs/a'));
  assert.ok(re.test('/docs/a/b'));
  assert.deepEqual((b.scrapeOptions as { formats: unknown }).formats, ['html']);
  assert.ok(new RegExp(crawlToV2({ url: 'http://a.test/', maxDepth: 0, regexOnFullURL: true }).excludePaths as never).test('http://a.test/a'));
  refused(() => crawlToV2({ url: 'http://a.test/', scrapeOptions: { formats: ['nope'] } }), ['scrapeOptions', 'formats', 0]);
});

test('map: v1 ignores the sitemap by default; sitemapOnly; search: v1 defaults, SDK padding dropped', () => {
  assert.equal(mapToV2({ url: 'http://a.test/' }).sitemap, 'skip');
  assert.equal(mapToV2({ url: 'http://a.test/', ignoreSitemap: false }).sitemap, 'include');
  assert.equal(mapToV2({ url: 'http://a.test/', sitemapOnly: true }).sitemap, 'only');
  assert.equal(mapToV2({ url: 'http://a.test/', useIndex: false }).ignoreCache, true);
  const s = searchToV2({ query: 'q', lang: 'en', country: 'us', scrapeOptions: { formats: [] } });
  assert.deepEqual(s, { limit: 5, query: 'q', country: 'us' });
  assert.throws(() => searchToV2({ query: 'q', filter: 'site:x' }), /filter/);
  assert.equal(batchToV2({ urls: ['http://a.test/'] }).body.ignoreInvalidURLs, false);
});

test('answers: extract renamed, next left out on the last page and pointed at v1, map links and search flattened', () => {
  assert.deepEqual(documentToV1({ json: { a: 1 }, markdown: 'm' }, { extract: true }), { extract: { a: 1 }, markdown: 'm' });
  assert.deepEqual(documentToV1({ json: { a: 1 } }, { extract: false }), { json: { a: 1 } });
  assert.equal('next' in v1Answers.status({ success: true, next: null, data: [] }), false);
  assert.equal(v1Answers.status({ success: true, next: 'http://h/v2/crawl/1?skip=2', data: [] }).next, 'http://h/v1/crawl/1?skip=2');
  assert.equal(v1Answers.status({ success: true, next: 'http://h/v2/batch/scrape/1?skip=2', data: [] }).next, 'http://h/v1/batch/scrape/1?skip=2');
  assert.deepEqual(v1Answers.map({ success: true, id: 'x', links: [{ url: 'http://a/' }] }), { success: true, links: ['http://a/'] });
  assert.deepEqual(v1Answers.search({ success: true, id: 'x', creditsUsed: 2, data: { web: [{ url: 'u' }] } }), { success: true, data: [{ url: 'u' }] });
});
