import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from 'cheerio';
import { WdsError } from '@wds/errors';
import { cleanHtml, validateSelectors } from './clean';

const PAGE = 'https://example.com/blog/post.html';
const raw = { onlyMainContent: false };

test('removes script, style, noscript, meta, head, link, template and comments', () => {
  const html = `<!doctype html><html><head><title>T</title><meta name="x" content="y"><link rel="stylesheet" href="a.css">
    <style>.a{}</style><script>var a=1</script></head>
    <body><!-- secret comment --><p>Keep me</p><script>alert(1)</script><noscript>enable js</noscript>
    <style>p{}</style><template><p>tpl</p></template><link rel="preload" href="x"><meta itemprop="name" content="n"></body></html>`;
  const { html: out } = cleanHtml(html, PAGE, raw);
  for (const tag of ['<script', '<style', '<noscript', '<meta', '<head', '<link', '<template', '<title', '<!--', '<!doctype']) {
    assert.ok(!out.toLowerCase().includes(tag), `${tag} should be gone: ${out}`);
  }
  for (const text of ['alert', 'enable js', 'secret comment', 'tpl']) assert.ok(!out.includes(text), text);
  assert.ok(out.includes('<p>Keep me</p>'));
});

test('relative href/src/poster/action become absolute against the page URL', () => {
  const html = `<body><a href="../about">a</a><a href="/root">r</a><a href="?q=1">q</a><a href="#top">t</a>
    <img src="img/x.png"><video poster="p.jpg"><source src="v.mp4"></video><form action="search"></form>
    <a href="https://other.org/x">abs</a><a href="mailto:a@b.c">m</a></body>`;
  const $ = load(cleanHtml(html, PAGE, raw).html);
  assert.deepEqual($('a').map((_, a) => $(a).attr('href')).get(), [
    'https://example.com/about',
    'https://example.com/root',
    'https://example.com/blog/post.html?q=1',
    'https://example.com/blog/post.html#top',
    'https://other.org/x',
    'mailto:a@b.c',
  ]);
  assert.equal($('img').attr('src'), 'https://example.com/blog/img/x.png');
  assert.equal($('video').attr('poster'), 'https://example.com/blog/p.jpg');
  assert.equal($('source').attr('src'), 'https://example.com/blog/v.mp4');
  assert.equal($('form').attr('action'), 'https://example.com/blog/search');
});

test('<base href> of the original document is honoured (itself relative to the page)', () => {
  const html = `<html><head><base href="/static/v2/"></head><body><a href="doc">d</a><img src="i.png"></body></html>`;
  const $ = load(cleanHtml(html, PAGE, raw).html);
  assert.equal($('a').attr('href'), 'https://example.com/static/v2/doc');
  assert.equal($('img').attr('src'), 'https://example.com/static/v2/i.png');
  assert.equal($('base').length, 0);
});

test('srcset resolves to the largest candidate by w descriptor', () => {
  const html = `<img src="small.jpg" srcset="a-320.jpg 320w, a-1280.jpg 1280w, a-640.jpg 640w" sizes="50vw" alt="a">`;
  const $ = load(cleanHtml(html, PAGE, raw).html);
  const img = $('img');
  assert.equal(img.attr('src'), 'https://example.com/blog/a-1280.jpg');
  assert.equal(img.attr('srcset'), undefined);
  assert.equal(img.attr('sizes'), undefined);
  assert.equal(img.attr('alt'), 'a');
});

test('srcset resolves to the largest candidate by x density; a bare URL counts as 1x', () => {
  const $ = load(cleanHtml(`<img srcset="b-1.jpg, b-3.jpg 3x, b-2.jpg 2x">`, PAGE, raw).html);
  assert.equal($('img').attr('src'), 'https://example.com/blog/b-3.jpg');
  const $2 = load(cleanHtml(`<img src="x.jpg" srcset="only.jpg, half.jpg 0.5x">`, PAGE, raw).html);
  assert.equal($2('img').attr('src'), 'https://example.com/blog/only.jpg');
});

test('srcset URLs with commas (CDN transforms) are not split', () => {
  const $ = load(cleanHtml(`<img srcset="https://cdn.x/w_100,h_50/a.jpg 100w, https://cdn.x/w_900,h_450/a.jpg 900w">`, PAGE, raw).html);
  assert.equal($('img').attr('src'), 'https://cdn.x/w_900,h_450/a.jpg');
});

test('<picture> sources get their largest candidate as src; an img without src falls back to the first source', () => {
  const html = `<picture><source type="image/webp" srcset="p.webp 1x, p@2x.webp 2x"><img src="p.jpg" srcset="p-400.jpg 400w, p-800.jpg 800w"></picture>
    <picture><source srcset="q-200.jpg 200w, q-600.jpg 600w"><img alt="q"></picture>`;
  const $ = load(cleanHtml(html, PAGE, raw).html);
  const sources = $('source');
  assert.equal(sources.eq(0).attr('src'), 'https://example.com/blog/p@2x.webp');
  assert.equal(sources.eq(0).attr('srcset'), undefined);
  assert.equal($('img').eq(0).attr('src'), 'https://example.com/blog/p-800.jpg');
  assert.equal($('img').eq(1).attr('src'), 'https://example.com/blog/q-600.jpg');
});

const TAGS_PAGE = `<body><div id="top">Top</div><article><h1>Title</h1><p class="lead">Lead</p><p>Body</p>
  <div class="ad">Ad</div></article><section class="extra"><p>Extra</p></section><footer>Foot</footer></body>`;

test('includeTags keeps only matching elements (tag name, class and id selectors)', () => {
  const byTag = cleanHtml(TAGS_PAGE, PAGE, { onlyMainContent: false, includeTags: ['article'] }).html;
  assert.ok(byTag.includes('Lead') && byTag.includes('Body'));
  for (const t of ['Top', 'Extra', 'Foot']) assert.ok(!byTag.includes(t), t);

  const byClassAndId = cleanHtml(TAGS_PAGE, PAGE, { onlyMainContent: false, includeTags: ['.extra', '#top'] }).html;
  const $ = load(byClassAndId);
  assert.deepEqual($('body').children().map((_, el) => $(el).text().trim()).get(), ['Top', 'Extra'], 'document order, nothing else');
});

test('includeTags with nested matches keeps each element once', () => {
  const out = cleanHtml(TAGS_PAGE, PAGE, { onlyMainContent: false, includeTags: ['article', 'p'] }).html;
  assert.equal(out.match(/Lead/g)?.length, 1);
  assert.ok(out.includes('Extra'));
});

test('excludeTags removes matching elements and is applied after includeTags', () => {
  const out = cleanHtml(TAGS_PAGE, PAGE, { onlyMainContent: false, excludeTags: ['footer', '.ad', '#top'] }).html;
  for (const t of ['Foot', '>Ad<', 'Top']) assert.ok(!out.includes(t), t);
  assert.ok(out.includes('Extra') && out.includes('Lead'));

  const both = cleanHtml(TAGS_PAGE, PAGE, { onlyMainContent: false, includeTags: ['article'], excludeTags: ['.lead', 'h1'] }).html;
  assert.ok(both.includes('Body'));
  for (const t of ['Lead', 'Title', 'Extra']) assert.ok(!both.includes(t), t);
});

test('includeTags is an explicit choice: onlyMainContent does not strip the chosen nav', () => {
  const html = `<body><nav class="menu"><a href="/a">A</a></nav><main><p>Main</p></main></body>`;
  const out = cleanHtml(html, PAGE, { onlyMainContent: true, includeTags: ['nav'] }).html;
  assert.ok(out.includes('https://example.com/a'));
  assert.ok(!out.includes('Main'));
});

test('empty include/exclude lists change nothing', () => {
  const out = cleanHtml(TAGS_PAGE, PAGE, { onlyMainContent: false, includeTags: [], excludeTags: [' '] }).html;
  for (const t of ['Top', 'Lead', 'Extra', 'Foot']) assert.ok(out.includes(t), t);
});

test('invalid selectors are a BAD_REQUEST', () => {
  assert.throws(() => cleanHtml(TAGS_PAGE, PAGE, { onlyMainContent: false, excludeTags: ['div[['] }), (e: unknown) => e instanceof WdsError && e.kind === 'BAD_REQUEST');
  assert.throws(() => validateSelectors(['###'], 'includeTags'), /includeTags/);
  assert.doesNotThrow(() => validateSelectors(['article', '.a > b', '#x', 'div[data-x="1"]']));
});

test('without onlyMainContent, text and structure are untouched', () => {
  const html = `<body><header><nav><a href="/">Home</a></nav></header><aside>Side</aside><div class="cookie-banner">Cookies</div><p>Text <b>bold</b></p><footer>Foot</footer></body>`;
  const $ = load(cleanHtml(html, PAGE, raw).html);
  assert.equal($('body').text(), 'HomeSideCookiesText boldFoot');
  assert.equal($('header > nav > a').length, 1);
});
