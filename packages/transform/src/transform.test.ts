import { test } from 'node:test';
import assert from 'node:assert/strict';
import { transformHtml, transformText } from './transform';
import type { TransformOptions } from './types';

const PAGE = 'https://news.example.com/2024/story';
const HTML = `<!doctype html><html lang="en"><head><title>Story</title><meta name="description" content="D">
  <script>track()</script></head><body>
  <header class="site-header"><nav><a href="/">Home</a><a href="/world">World</a></nav></header>
  <main><article><h1>Big news</h1><p>First <a href="/more">more</a> paragraph.</p>
  <img src="/i/photo.jpg" srcset="/i/photo-800.jpg 800w, /i/photo-1600.jpg 1600w" alt="Photo">
  <img src="data:image/png;base64,AAAA" alt="inline"></article></main>
  <aside><img src="/i/ad.png"></aside><footer><a href="/about">About</a></footer></body></html>`;

const all = { markdown: true, html: true, links: true, images: true };
const opts = (o: Partial<TransformOptions> = {}): TransformOptions => ({ onlyMainContent: true, removeBase64Images: true, want: all, ...o });

test('everything from one page', () => {
  const r = transformHtml(HTML, PAGE, opts());
  assert.equal(r.metadata.title, 'Story');
  assert.equal(r.metadata.description, 'D');
  assert.equal(r.metadata.language, 'en');
  assert.equal(
    r.markdown,
    '# Big news\n\nFirst [more](https://news.example.com/more) paragraph.\n\n' +
      '![Photo](https://news.example.com/i/photo-1600.jpg) ![inline](<base64-image-removed>)',
  );
  assert.ok(r.html?.includes('<h1>Big news</h1>'));
  assert.ok(!r.html?.includes('track()') && !r.html?.includes('Home'));
});

test('links and images come from the whole original page, not only the main content', () => {
  const r = transformHtml(HTML, PAGE, opts());
  assert.deepEqual(r.links, [
    'https://news.example.com/',
    'https://news.example.com/world',
    'https://news.example.com/more',
    'https://news.example.com/about',
  ]);
  assert.deepEqual(r.images, ['https://news.example.com/i/photo-1600.jpg', 'https://news.example.com/i/ad.png']);
});

test('onlyMainContent false keeps the page chrome in the markdown', () => {
  const r = transformHtml(HTML, PAGE, opts({ onlyMainContent: false, removeBase64Images: false }));
  assert.ok(r.markdown?.includes('[Home](https://news.example.com/)'));
  assert.ok(r.markdown?.includes('[About](https://news.example.com/about)'));
  assert.ok(r.markdown?.includes('data:image/png;base64,AAAA'));
  assert.ok(!r.markdown?.includes('track()'));
});

test('only the requested outputs are computed; metadata always', () => {
  const none = transformHtml(HTML, PAGE, opts({ want: { markdown: false, html: false, links: false, images: false } }));
  assert.deepEqual(Object.keys(none), ['metadata']);
  const md = transformHtml(HTML, PAGE, opts({ want: { markdown: true, html: false, links: false, images: false } }));
  assert.deepEqual(Object.keys(md).sort(), ['markdown', 'metadata']);
});

test('include/exclude tags reach the cleaner', () => {
  const r = transformHtml(HTML, PAGE, opts({ includeTags: ['footer'], want: { ...all, links: false, images: false } }));
  assert.equal(r.markdown, '[About](https://news.example.com/about)');
  const ex = transformHtml(HTML, PAGE, opts({ excludeTags: ['img'] }));
  assert.equal(ex.markdown, '# Big news\n\nFirst [more](https://news.example.com/more) paragraph.');
});

test('transformText: the text is the markdown, no metadata', () => {
  assert.deepEqual(transformText('plain\ntext'), { markdown: 'plain\ntext', metadata: {} });
});

test('a page nested deeper than any walk can recurse still converts (flattened past MAX_DEPTH, as browsers cap depth)', () => {
  const html = `<html><head><title>Deep</title></head><body>${'<div>'.repeat(20_000)}<p>bottom text</p>${'</div>'.repeat(20_000)}</body></html>`;
  const r = transformHtml(html, PAGE, opts());
  assert.equal(r.markdown, 'bottom text');
  assert.equal(r.metadata.title, 'Deep');
  assert.ok(r.html?.includes('bottom text'));
});
