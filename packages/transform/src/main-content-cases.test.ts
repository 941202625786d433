import { test } from 'node:test';
import assert from 'node:assert/strict';
import { transformHtml } from './transform';

/**
 * The boilerplate cases issue 20 fixed, each on a page shaped like the real ones in
 * ../shared/bench/main-content: the story is long prose, the chrome around it is not.
 */
const PAGE = 'https://news.example.com/2024/story';
const md = (html: string) =>
  transformHtml(html, PAGE, { onlyMainContent: true, removeBase64Images: true, want: { markdown: true, html: false, links: false, images: false } }).markdown ?? '';

const sentence = (topic: string, i: number) =>
  `The council said on Tuesday that the ${topic} plan, which was first proposed in ${2000 + i}, would cost more than expected, and that work would start in spring.`;
const story = (n = 6, topic = 'harbour') => Array.from({ length: n }, (_, i) => `<p>${sentence(topic, i)} ${sentence(topic, i + 20)}</p>`).join('\n');
const STORY_TEXT = 'The council said on Tuesday that the harbour plan';

test('an <aside> or <nav> of teaser <article>s goes, though it holds articles', () => {
  // Teasers long enough that the story <article> does not dominate them: before issue 20 the
  // whole <main> was kept, and an <aside> holding an <article> was protected.
  const teasers = Array.from({ length: 2 }, (_, i) => `<article><h3><a href="/t${i}">Teaser headline number ${i}</a></h3><p>${sentence('tunnel', i)} ${sentence('tunnel', i + 1)}</p></article>`).join('');
  const out = md(`<body><main><article><h1>Harbour plan</h1>${story(2)}</article>
    <aside class="rail">${teasers}</aside><nav class="more">${teasers}</nav></main></body>`);
  assert.ok(out.includes(STORY_TEXT));
  assert.ok(!out.includes('Teaser headline'), out);
  assert.ok(!out.includes('tunnel plan'), out);
});

test('a comment section made of <article>s is not part of the story', () => {
  const comments = Array.from({ length: 3 }, (_, i) =>
    `<article class="comment-body"><p>Reader ${i} wrote: I have lived by the harbour for years, and honestly, this plan, like the last one, will never happen. My neighbours, who also fish there, agree with me, and we will say so at the meeting next week.</p><p>Reply</p></article>`).join('');
  const out = md(`<body><div class="page"><article class="post"><h1>Harbour plan</h1>${story(2)}</article>
    <section class="discussion"><h2>3 thoughts</h2>${comments}</section></div></body>`);
  assert.ok(out.includes(STORY_TEXT));
  assert.ok(!out.includes('Reader 0 wrote'), out);
});

test('a related-articles list next to the story goes; a list in the story stays', () => {
  // Four links: too few for a link block, and no class name gives it away.
  const related = Array.from({ length: 4 }, (_, i) => `<li><a href="/r${i}">Related headline about the harbour number ${i}</a></li>`).join('');
  const out = md(`<body><div class="wrap"><div class="story-body">${story()}<ul><li>The first point of the plan, which matters most, is cost.</li>
    <li>The second point, which matters less, is timing.</li><li>The third point is the route.</li></ul></div>
    <div class="more-box"><h3>More on this</h3><ul>${related}</ul></div></div></body>`);
  assert.ok(out.includes(STORY_TEXT));
  assert.ok(out.includes('- The first point of the plan'));
  assert.ok(!out.includes('Related headline'), out);
});

test('a cookie notice the class names do not give away goes: hidden, or outside the story', () => {
  const out = md(`<body><div class="cc-window" style="display: none">We use cookies to improve your experience. <a href="/privacy">Learn more</a></div>
    <div id="wrap"><div class="txt">${story()}</div></div>
    <div class="notice-bar" hidden>This site uses cookies. By continuing you accept them.</div>
    <div class="cc-floating"><span>Cookies help us deliver our services, and by using them you agree to that, okay?</span><a href="/ok">OK</a></div></body>`);
  assert.ok(out.includes(STORY_TEXT));
  assert.ok(!/cookies/i.test(out), out);
});

test('a table of contents of in-page links goes; the headings it points to stay', () => {
  const toc = ['Background', 'Costs', 'Timeline'].map((h, i) => `<li><a href="#s${i}">${h}</a></li>`).join('');
  const out = md(`<body><article><h1>Harbour plan</h1><div class="contents-box"><p>Contents</p><ol>${toc}</ol></div>
    <h2 id="s0">Background</h2>${story(2)}<h2 id="s1">Costs</h2>${story(2, 'budget')}<h2 id="s2">Timeline</h2>${story(2, 'schedule')}</article></body>`);
  assert.ok(out.includes('## Background') && out.includes('## Costs') && out.includes('## Timeline'));
  assert.ok(!out.includes('(https://news.example.com/2024/story#s0)'), out);
});

test('among several <article>s of similar size, the one with the story wins by its prose', () => {
  const card = (i: number) => `<article class="card"><h2><a href="/c${i}">Card headline ${i}</a></h2><p>${sentence('ferry', i)} ${sentence('ferry', i + 1)}</p><a href="/c${i}">Read more</a></article>`;
  const out = md(`<body><div class="grid">${card(1)}${card(2)}</div><article class="full"><h1>Harbour plan</h1>${story(2)}</article>
    <div class="grid">${card(3)}${card(4)}</div></body>`);
  assert.ok(out.includes(STORY_TEXT));
  assert.ok(!out.includes('Card headline'), out);
  assert.ok(!out.includes('ferry plan'), out);
});

test('a page with no semantic tags: the box with the prose wins over sidebars and footers', () => {
  const side = Array.from({ length: 6 }, (_, i) => `<div class="item"><a href="/s${i}">Sidebar story ${i}</a> <span>Short summary ${i}, one line.</span></div>`).join('');
  const out = md(`<body><div id="top"><a href="/">Home</a> | <a href="/news">News</a></div>
    <table><tr><td class="left">${side}</td><td class="center"><h1>Harbour plan</h1>${story()}</td></tr></table>
    <div id="bottom"><p>Copyright 2024 The Example Gazette, all rights reserved. Contact us, advertise, jobs.</p></div></body>`);
  assert.ok(out.includes('# Harbour plan'));
  assert.ok(out.includes(STORY_TEXT));
  for (const junk of ['Sidebar story', 'Copyright', 'Home']) assert.ok(!out.includes(junk), `${junk}: ${out}`);
});

test('the title above the story stays; a heading over a dropped list goes with it', () => {
  const related = Array.from({ length: 4 }, (_, i) => `<li><a href="/r${i}">Related headline about the harbour number ${i}</a></li>`).join('');
  const out = md(`<body><div class="wrap"><h1>Harbour plan approved</h1><div class="dl">Nov 19, 2024</div><div class="story-body">${story()}</div>
    <h3>Related</h3><ul>${related}</ul></div></body>`);
  assert.ok(out.startsWith('# Harbour plan approved'), out);
  assert.ok(out.includes(STORY_TEXT));
  assert.ok(!out.includes('Related'), out);
});

test('a small data table in the story stays, however short its cells', () => {
  const out = md(`<body><main><h1>Harbour plan</h1>${story(2)}<table><thead><tr><th>Name</th><th>Qty</th></tr></thead><tbody><tr><td>Pier</td><td>3</td></tr></tbody></table></main></body>`);
  assert.ok(out.includes('| Name | Qty |'), out);
});

test('a one-line code sample in its own box stays', () => {
  const out = md(`<body><main><h1>Install</h1>${story(2)}<div class="code-box"><pre><code>npm i harbour</code></pre></div>${story(1, 'budget')}</main></body>`);
  assert.ok(out.includes('```\nnpm i harbour\n```'), out);
});
