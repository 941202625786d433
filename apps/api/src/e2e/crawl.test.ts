import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { call, namespaceFor, startCrawlSite, startStack, type CrawlSite, type Stack } from '@wds/test-utils';

// Crawl through the JS SDK on the multi-host fixture site: every option, robots, sitemaps.
let stack: Stack;
let site: CrawlSite;
let fc: Firecrawl;

before(async () => {
  site = await startCrawlSite({ genPages: 40 });
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_HOST_OVERRIDES: site.hostOverrides } });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

const paths = (docs: { metadata?: { sourceURL?: string } }[]) =>
  docs.map((d) => new URL(d.metadata!.sourceURL!)).map((u) => `${u.hostname === 'site.test' ? '' : u.hostname}${u.pathname}${u.search}`).sort();

describe('crawl', () => {
  test('default crawl: links, sitemap, robots, one document per URL', async () => {
    const job = await fc.crawl(site.url('/'), { limit: 100, maxDiscoveryDepth: 3, pollInterval: 1 } as never);
    assert.equal(job.status, 'completed');
    const got = paths(job.data);
    for (const p of ['/', '/docs', '/docs/a', '/docs/b', '/blog', '/blog/post-1', '/orphan']) {
      assert.ok(got.some((g) => g === p || g === `${p}/`), `missing ${p} in ${got.join(' ')}`);
    }
    assert.ok(!got.includes('/private/secret'), 'robots.txt disallows /private/');
    assert.equal(site.hits('/private/secret'), 0);
    assert.ok(!got.some((g) => g.startsWith('other.test') || g.startsWith('sub.site.test')), 'no external or subdomain pages by default');
    assert.equal(new Set(got).size, got.length, 'exactly one document per URL');
    assert.equal(job.completed, job.data.length);
    assert.ok(job.total >= job.completed);
    assert.ok((job.creditsUsed ?? 0) >= job.data.length);
    for (const d of job.data) assert.ok(d.markdown !== undefined && d.metadata?.statusCode, 'documents are scrape documents');
    const errors = await fc.getCrawlErrors((job as { id: string }).id);
    assert.deepEqual(errors.robotsBlocked, [site.url('/private/secret')]);
    // /p/1 and /p/1?ref=a are one page: whichever was fetched first is stored, the other is its duplicate.
    const p1 = got.filter((g) => g === '/p/1' || g === '/p/1?ref=a');
    assert.equal(p1.length, 1, `one of /p/1 and /p/1?ref=a (${p1.join(' ')})`);
    const dups: { url: string; duplicateOf: string }[] = (await call(stack, 'GET', `/v2/crawl/${(job as { id: string }).id}/errors`)).json.duplicates ?? [];
    assert.ok(dups.some((d) => d.duplicateOf === site.url(p1[0]!) && [site.url('/p/1'), site.url('/p/1?ref=a')].includes(d.url)), JSON.stringify(dups));
    assert.ok(errors.errors.some((e) => e.url === site.url('/bin')), 'an unconvertible page is reported as an error');
    assert.equal(site.hits('/robots.txt'), 1, 'robots.txt fetched once per host');
  });

  test('includePaths and excludePaths (on the path; the start page only seeds discovery)', async () => {
    const inc = await fc.crawl(site.url('/'), { includePaths: ['^/blog'], sitemap: 'skip', limit: 50, pollInterval: 1 } as never);
    const got = paths(inc.data);
    assert.ok(got.length >= 4, got.join(' '));
    assert.ok(got.every((g) => g.startsWith('/blog')), got.join(' '));
    const exc = await fc.crawl(site.url('/'), { excludePaths: ['^/docs', '^/gen'], sitemap: 'skip', limit: 50, pollInterval: 1 } as never);
    assert.ok(paths(exc.data).every((g) => !g.startsWith('/docs') && !g.startsWith('/gen')));
    assert.ok(paths(exc.data).includes('/'));
  });

  test('regexOnFullURL matches includePaths against the whole URL', async () => {
    const r = await fc.crawl(site.url('/'), { includePaths: ['ref=a$'], regexOnFullURL: true, sitemap: 'skip', limit: 50, pollInterval: 1 } as never);
    assert.deepEqual(paths(r.data), ['/p/1?ref=a']);
  });

  test('maxDiscoveryDepth and sitemap modes', async () => {
    const d1 = await fc.crawl(site.url('/'), { maxDiscoveryDepth: 1, sitemap: 'skip', limit: 100, pollInterval: 1 } as never);
    const got = paths(d1.data);
    assert.ok(got.includes('/docs/') || got.includes('/docs'));
    assert.ok(!got.includes('/docs/a'), 'depth 2 pages are not crawled');
    assert.ok(!got.includes('/orphan'), 'sitemap skipped');
    const only = await fc.crawl(site.url('/'), { sitemap: 'only', limit: 100, pollInterval: 1 } as never);
    assert.deepEqual(paths(only.data), ['/', '/blog/post-1', '/docs/a', '/orphan']);
  });

  test('ignoreQueryParameters crawls a path once', async () => {
    const r = await fc.crawl(site.url('/'), { ignoreQueryParameters: true, maxDiscoveryDepth: 1, sitemap: 'skip', limit: 100, pollInterval: 1 } as never);
    assert.equal(paths(r.data).filter((p) => p.startsWith('/p/1')).length, 1);
  });

  test('allowExternalLinks follows external pages one hop (not their links, not bare homepages)', async () => {
    const r = await fc.crawl(site.url('/'), { allowExternalLinks: true, maxDiscoveryDepth: 1, sitemap: 'skip', limit: 100, pollInterval: 1 } as never);
    const got = paths(r.data);
    assert.ok(got.includes('other.test/ext-page'), got.join(' '));
    assert.ok(!got.includes('other.test/ext-deeper'));
    assert.ok(!got.includes('other.test/'));
  });

  test('allowSubdomains follows subdomains', async () => {
    const r = await fc.crawl(site.url('/'), { allowSubdomains: true, maxDiscoveryDepth: 1, sitemap: 'skip', limit: 100, pollInterval: 1 } as never);
    assert.ok(paths(r.data).includes('sub.site.test/sub-page'));
  });

  test('crawlEntireDomain: child paths only by default', async () => {
    const child = await fc.crawl(site.url('/docs/'), { sitemap: 'skip', limit: 100, pollInterval: 1 } as never);
    assert.deepEqual(paths(child.data), ['/docs/', '/docs/a', '/docs/a/deep', '/docs/b']);
    const whole = await fc.crawl(site.url('/docs/'), { crawlEntireDomain: true, sitemap: 'skip', maxDiscoveryDepth: 3, limit: 100, pollInterval: 1 } as never);
    assert.ok(paths(whole.data).includes('/'), 'parents are followed with crawlEntireDomain');
  });

  test('limit caps pages', async () => {
    const r = await fc.crawl(site.url('/'), { limit: 5, pollInterval: 1 } as never);
    const seen = `${r.data.map((d) => d.metadata?.sourceURL).join(' ')} (total ${r.total}, completed ${r.completed})`;
    assert.equal(r.data.length, 5, seen);
    assert.equal(r.total, 5, seen);
  });

  test('ignoreRobotsTxt and robotsUserAgent', async () => {
    // The JS SDK's crawl() does not forward ignoreRobotsTxt, so this one starts over raw HTTP.
    const started = await call(stack, 'POST', '/v2/crawl', { url: site.url('/'), ignoreRobotsTxt: true, maxDiscoveryDepth: 1, sitemap: 'skip', limit: 100 });
    assert.equal(started.status, 200, started.text);
    let all = await fc.getCrawlStatus(started.json.id);
    while (all.status === 'scraping') {
      await new Promise((r) => setTimeout(r, 300));
      all = await fc.getCrawlStatus(started.json.id);
    }
    assert.ok(paths(all.data).includes('/private/secret'));
    const strict = await fc.crawl(site.url('/'), { robotsUserAgent: 'StrictBot', maxDiscoveryDepth: 2, sitemap: 'skip', limit: 100, pollInterval: 1 } as never);
    assert.ok(!paths(strict.data).some((p) => p.startsWith('/blog')), 'StrictBot may not crawl /blog/');
  });

  test('scrapeOptions apply to every page', async () => {
    const r = await fc.crawl(site.url('/docs/'), { sitemap: 'skip', limit: 10, scrapeOptions: { formats: ['html', 'links'] }, pollInterval: 1 } as never);
    for (const d of r.data) {
      assert.equal(d.markdown, undefined);
      assert.ok(typeof d.html === 'string' && Array.isArray(d.links));
    }
  });

  test('crawled pages are cached with what they were converted to: a later crawl and a scrape are served without a fetch', async () => {
    // A location no other test uses: its own cache entries (the cache key includes it).
    const o = { scrapeOptions: { location: { country: 'DE' } }, sitemap: 'skip', pollInterval: 1 };
    const path = (d: { metadata?: { sourceURL?: string } }) => new URL(d.metadata!.sourceURL!).pathname;
    const started = Date.now();
    const first = await fc.crawl(site.url('/docs/'), { ...o, limit: 2 } as never);
    assert.equal(first.data.length, 2);
    assert.ok(first.data.every((d) => d.metadata!.cacheState === 'miss'));
    const cached = new Set(first.data.map(path));
    const hitsBefore = new Map(['/docs/', '/docs/a', '/docs/b', '/docs/a/deep'].map((p) => [p, site.hits(p)]));
    // The second crawl's claims hold cached and uncached URLs: the cached are hits, the others fetched.
    const second = await fc.crawl(site.url('/docs/'), { ...o, limit: 10 } as never);
    assert.deepEqual(second.data.map(path).sort(), ['/docs/', '/docs/a', '/docs/a/deep', '/docs/b']);
    for (const d of second.data) {
      const p = path(d);
      assert.equal(d.metadata!.cacheState, cached.has(p) ? 'hit' : 'miss', p);
      assert.equal(site.hits(p), hitsBefore.get(p)! + (cached.has(p) ? 0 : 1), `fetches of ${p}`);
      if (cached.has(p)) assert.equal(d.markdown, first.data.find((f) => path(f) === p)!.markdown);
    }
    const hit = await fc.scrape(site.url('/docs/a'), { formats: ['markdown'], location: { country: 'DE' } });
    assert.equal(hit.metadata!.cacheState, 'hit');
    assert.ok(Date.parse(hit.metadata!.cachedAt!) >= started - 1000, `a crawl's entry (cached at ${hit.metadata!.cachedAt})`);
    assert.equal(site.hits('/docs/a'), hitsBefore.get('/docs/a')! + (cached.has('/docs/a') ? 0 : 1), 'no fetch for the scrape');
  });

  test('active crawls, another team\'s crawl and bad ids', async () => {
    const started = await fc.startCrawl(site.url('/'), { limit: 30, delay: 0.3 } as never);
    const active = await fc.getActiveCrawls();
    assert.ok(active.crawls.some((c) => c.id === started.id && c.url === site.url('/')));
    const other = await stack.newTeam();
    assert.equal((await call({ url: stack.url, apiKey: other.apiKey }, 'GET', `/v2/crawl/${started.id}`)).status, 404);
    assert.equal((await call(stack, 'GET', '/v2/crawl/nope')).status, 400);
    assert.equal((await call(stack, 'GET', '/v2/crawl/00000000-0000-4000-8000-000000000000')).status, 404);
    assert.equal(await fc.cancelCrawl(started.id), true);
  });
});
