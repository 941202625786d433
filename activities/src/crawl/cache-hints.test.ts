import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { scrapeOptionsSchema } from '@wds/contracts';
import { connectDb, migrateDb, storeCachedPage, type ClaimedUrl, type DbHandle } from '@wds/db';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { cacheHints } from './cache-hints';
import { pageCacheKey } from '../scrape/pipeline';

// A claim's cache question on a real Postgres: URLs with no fresh entry are known misses, the
// others (and URLs no claim asked about) look themselves up.
let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 3 });
  await migrateDb(h);
});
after(() => h?.close());

const claimed = (url: string): ClaimedUrl => ({ url, key: url, depth: 0, external: false, discoveryOnly: false, pageId: randomUUID() }) as ClaimedUrl;
const entry = (url: string) => ({ url, finalUrl: url, statusCode: 200, contentType: 'text/html', charset: null, body: Buffer.from('<p>x</p>'), engine: 'http' });

test('a claim asks once which URLs are cached: fresh entries are looked up, missing and stale ones are known misses', async () => {
  const o = scrapeOptionsSchema.parse({ maxAge: 60_000 });
  const [fresh, stale, none, unasked] = ['fresh', 'stale', 'none', 'unasked'].map((p) => `https://hints.test/${randomUUID()}/${p}`) as [string, string, string, string];
  await storeCachedPage(h.db, pageCacheKey(o, fresh), entry(fresh));
  await storeCachedPage(h.db, pageCacheKey(o, stale), entry(stale));
  await h.pool.query(`UPDATE page_cache SET fetched_at = now() - interval '2 minutes' WHERE cache_key = $1`, [pageCacheKey(o, stale)]);
  // Another option set is another entry: this one is not the page's.
  await storeCachedPage(h.db, pageCacheKey(scrapeOptionsSchema.parse({ location: { country: 'DE' } }), none), entry(none));
  const hints = cacheHints(h.db, o)!;
  hints.claimed([fresh, stale, none].map(claimed));
  assert.equal(await hints.knownMiss(claimed(fresh)), false);
  assert.equal(await hints.knownMiss(claimed(stale)), true);
  assert.equal(await hints.knownMiss(claimed(none)), true);
  assert.equal(await hints.knownMiss(claimed(unasked)), false, 'no claim asked: the page looks itself up');
  assert.equal(await hints.knownMiss(claimed(none)), false, 'an answer serves one attempt; a retry looks itself up');
});

test('options whose pages never read the cache ask nothing', () => {
  assert.equal(cacheHints(h.db, scrapeOptionsSchema.parse({ maxAge: 0 })), null);
  assert.equal(cacheHints(h.db, scrapeOptionsSchema.parse({ headers: { 'x-a': '1' } })), null);
  assert.equal(cacheHints(h.db, scrapeOptionsSchema.parse({ formats: ['markdown', 'changeTracking'] })), null);
});
