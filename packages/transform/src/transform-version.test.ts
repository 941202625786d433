import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { TRANSFORM_VERSION, transformHtml } from './transform';

// Cache entries keep converted formats under TRANSFORM_VERSION (page_cache.outputs): if the
// output changed without a new version, hits would serve the old engine's output. This test
// records the output of a reference page under each option set; when it fails, raise
// TRANSFORM_VERSION in transform.ts and record the printed hash here with it.
const RECORDED = { version: 2, hash: 'a7c0aa90db183150da935d1e' };

const PAGE = `<!doctype html><html lang="en"><head><title>Reference</title><meta name="description" content="d">
<meta property="og:image" content="/og.png"><base href="/docs/"><link rel="icon" href="/f.ico"></head><body>
<header><nav><a href="/">Home</a><a href="a">A</a></nav></header><div class="cookie-banner">We use cookies <button>OK</button></div>
<article><h1>Title <em>here</em></h1><p>Text with <a href="../rel?x=1#f">a link</a>, <strong>bold</strong>, <code>code</code> and an
<img src="data:image/png;base64,AAAA" alt="inline"> <img srcset="s.png 1x, l.png 2x" alt="pic">.</p>
<h2>List</h2><ul><li>one</li><li>two<ol><li>nested</li></ol></li></ul><pre><code class="language-js">const x = 1;\n</code></pre>
<blockquote>Quoted</blockquote><table><thead><tr><th>h1</th><th>h2</th></tr></thead><tbody><tr><td>a|b</td><td>c</td></tr></tbody></table>
<aside class="related"><h3>Related</h3><a href="/r1">One</a><a href="/r2">Two</a></aside></article>
<section id="comments"><h2>Comments</h2><p>Nice</p></section><footer>Footer <a href="/legal">legal</a></footer></body></html>`;

const OPTION_SETS = [
  { onlyMainContent: true, removeBase64Images: true },
  { onlyMainContent: false, removeBase64Images: false },
  { onlyMainContent: true, removeBase64Images: true, includeTags: ['table', 'h2'] },
  { onlyMainContent: false, removeBase64Images: true, excludeTags: ['nav', '.related'] },
];

test('the transform output of the reference page matches its TRANSFORM_VERSION', () => {
  const h = createHash('sha256');
  for (const o of OPTION_SETS) {
    h.update(JSON.stringify(transformHtml(PAGE, 'https://ref.test/docs/page', { ...o, want: { markdown: true, html: true, links: true, images: true } })));
  }
  const hash = h.digest('hex').slice(0, 24);
  const msg = `transform output hash ${hash} (recorded ${RECORDED.hash} for version ${RECORDED.version}, code says ${TRANSFORM_VERSION})`;
  if (TRANSFORM_VERSION !== RECORDED.version) assert.fail(`${msg}: record { version: ${TRANSFORM_VERSION}, hash: '${hash}' } in this test`);
  assert.equal(hash, RECORDED.hash, `${msg}: the output changed; raise TRANSFORM_VERSION in transform.ts and record the new hash here`);
});
