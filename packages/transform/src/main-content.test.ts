import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from 'cheerio';
import { cleanHtml, loadHtml } from './clean';
import { textOf } from './dom';
import { isBoilerplateToken, keepMainContent } from './main-content';

const PAGE = 'https://example.com/post';
const main = (html: string) => cleanHtml(html, PAGE, { onlyMainContent: true }).html;
/** Block texts joined by spaces, so that adjacent blocks do not run together. */
const bodyText = (html: string) => {
  const $ = load(html);
  $('p, h1, h2, h3, div, li, header, footer, article, section, main').before(' ').after(' ');
  return $('body').text().replace(/\s+/g, ' ').trim();
};

test('removes header, footer, nav and aside landmarks', () => {
  const out = main(`<body><header>Site header</header><nav>Menu</nav><div class="content"><p>Story text</p></div>
    <aside>Side box</aside><footer>Copyright</footer></body>`);
  assert.equal(bodyText(out), 'Story text');
});

test('removes elements with landmark roles', () => {
  const out = main(`<body><div role="navigation">Nav</div><div role="banner">Banner</div><div><p>Story</p></div>
    <div role="complementary">Compl</div><div role="contentinfo">Info</div></body>`);
  assert.equal(bodyText(out), 'Story');
});

test('removes cookie banners and other boilerplate named by class or id', () => {
  const names = [
    'class="cookie-banner"', 'id="cookieConsent"', 'class="ad"', 'class="ads-slot"', 'id="advert-top"', 'class="social-links"',
    'class="share-buttons"', 'class="popup"', 'class="modal-dialog"', 'class="newsletter-signup"', 'class="subscribe-box"',
    'id="comments"', 'class="comment-list"', 'class="related-posts"', 'class="breadcrumbs"', 'class="sidebar"',
    'class="site-header"', 'class="footer-links"', 'id="main-menu"', 'class="navbar"', 'class="menu"',
  ];
  const html = `<body><div class="content"><p>Story text</p></div>${names.map((n, i) => `<div ${n}>junk${i}</div>`).join('')}</body>`;
  const out = main(html);
  assert.equal(bodyText(out), 'Story text');
});

test('keeps <main> content and prefers the single <main> subtree', () => {
  const out = main(`<body><div class="promo-strip">Outside main</div><main><h1>Title</h1><p>Main text</p></main><div>Trailer</div></body>`);
  assert.equal(bodyText(out), 'Title Main text');
});

test('prefers the single <article>, keeping its own <header> and <footer>', () => {
  const out = main(`<body><header class="site-header">Logo</header><div class="wrap"><article>
    <header class="article-header"><h1>Headline</h1><p class="byline">By Ann</p></header>
    <p>Paragraph one.</p><footer class="entry-footer">Posted in News</footer></article><div>Other</div></div></body>`);
  assert.equal(bodyText(out), 'Headline By Ann Paragraph one. Posted in News');
});

test('an article <header> survives even when no subtree is preferred', () => {
  const out = main(`<body><header>Site</header><article><header>Art 1 head</header><p>One</p></article>
    <article><header>Art 2 head</header><p>Two</p></article><footer>Foot</footer></body>`);
  assert.equal(bodyText(out), 'Art 1 head One Art 2 head Two');
});

test('never removes an element that contains main/article/[role=main], whatever its name', () => {
  const out = main(`<body><div class="sidebar"><article><p>First story</p></article></div>
    <div class="footer-wrap"><article><p>Second story</p></article></div><div class="menu">Menu</div></body>`);
  assert.equal(bodyText(out), 'First story Second story');
  const out2 = main(`<body><div id="header"><div role="main"><p>Role main</p></div></div><div id="footer">F</div></body>`);
  assert.equal(bodyText(out2), 'Role main');
});

test('never removes <body>/<html>, even with boilerplate-looking classes', () => {
  const out = main(`<html class="nav-open cookie-consent"><body class="sidebar footer has-comments"><div><p>Text</p></div></body></html>`);
  assert.equal(bodyText(out), 'Text');
});

test('class matching is by word: innocent names are kept', () => {
  for (const name of ['shadow', 'article-header', 'entry-footer', 'post-header', 'heading', 'download', 'thread', 'badge',
    'has-sidebar', 'no-comments', 'tag-cookies', 'category-advertising', 'loading', 'address', 'shareholder', 'menuetto']) {
    assert.equal(isBoilerplateToken(name), false, name);
  }
  for (const name of ['ad', 'ads', 'ad-slot', 'adContainer', 'site-header', 'siteFooter', 'main-nav', 'nav', 'cookie-notice',
    'social-share', 'related-articles', 'breadcrumb', 'sidebar-right', 'newsletter', 'comments', 'c-header__nav']) {
    assert.equal(isBoilerplateToken(name), true, name);
  }
  const out = main(`<body><div class="shadow"><p>Shadowed text</p></div><div class="ad">Buy</div></body>`);
  assert.equal(bodyText(out), 'Shadowed text');
});

test('a wrapper named like boilerplate but holding most of a big page is kept', () => {
  const story = '<p>' + 'Long story sentence. '.repeat(80) + '</p>';
  const out = main(`<body><div id="content-sidebar-container" class="sidebar-layout">${story}</div><div class="sidebar">Side</div></body>`);
  assert.ok(bodyText(out).startsWith('Long story sentence.'));
  assert.ok(!bodyText(out).includes('Side'));
});

test('blocks made of many links are dropped, prose with a few links is kept', () => {
  const links = Array.from({ length: 6 }, (_, i) => `<li><a href="/p${i}">Popular story ${i}</a></li>`).join('');
  const out = main(`<body><div class="content"><p>Read <a href="/a">this</a> and <a href="/b">that</a> today.</p>
    <ul>${links}</ul></div></body>`);
  assert.equal(bodyText(out), 'Read this and that today.');
});

test('among several articles, a dominant one is the content (teaser cards are dropped)', () => {
  const story = '<p>' + 'Real story text. '.repeat(60) + '</p>';
  const teasers = Array.from({ length: 5 }, (_, i) => `<article><h3>Teaser ${i}</h3><p>Short blurb ${i}.</p></article>`).join('');
  const out = main(`<body><article><h1>Story</h1>${story}</article><section>${teasers}</section></body>`);
  assert.ok(bodyText(out).startsWith('Story Real story text.'));
  assert.ok(!bodyText(out).includes('Teaser'));
});

test('keepMainContent works on a document without main or article', () => {
  const page = loadHtml('<body><nav>n</nav><p>x</p></body>');
  keepMainContent(page);
  assert.equal(textOf(page.body), 'x');
});

test('syntax-highlighted code keeps its comment spans', () => {
  const out = main(`<body><div class="content"><pre><code><span class="token comment">// explain</span>
run();<span class="hljs-comment"># note</span></code></pre></div></body>`);
  assert.ok(bodyText(out).includes('// explain'));
  assert.ok(bodyText(out).includes('# note'));
});

test('a site-level "main-header" is chrome', () => {
  const out = main(`<body><div id="main-header">Logo</div><div class="content"><p>Story</p></div></body>`);
  assert.equal(bodyText(out), 'Story');
});
