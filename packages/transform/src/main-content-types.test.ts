import { test } from 'node:test';
import assert from 'node:assert/strict';
import { transformHtml } from './transform';

/**
 * Issue 34: main content on pages that are not articles (products, threads, listings, service
 * pages), and markdown that keeps their structure. Fixtures written for these tests, shaped
 * like such pages: chrome around, content made of many small parts.
 */
const md = (html: string) =>
  transformHtml(html, 'https://shop.example.com/p/1', { onlyMainContent: true, removeBase64Images: true, want: { markdown: true, html: false, links: false, images: false } }).markdown ?? '';

const prose = (topic: string, i = 0) =>
  `The ${topic} is made in our own workshop, which opened in ${1990 + i}, and every piece is checked by hand before it ships, so that it lasts for years.`;
const nav = `<header class="site-header"><nav><a href="/">Home</a> <a href="/shop">Shop</a> <a href="/about">About</a> <a href="/help">Help</a> <a href="/cart">Cart</a></nav></header>`;
const footer = `<footer><p>© 2024 Example Shop. All rights reserved.</p><ul><li><a href="/terms">Terms</a></li><li><a href="/privacy">Privacy</a></li></ul></footer>`;

test('a product page keeps its name, price, description and specification table (a GFM table)', () => {
  const out = md(`<body>${nav}<main><h1>Trail Runner 2</h1><p class="price">$129.00</p><p>${prose('shoe')} ${prose('sole', 1)}</p>
    <h2>Specifications</h2><table><tr><th>Weight</th><td>280 g</td></tr><tr><th>Drop</th><td>8 mm</td></tr><tr><th>Upper</th><td>Recycled mesh</td></tr></table></main>${footer}</body>`);
  assert.ok(out.startsWith('# Trail Runner 2'), out);
  assert.ok(out.includes('$129.00'), out);
  assert.ok(out.includes('## Specifications'), out);
  assert.ok(out.includes('| Weight | 280 g |\n| --- | --- |\n| Drop | 8 mm |\n| Upper | Recycled mesh |'), out);
  assert.ok(!out.includes('Privacy') && !out.includes('Cart'), out);
});

test('code blocks keep their language, lists nest, headings keep their levels inside the content', () => {
  const out = md(`<body>${nav}<main><h1>Install</h1><p>${prose('library')}</p><h2>From source</h2><h3>On Linux</h3>
    <pre><code class="language-python">import harbour\nharbour.run()</code></pre>
    <ul><li>Grip<ul><li>Wet rock</li><li>Mud</li></ul></li><li>Fit</li></ul></main>${footer}</body>`);
  assert.ok(out.includes('# Install\n'), out);
  assert.ok(out.includes('## From source\n\n### On Linux'), out);
  assert.ok(out.includes('```python\nimport harbour\nharbour.run()\n```'), out);
  assert.ok(out.includes('- Grip\n  - Wet rock\n  - Mud\n- Fit'), out);
});

test('a forum thread keeps every post with its author line', () => {
  const post = (u: string, d: number, t: string) =>
    `<article class="post"><div class="post-meta"><a class="author" href="/u/${u}">${u}</a> <time datetime="2024-05-0${d}">May ${d}, 2024</time></div><div class="post-body"><p>${t}</p></div></article>`;
  const out = md(`<body>${nav}<main><h1>Timetable broken?</h1>${post('ann', 1, prose('timetable'))}${post('bob', 2, 'Same here since the update, and nothing else loads.')}${post('cy', 3, `Fixed in 2.1, thanks all. ${prose('fix', 2)}`)}</main>${footer}</body>`);
  for (const [u, d] of [['ann', 1], ['bob', 2], ['cy', 3]] as const) assert.ok(out.includes(`[${u}](https://shop.example.com/u/${u}) May ${d}, 2024`), out);
  assert.ok(out.includes('Same here since the update') && out.includes('Fixed in 2.1'), out);
});

test('a thread whose posts are named "comment" keeps them when they are the page', () => {
  const posts = Array.from({ length: 6 }, (_, i) => `<div class="comment"><b>user${i}</b><p>${prose('ferry', i)} ${prose('timetable', i)}</p></div>`).join('');
  const out = md(`<body>${nav}<div class="topic"><h1>Ferry times</h1><div class="comment-list">${posts}</div><div class="sidebar"><a href="/a">A</a></div></div>${footer}</body>`);
  for (let i = 0; i < 6; i++) assert.ok(out.includes(`user${i}`), out);
  assert.ok(!out.includes('Privacy'), out);
});

test('a listing made of links keeps its items; the menu still goes', () => {
  // Thirty items: the rules that protect a page made of links apply from 1,000 characters of text on.
  const items = Array.from({ length: 30 }, (_, i) => `<li class="card"><a href="/p/${i}">Handmade wallet number ${i}, brown leather</a> <span>$${20 + i}.00</span></li>`).join('');
  const out = md(`<body>${nav}<div class="results"><h1>Wallets</h1><ul class="grid">${items}</ul></div>${footer}</body>`);
  for (let i = 0; i < 30; i++) assert.ok(out.includes(`Handmade wallet number ${i}, brown leather`), out);
  assert.ok(out.includes('$31.00'), out);
  assert.ok(!out.includes('Privacy'), out);
});

test('a service page of many short sections keeps them all, not only the densest', () => {
  const section = (i: number) => `<section class="feature"><h2>Feature ${i}</h2><p>${prose('service', i)}</p></section>`;
  const long = `<section class="feature"><h2>Feature main</h2><p>${prose('service', 9)} ${prose('support', 9)} ${prose('team', 9)}</p></section>`;
  const out = md(`<body>${nav}<div class="page"><h1>Our service</h1>${[0, 1, 2].map(section).join('')}${long}${[3, 4, 5].map(section).join('')}</div>${footer}</body>`);
  for (const i of [0, 1, 2, 3, 4, 5]) assert.ok(out.includes(`## Feature ${i}`), out);
});

test('a page whose text is only in <noscript> (a copy beside a script shell) keeps that text', () => {
  const posts = Array.from({ length: 3 }, (_, i) => `<div class="post"><p>${prose('ferry', i)}</p></div>`).join('');
  const out = md(`<body><div id="app"></div><noscript><div class="wrap"><h1>Ferry times</h1>${posts}</div></noscript><script>boot()</script></body>`);
  assert.ok(out.includes('# Ferry times'), out);
  assert.ok(out.includes(prose('ferry', 2)), out);
});

test('a tracking-pixel or "enable JavaScript" noscript next to real content still goes', () => {
  const out = md(`<body><main><h1>Title</h1><p>${prose('ferry')} ${prose('harbour')}</p></main><noscript>Please enable JavaScript to view the comments.</noscript></body>`);
  assert.ok(!out.includes('enable JavaScript'), out);
});

test('content hidden until a script fades it in is kept when it is most of the page', () => {
  const out = md(`<body>${nav}<main><div class="reveal" style="display:none"><h1>Coffee</h1>${Array.from({ length: 8 }, (_, i) => `<p>${prose('coffee', i)}</p>`).join('')}</div></main>${footer}</body>`);
  assert.ok(out.includes('# Coffee') && out.includes(prose('coffee', 7)), out);
});
