import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { test } from 'node:test';
import { baseDomain, createScope, crawlUrlKey, parseRobots, parseSitemap } from './index';

test('url keys: scheme, www, case, default port, fragment, trailing slash and query order do not matter', () => {
  const k = crawlUrlKey('https://Example.com/a/b/?y=2&x=1#frag');
  assert.equal(k, 'example.com/a/b?x=1&y=2');
  assert.equal(crawlUrlKey('http://www.example.com:80/a/b?x=1&y=2'), k);
  assert.notEqual(crawlUrlKey('https://example.com:8443/a/b?x=1&y=2'), k);
  assert.equal(crawlUrlKey('https://example.com/a/b?y=2', { ignoreQueryParameters: true }), 'example.com/a/b');
  assert.equal(crawlUrlKey('https://example.com'), 'example.com/');
});

test('scope: child paths only unless crawlEntireDomain', () => {
  const s = createScope('https://site.test/docs/', {});
  const from = { depth: 0, external: false };
  assert.equal(s.admit('https://site.test/docs/a', from).ok, true);
  assert.deepEqual(s.admit('https://site.test/pricing', from), { ok: false, reason: 'path' });
  assert.equal(createScope('https://site.test/docs/', { crawlEntireDomain: true }).admit('https://site.test/pricing', from).ok, true);
  // "/docs" as a start path admits "/docs/..." but not "/docs-old"
  const t = createScope('https://site.test/docs', {});
  assert.equal(t.admit('https://site.test/docs/x', from).ok, true);
  assert.equal(t.admit('https://site.test/docs-old', from).ok, false);
});

test('scope: subdomains and external links', () => {
  const from = { depth: 0, external: false };
  const s = createScope('https://www.site.test/', {});
  assert.equal(s.admit('https://site.test/a', from).ok, true, 'www is the same host');
  assert.deepEqual(s.admit('https://blog.site.test/a', from), { ok: false, reason: 'subdomain' });
  assert.deepEqual(s.admit('https://other.test/a', from), { ok: false, reason: 'external' });
  assert.equal(createScope('https://site.test/', { allowSubdomains: true }).admit('https://blog.site.test/a', from).ok, true);
  const ext = createScope('https://site.test/', { allowExternalLinks: true });
  const r = ext.admit('https://other.test/page', from);
  assert.ok(r.ok && r.external);
  assert.deepEqual(ext.admit('https://other.test/', from), { ok: false, reason: 'external-root' });
  assert.deepEqual(ext.admit('https://site.test/b', { depth: 1, external: true }), { ok: false, reason: 'external' }, 'links of external pages are not followed');
});

test('scope: include/exclude on the path or the full URL, depth, file types, schemes', () => {
  const from = { depth: 0, external: false };
  const s = createScope('https://site.test/', { includePaths: ['^/blog/'], excludePaths: ['/draft'], maxDiscoveryDepth: 1 });
  assert.equal(s.admit('https://site.test/blog/a', from).ok, true);
  assert.deepEqual(s.admit('https://site.test/shop/a', from), { ok: false, reason: 'include' });
  assert.deepEqual(s.admit('https://site.test/blog/draft-1', from), { ok: false, reason: 'exclude' });
  assert.deepEqual(s.admit('https://site.test/blog/b', { depth: 1, external: false }), { ok: false, reason: 'depth' });
  const full = createScope('https://site.test/', { includePaths: ['lang=en'], regexOnFullURL: true });
  assert.equal(full.admit('https://site.test/p?lang=en', from).ok, true);
  assert.equal(full.admit('https://site.test/p?lang=de', from).ok, false);
  assert.deepEqual(s.admit('https://site.test/blog/logo.png', from), { ok: false, reason: 'file-type' });
  assert.deepEqual(s.admit('mailto:a@b.c', from), { ok: false, reason: 'scheme' });
});

test('scope: ignoreQueryParameters canonicalises the fetched URL and the key', () => {
  const s = createScope('https://site.test/', { ignoreQueryParameters: true });
  const r = s.admit('https://site.test/p?session=1#top', { depth: 0, external: false });
  assert.ok(r.ok);
  assert.equal(r.url, 'https://site.test/p');
  assert.equal(r.key, 'site.test/p');
});

test('baseDomain', () => {
  assert.equal(baseDomain('a.b.example.com'), 'example.com');
  assert.equal(baseDomain('www.bbc.co.uk'), 'bbc.co.uk');
  assert.equal(baseDomain('localhost'), 'localhost');
  assert.equal(baseDomain('127.0.0.1'), '127.0.0.1');
});

test('robots: disallow, allow override, agent groups, sitemaps; missing file allows all', () => {
  const body = 'User-agent: *\nDisallow: /private/\nAllow: /private/ok\nSitemap: https://site.test/sm.xml\n\nUser-agent: StrictBot\nDisallow: /\n';
  const r = parseRobots('https://site.test', body);
  assert.equal(r.isAllowed('https://site.test/private/x'), false);
  assert.equal(r.isAllowed('https://site.test/private/ok'), true);
  assert.equal(r.isAllowed('https://site.test/public'), true);
  assert.deepEqual(r.sitemaps, ['https://site.test/sm.xml']);
  assert.equal(parseRobots('https://site.test', body, 'StrictBot').isAllowed('https://site.test/public'), false);
  assert.equal(parseRobots('https://site.test', null).isAllowed('https://site.test/private/x'), true);
});

test('sitemaps: urlset, index, gzip, entities and CDATA', async () => {
  const urlset = '<?xml version="1.0"?><urlset><url><loc>https://s.test/a?x=1&amp;y=2</loc></url><url><loc><![CDATA[https://s.test/b]]></loc></url><url><loc>not a url</loc></url></urlset>';
  assert.deepEqual(await parseSitemap(Buffer.from(urlset)), { urls: ['https://s.test/a?x=1&y=2', 'https://s.test/b'], sitemaps: [] });
  const index = '<sitemapindex><sitemap><loc>https://s.test/sm1.xml.gz</loc></sitemap></sitemapindex>';
  assert.deepEqual(await parseSitemap(gzipSync(index)), { urls: [], sitemaps: ['https://s.test/sm1.xml.gz'] });
});
