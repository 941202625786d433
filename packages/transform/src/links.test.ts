import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadHtml } from './clean';
import { extractImages, extractLinks } from './links';
import { largestSrcsetCandidate, parseSrcset } from './urls';

const PAGE = 'https://example.com/a/b.html';

test('links: absolute, deduplicated, document order, skipped schemes and fragment-only links', () => {
  const html = `<nav><a href="/home">Home</a></nav><p>
    <a href="c.html">c</a><a href=" c.html ">dup after trim</a><a href="https://example.com/a/c.html">dup absolute</a>
    <a href="#section">frag</a><a href="#">empty frag</a><a href="javascript:void(0)">js</a><a href="JavaScript:x()">js2</a>
    <a href="mailto:x@y.z">mail</a><a href="tel:+123">tel</a><a href="ftp://files.example.com/f">ftp</a>
    <a href="//cdn.example.org/x">protocol-relative</a><a href="d.html#part">with fragment</a><a>no href</a><a href="">empty</a></p>
    <footer><a href="/home">Home again</a></footer>`;
  assert.deepEqual(extractLinks(html, PAGE), [
    'https://example.com/home',
    'https://example.com/a/c.html',
    'https://cdn.example.org/x',
    'https://example.com/a/d.html#part',
  ]);
});

test('links resolve against <base href>', () => {
  const html = '<head><base href="https://other.example.net/root/"></head><body><a href="x">x</a><a href="/y">y</a></body>';
  assert.deepEqual(extractLinks(loadHtml(html), PAGE), ['https://other.example.net/root/x', 'https://other.example.net/y']);
});

test('images: absolute, largest srcset candidate, data: URIs skipped, deduplicated', () => {
  const html = `<img src="1.png"><img src="/abs/2.png"><img src="1.png">
    <img src="small.jpg" srcset="small.jpg 300w, big.jpg 1200w"><img srcset="x1.jpg, x2.jpg 2x">
    <img src="data:image/png;base64,AAAA"><img src=""><img alt="no src">`;
  assert.deepEqual(extractImages(html, PAGE), [
    'https://example.com/a/1.png',
    'https://example.com/abs/2.png',
    'https://example.com/a/big.jpg',
    'https://example.com/a/x2.jpg',
  ]);
});

test('srcset parsing', () => {
  assert.deepEqual(parseSrcset(' a.jpg 1x,b.jpg 2x , c.jpg 640w 480h'), [
    { url: 'a.jpg', density: 1 },
    { url: 'b.jpg', density: 2 },
    { url: 'c.jpg', density: 1, width: 640 },
  ]);
  // As in the HTML algorithm: a comma only separates after whitespace or at the URL's end.
  assert.deepEqual(parseSrcset('a.jpg, b.jpg 1.5x').map((c) => c.url), ['a.jpg', 'b.jpg']);
  assert.deepEqual(parseSrcset('a.jpg,, b.jpg').map((c) => c.url), ['a.jpg', 'b.jpg']);
  assert.equal(largestSrcsetCandidate('a.jpg 100w, b.jpg 50w'), 'a.jpg');
  assert.equal(largestSrcsetCandidate('a.jpg, b.jpg 2x'), 'b.jpg');
  assert.equal(largestSrcsetCandidate('bad.jpg 2q, ok.jpg'), 'ok.jpg', 'invalid descriptors drop the candidate');
  assert.equal(largestSrcsetCandidate(''), null);
});

test('a NUL in an href is U+FFFD, as a browser parses it, not dropped from the URL', () => {
  assert.deepEqual(extractLinks('<a href="/utf16?\u0000">x</a><a href="/p\u0000q">y</a>', PAGE), [
    'https://example.com/utf16?%EF%BF%BD',
    'https://example.com/p%EF%BF%BDq',
  ]);
});
