import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, test } from 'node:test';
import { closeSitemapThreads, parseSitemap, parseSitemapOnThread } from './index';

after(() => closeSitemapThreads());

const urlset = (locs: string[]) => `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((l) => `<url><loc>${l}</loc></url>`).join('')}</urlset>`;

test('sloppy sitemaps still yield their URLs: bare &, a cut-off file, leading space, upper case, prefixes, unknown entities', async () => {
  assert.deepEqual((await parseSitemap(Buffer.from('<urlset><url><loc>https://s.test/a?x=1&y=2</loc></url><url><loc>https://s.test/b</loc></url></urlset>'))).urls, [
    'https://s.test/a?x=1&y=2',
    'https://s.test/b',
  ]);
  assert.deepEqual((await parseSitemap(Buffer.from('<urlset><url><loc>https://s.test/a</loc></url><url><loc>https://s.test/b</loc>'))).urls, ['https://s.test/a', 'https://s.test/b']);
  assert.deepEqual((await parseSitemap(Buffer.from('\n  \uFEFF<?xml version="1.0"?>\n<urlset><url><loc> https://s.test/a </loc></url></urlset>'))).urls, ['https://s.test/a']);
  assert.deepEqual((await parseSitemap(Buffer.from('<URLSET><URL><LOC>https://s.test/A</LOC></URL></URLSET>'))).urls, ['https://s.test/A']);
  assert.deepEqual((await parseSitemap(Buffer.from('<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>https://s.test/p</sm:loc></sm:url></sm:urlset>'))).urls, ['https://s.test/p']);
  assert.deepEqual((await parseSitemap(Buffer.from('<urlset><url><loc>https://s.test/a&nbsp;</loc></url><url><loc>https://s.test/c</loc></url></urlset>'))).urls.at(-1), 'https://s.test/c');
});

test('only <loc> of <url> / <sitemap> counts: image:loc and markup inside a loc do not', async () => {
  const xml =
    '<urlset xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"><url><loc>https://s.test/page</loc>' +
    '<image:image><image:loc>https://s.test/img.png</image:loc></image:image></url>' +
    '<url><loc>https://s.test/<b>x</b></loc></url><url><loc>https://s.test/last</loc></url></urlset>';
  assert.deepEqual((await parseSitemap(Buffer.from(xml))).urls, ['https://s.test/page', 'https://s.test/last']);
});

test('a bare & split across two slices is still read as one character', async () => {
  // 16 KB slices: move the "&amp;" and the bare "&" across the first boundary, one byte at a time.
  const head = '<urlset><!--';
  const tail = '--><url><loc>https://s.test/a?x=1&amp;y=2&z=3</loc></url></urlset>';
  const amp = head.length + tail.indexOf('&amp;');
  const bare = head.length + tail.indexOf('&z');
  for (const at of [amp, bare]) {
    for (let before = 0; before <= 6; before++) {
      const xml = head + 'x'.repeat(16 * 1024 - before - at) + tail;
      assert.deepEqual((await parseSitemap(Buffer.from(xml))).urls, ['https://s.test/a?x=1&y=2&z=3'], `${before} bytes before the boundary`);
    }
  }
});

test('caps: URLs per file, bytes after decompression, nesting', async () => {
  const many = urlset(Array.from({ length: 120 }, (_, i) => `https://s.test/p/${i}`));
  assert.equal((await parseSitemap(Buffer.from(many), { maxUrls: 100 })).urls.length, 100);
  // A gzip bomb: 256 MiB of spaces in 250 KB; reading stops at maxBytes, long before the end.
  const bomb = gzipSync(Buffer.concat([Buffer.from(urlset(['https://s.test/first']).replace('</urlset>', '')), Buffer.alloc(256 * 1024 * 1024, 32)]), { level: 1 });
  const t = performance.now();
  assert.deepEqual((await parseSitemap(bomb, { maxBytes: 2 * 1024 * 1024 })).urls, ['https://s.test/first']);
  assert.ok(performance.now() - t < 4_000, `decompression stops at the cap (${(performance.now() - t).toFixed(0)} ms)`);
  const deep = '<a>'.repeat(100_000) + '<url><loc>https://s.test/deep</loc></url>';
  assert.deepEqual((await parseSitemap(Buffer.from(deep))).urls, [], 'nesting far deeper than a sitemap ends the read');
});

test('hostile sitemaps parse in linear time (the regex scan took 5.5 s for 233 bytes)', async () => {
  const cases = {
    'spaces in <loc>': ('<urlset><url><loc>' + ' '.repeat(200) + '</url>').repeat(3) + '</urlset>',
    'CDATA openers': '<urlset><url><loc>' + ' '.repeat(40) + '<![CDATA['.repeat(20_000),
    'comment openers': '<urlset>' + '<!--'.repeat(100_000),
    'undefined entities': '<urlset><url><loc>' + '&x;'.repeat(100_000),
  };
  for (const [name, xml] of Object.entries(cases)) {
    const t = performance.now();
    await parseSitemap(Buffer.from(xml));
    const ms = performance.now() - t;
    assert.ok(ms < 4_000, `${name}: ${ms.toFixed(0)} ms`);
  }
});

test('parsing stops at its time budget and keeps what it found', async () => {
  const xml = urlset(['https://s.test/early']).replace('</urlset>', '') + '<url><loc>' + '&x;'.repeat(3_000_000);
  const t = performance.now();
  assert.deepEqual((await parseSitemap(Buffer.from(xml), { maxMs: 200 })).urls, ['https://s.test/early']);
  assert.ok(performance.now() - t < 2_000);
});

test('on a thread: same entries; the event loop stays free while a hostile file is read', async () => {
  const index = '<sitemapindex><sitemap><loc>https://s.test/sm1.xml.gz</loc></sitemap></sitemapindex>';
  assert.deepEqual(await parseSitemapOnThread(gzipSync(index)), { urls: [], sitemaps: ['https://s.test/sm1.xml.gz'] });
  const hostile = Buffer.from('<urlset><url><loc>' + '&'.repeat(4 * 1024 * 1024));
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const t = performance.now();
  await parseSitemapOnThread(hostile, { maxMs: 1_500 });
  clearInterval(timer);
  const ms = performance.now() - t;
  assert.ok(ticks >= ms / 10 / 4, `${ticks} ticks of 10 ms in ${ms.toFixed(0)} ms: the main thread was blocked`);
});
