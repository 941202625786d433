import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BASE64_IMAGE_PLACEHOLDER, htmlToMarkdown, tidyMarkdown } from './markdown';

const md = (html: string, removeBase64Images = false) => htmlToMarkdown(html, { removeBase64Images });

test('ATX headings', () => {
  assert.equal(md('<h1>One</h1><h2>Two</h2><h6>Six</h6>'), '# One\n\n## Two\n\n###### Six');
  assert.equal(md('<h2>Split<br>heading</h2>'), '## Split heading');
});

test('bullet lists use "-", ordered lists number from start', () => {
  assert.equal(md('<ul><li>a</li><li>b<ul><li>c</li></ul></li></ul>'), '- a\n- b\n  - c');
  assert.equal(md('<ol start="3"><li>x</li><li>y</li></ol>'), '3. x\n4. y');
});

test('GFM table with a header row', () => {
  const html = '<table><thead><tr><th>Name</th><th align="right">Qty</th></tr></thead><tbody><tr><td>Apple</td><td>3</td></tr><tr><td>Pear | green</td><td>5</td></tr></tbody></table>';
  assert.equal(md(html), '| Name | Qty |\n| --- | --: |\n| Apple | 3 |\n| Pear \\| green | 5 |');
});

test('a table without <th> still becomes a GFM table (first row as header), never raw HTML', () => {
  const out = md('<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>');
  assert.equal(out, '| a | b |\n| --- | --- |\n| c | d |');
});

test('a layout table is unwrapped into its cells', () => {
  const out = md('<table><tr><td><h2>Story</h2><p>Text</p></td><td><ul><li>menu</li></ul></td></tr></table>');
  assert.equal(out, '## Story\n\nText\n\n- menu');
  assert.ok(!out.includes('<table'));
});

test('fenced code blocks keep their language and blank lines', () => {
  const out = md('<pre><code class="language-ts">const a = 1;\n\n\n\nconst b = 2;</code></pre>');
  assert.equal(out, '```ts\nconst a = 1;\n\n\n\nconst b = 2;\n```');
});

test('inline code, emphasis, strikethrough', () => {
  assert.equal(md('<p>Use <code>npm i</code> <em>now</em> <strong>please</strong> <del>later</del></p>'), 'Use `npm i` _now_ **please** ~~later~~');
});

test('inline links are kept; block content in a link is flattened', () => {
  assert.equal(md('<p>See <a href="https://x.org/a" title="T">the docs</a>.</p>'), 'See [the docs](https://x.org/a "T").');
  assert.equal(md('<a href="https://x.org/card"><h3>Card title</h3><p>Blurb</p></a>'), '[Card title Blurb](https://x.org/card)');
});

test('base64 images become a placeholder with their alt text kept', () => {
  const html = '<p><img src="data:image/png;base64,iVBORw0KGgo=" alt="A chart"> and <img src="https://x.org/i.png" alt="real"></p>';
  assert.equal(md(html, true), `![A chart](${BASE64_IMAGE_PLACEHOLDER}) and ![real](https://x.org/i.png)`);
  assert.equal(BASE64_IMAGE_PLACEHOLDER, '<base64-image-removed>');
});

test('removeBase64Images false keeps the data URI', () => {
  const out = md('<img src="data:image/png;base64,iVBORw0KGgo=" alt="A chart">', false);
  assert.equal(out, '![A chart](data:image/png;base64,iVBORw0KGgo=)');
});

test('the per-call flag does not leak into the next call', () => {
  const html = '<img src="data:image/gif;base64,R0lG" alt="g">';
  assert.ok(md(html, true).includes(BASE64_IMAGE_PLACEHOLDER));
  assert.ok(md(html, false).includes('data:image/gif;base64,R0lG'));
});

test('3+ blank lines collapse to one blank line and the result is trimmed', () => {
  assert.equal(md('<p>a</p><div><br><br><br><br></div><p>b</p>'), 'a\n\nb');
  assert.equal(tidyMarkdown('\n\n a\n\n\n\n  \n\nb\n\n'), 'a\n\nb');
  assert.equal(tidyMarkdown('x\n\n\n\n```\n1\n\n\n\n2\n```'), 'x\n\n```\n1\n\n\n\n2\n```');
});

test('full documents and empty input', () => {
  assert.equal(md('<html><head><title>T</title></head><body><p>Hi</p></body></html>'), 'Hi');
  assert.equal(md(''), '');
});

test('a <pre> without <code> is a fenced block too; its leading newline is dropped as in a browser', () => {
  assert.equal(md('<pre>\nline 1\n  line 2</pre>'), '```\nline 1\n  line 2\n```');
  assert.equal(md('<pre class="language-py"><span>a = 1</span><br><span>b = 2</span></pre>'), '```py\na = 1\nb = 2\n```');
});

test('inline SVG icons and form controls are not text', () => {
  assert.equal(md('<p><a href="https://x.org/s"><svg><title>Facebook icon</title><path d="M0"/></svg>Share</a> <select><option>One</option></select>text</p>'), '[Share](https://x.org/s) text');
});

test('spaces at the edges of inline elements move outside the markup (non-breaking ones too)', () => {
  assert.equal(md('<p><strong>See it now:&nbsp;</strong><a href="https://x.org/a">Amazon</a></p>'), '**See it now:**\u00a0[Amazon](https://x.org/a)');
  assert.equal(md('<p><em>Title </em><em>[Source]</em></p>'), '_Title_ _\\[Source\\]_');
});

test('content after </body> or outside <html> is part of the body, as a browser builds it', () => {
  assert.equal(md('<html><body><p>One</p></body></html><p>Two</p>'), 'One\n\nTwo');
});
