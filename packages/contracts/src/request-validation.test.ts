import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { z } from 'zod';
import { batchScrapeRequestSchema, crawlRequestSchema, mapRequestSchema } from './crawl';
import { extractRequestSchema } from './extract';
import { scrapeUrlRequestSchema } from './scrape';

// Request validation that the schemas alone decide, checked without a stack (these cases booted
// Postgres, Temporal, an API and a worker in apps/api/src/e2e/crawl-jobs.test.ts before). The e2e
// file keeps one case per endpoint, proving the API answers a schema failure in the error envelope.
const cases: [string, z.ZodType, unknown, string][] = [
  ['crawl', crawlRequestSchema, { url: 'nope' }, 'url'],
  ['crawl', crawlRequestSchema, { url: 'http://a.test', limit: 0 }, 'limit'],
  ['crawl', crawlRequestSchema, { url: 'http://a.test', sitemap: 'sometimes' }, 'sitemap'],
  ['crawl', crawlRequestSchema, { url: 'http://a.test', includePaths: ['(unclosed'] }, 'includePaths.0'],
  ['crawl', crawlRequestSchema, { url: 'http://a.test', webhook: { url: 'x' } }, 'webhook'],
  ['crawl', crawlRequestSchema, { url: 'http://a.test', webhook: { url: 'http://h.test', events: ['paged'] } }, 'webhook'],
  ['crawl', crawlRequestSchema, { url: 'http://a.test', scrapeOptions: { formats: ['nope'] } }, 'scrapeOptions.formats.0'],
  ['crawl', crawlRequestSchema, { url: 'http://a.test', maxConcurrency: 0 }, 'maxConcurrency'],
  ['crawl', crawlRequestSchema, { url: 'http://a.test', delay: -1 }, 'delay'],
  ['crawl', crawlRequestSchema, { url: 'http://a.test', bogus: 1 }, ''],
  ['batch', batchScrapeRequestSchema, { urls: [] }, 'urls'],
  ['batch', batchScrapeRequestSchema, { urls: 'http://a.test' }, 'urls'],
  ['batch', batchScrapeRequestSchema, { urls: ['http://a.test'], timeout: 5 }, 'timeout'],
  ['map', mapRequestSchema, { url: 'http://a.test', limit: 100001 }, 'limit'],
  ['map', mapRequestSchema, { url: 'http://a.test', sitemap: 'x' }, 'sitemap'],
  ['map', mapRequestSchema, {}, 'url'],
  ['extract', extractRequestSchema, { urls: ['http://a.test/'] }, ''],
  ['scrape', scrapeUrlRequestSchema, { url: 'http://a.test', formats: [{ type: 'attributes', selectors: [] }] }, 'formats'],
  ['scrape', scrapeUrlRequestSchema, { url: 'http://a.test', formats: ['attributes'] }, 'formats'],
];

for (const [kind, schema, body, field] of cases) {
  test(`${kind} ${JSON.stringify(body)} is refused at ${field || 'the top level'}`, () => {
    const r = schema.safeParse(body);
    assert.equal(r.success, false);
    const paths = r.error!.issues.map((i) => i.path.join('.'));
    assert.ok(paths.some((p) => p.startsWith(field)), JSON.stringify(r.error!.issues));
  });
}
