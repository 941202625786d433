import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { call, html, namespaceFor, startFixtureSite, startStack, type FixtureSite, type Stack } from '@wds/test-utils';

// The spec's cache rules (maxAge, minAge, lockdown, storeInCache), proven with the fixture's
// per-path hit counter: a cache answer must make no outbound request at all.
let stack: Stack;
let site: FixtureSite;
let fc: Firecrawl;
let n = 0;

/** A fresh path per test so tests never share cache entries. */
function page(label: string): string {
  const path = `/cache/${label}-${++n}`;
  site.route(path, html(`<html><head><title>${label}</title></head><body><main><p>Cached ${label} body</p></main></body></html>`));
  return path;
}

before(async () => {
  [stack, site] = await Promise.all([startStack({ namespace: namespaceFor(import.meta.url) }), startFixtureSite()]);
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

test('a second scrape within maxAge is served from the cache without an outbound request', async () => {
  const p = page('hit');
  const first = await fc.scrape(site.url(p));
  assert.equal(first.metadata!.cacheState, 'miss');
  assert.equal(first.metadata!.cachedAt, undefined);
  const second = await fc.scrape(site.url(p), { formats: ['markdown', 'html'] });
  assert.equal(site.hits(p), 1);
  assert.equal(second.metadata!.cacheState, 'hit');
  assert.ok(!Number.isNaN(Date.parse(second.metadata!.cachedAt!)));
  assert.notEqual(second.metadata!.scrapeId, first.metadata!.scrapeId);
  assert.equal(second.markdown, first.markdown);
  assert.match(second.html!, /Cached hit/, 'formats are rebuilt for the new request');
});

test('maxAge 0 always fetches fresh', async () => {
  const p = page('fresh');
  await fc.scrape(site.url(p));
  const again = await fc.scrape(site.url(p), { maxAge: 0 });
  assert.equal(site.hits(p), 2);
  assert.equal(again.metadata!.cacheState, 'miss');
});

test('a copy older than maxAge triggers a fresh scrape', async () => {
  const p = page('stale');
  await fc.scrape(site.url(p));
  await new Promise((r) => setTimeout(r, 1_200));
  await fc.scrape(site.url(p), { maxAge: 1_000 });
  assert.equal(site.hits(p), 2);
  await fc.scrape(site.url(p), { maxAge: 60_000 });
  assert.equal(site.hits(p), 2, 'the refreshed copy is reused');
});

test('minAge: cache only; a miss is 404 SCRAPE_NO_CACHED_DATA with no outbound request', async () => {
  const p = page('minage');
  const miss = await call(stack, 'POST', '/v2/scrape', { url: site.url(p), minAge: 1 });
  assert.equal(miss.status, 404);
  assert.equal(miss.json.success, false);
  assert.equal(miss.json.code, 'SCRAPE_NO_CACHED_DATA');
  assert.equal(site.hits(p), 0);

  await fc.scrape(site.url(p));
  await new Promise((r) => setTimeout(r, 50));
  const hit = await call(stack, 'POST', '/v2/scrape', { url: site.url(p), minAge: 1 });
  assert.equal(hit.status, 200);
  assert.equal(hit.json.data.metadata.cacheState, 'hit');
  const tooYoung = await call(stack, 'POST', '/v2/scrape', { url: site.url(p), minAge: 3_600_000 });
  assert.equal(tooYoung.status, 404, 'the copy is younger than minAge');
  assert.equal(tooYoung.json.code, 'SCRAPE_NO_CACHED_DATA');
  assert.equal(site.hits(p), 1);
});

test('lockdown: a miss is 404 SCRAPE_LOCKDOWN_CACHE_MISS, never an outbound request, and leaves no URL behind', async () => {
  const p = page('lockdown');
  const miss = await call(stack, 'POST', '/v2/scrape', { url: site.url(p), lockdown: true });
  assert.equal(miss.status, 404);
  assert.equal(miss.json.code, 'SCRAPE_LOCKDOWN_CACHE_MISS');
  assert.equal(site.hits(p), 0);
  const logged = await stack.db.pool.query('SELECT count(*)::int AS n FROM scrape_jobs WHERE url = $1', [site.url(p)]);
  assert.equal(logged.rows[0].n, 0);
  assert.ok(!stack.api.output().includes(p), 'the URL is not in the API log');
});

test('lockdown: a hit is served from the cache (default maxAge 2 years) and billed 5 credits', async () => {
  const p = page('lockdown-hit');
  await fc.scrape(site.url(p));
  const hit = await fc.scrape(site.url(p), { lockdown: true });
  assert.equal(hit.metadata!.cacheState, 'hit');
  assert.equal(hit.metadata!.creditsUsed, 5);
  assert.equal(site.hits(p), 1);
});

test('storeInCache:false is not stored; headers force it off too', async () => {
  const p = page('nostore');
  await fc.scrape(site.url(p), { storeInCache: false });
  await fc.scrape(site.url(p));
  assert.equal(site.hits(p), 2, 'first scrape was not cached');

  const q = page('headers');
  await fc.scrape(site.url(q), { headers: { Cookie: 'session=secret' } });
  const next = await call(stack, 'POST', '/v2/scrape', { url: site.url(q), minAge: 1 });
  assert.equal(next.status, 404, 'a scrape with headers is never stored');
});

test('the cache key separates content-changing options (location) but not formats', async () => {
  const p = page('variant');
  await fc.scrape(site.url(p));
  await fc.scrape(site.url(p), { location: { country: 'FR' } });
  assert.equal(site.hits(p), 2, 'a different location is a different cache entry');
  await fc.scrape(site.url(p), { location: { country: 'FR' }, formats: ['links'] });
  await fc.scrape(site.url(p), { onlyMainContent: false });
  assert.equal(site.hits(p), 2, 'formats and cleaning options reuse the stored page');
});

test('4xx pages are cached, 5xx pages are not', async () => {
  site.route('/cache/err500', (_q, r) => void r.writeHead(503, { 'content-type': 'text/html' }).end('<p>down</p>'));
  await fc.scrape(site.url('/cache/err500'));
  await fc.scrape(site.url('/cache/err500'));
  assert.equal(site.hits('/cache/err500'), 2);
  site.route('/cache/err404', (_q, r) => void r.writeHead(404, { 'content-type': 'text/html' }).end('<p>gone</p>'));
  await fc.scrape(site.url('/cache/err404'));
  const again = await fc.scrape(site.url('/cache/err404'));
  assert.equal(site.hits('/cache/err404'), 1);
  assert.equal(again.metadata!.statusCode, 404);
  assert.equal(again.metadata!.cacheState, 'hit');
});

/** Marks one stored format of the entry's only (or given) outputs, so an answer carrying the mark was served from them. */
async function markStored(url: string, format: string, mark: string) {
  const r = await stack.db.pool.query(
    `UPDATE page_cache SET outputs = jsonb_set(outputs, ARRAY[(SELECT min(k) FROM jsonb_object_keys(outputs) k), $2], to_jsonb($3::text)) WHERE url = $1 RETURNING (SELECT count(*)::int FROM jsonb_object_keys(outputs)) AS variants`,
    [url, format, mark],
  );
  return r.rows[0]?.variants as number | undefined;
}

test('a hit is served from the formats stored with the entry; only formats never produced are converted', async () => {
  const p = page('outputs');
  const url = site.url(p);
  const first = await fc.scrape(url, { formats: ['markdown'] });
  assert.equal(await markStored(url, 'markdown', 'STORED MARKDOWN'), 1, 'the miss stored its outputs with the page');
  const hit = await fc.scrape(url, { formats: ['markdown'] });
  assert.equal(hit.markdown, 'STORED MARKDOWN', 'served from the stored outputs, not converted again');
  assert.equal(hit.metadata!.title, first.metadata!.title);
  assert.equal(hit.metadata!.cacheState, 'hit');

  // html was never produced for this entry: the hit converts the body and stores what it made.
  const both = await fc.scrape(url, { formats: ['markdown', 'html'] });
  assert.equal(both.markdown, first.markdown);
  assert.match(both.html!, /Cached outputs body/);
  await markStored(url, 'html', '<p>STORED HTML</p>');
  const again = await fc.scrape(url, { formats: ['html', 'rawHtml'] });
  assert.equal(again.html, '<p>STORED HTML</p>');
  assert.match(again.rawHtml!, /<title>outputs<\/title>/, 'rawHtml is the cached page itself');

  // Other cleaning options never share outputs: converted, and kept as a second set.
  const full = await fc.scrape(url, { formats: ['markdown'], onlyMainContent: false });
  assert.doesNotMatch(full.markdown!, /STORED/);
  const variants = await stack.db.pool.query(`SELECT (SELECT count(*)::int FROM jsonb_object_keys(outputs)) AS n FROM page_cache WHERE url = $1`, [url]);
  assert.equal(variants.rows[0].n, 2);
  assert.equal(site.hits(p), 1, 'all of it without an outbound request');

  // A fresh fetch replaces the body, and the outputs with it.
  const fresh = await fc.scrape(url, { formats: ['markdown'], maxAge: 0 });
  assert.equal(fresh.markdown, first.markdown);
  const after = await fc.scrape(url, { formats: ['markdown'] });
  assert.equal(after.markdown, first.markdown, 'the marked outputs went with the old body');
});
