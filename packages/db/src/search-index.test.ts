import assert from 'node:assert/strict';
import { test } from 'node:test';
import { markdownToIndexText, MAX_INDEXED_CHARS, searchEntryOf } from './search-index';

// What the own index stores of a page's markdown (pure: no database).

test('headings apart; links, images, tags and markup reduced to their words; lines trimmed', () => {
  const md = [
    '# Kettle guide #',
    '',
    'Boil water in a [kettle](https://shop.test/kettle "Buy") — see ![a steel kettle](https://img.test/k.png).',
    '   ## Choosing  ',
    '> Quoted **advice**: use `descale` weekly.',
    '- first item',
    '12. numbered ~~old~~ item',
    '---',
    '| col a | col b |',
    'text with <span class="x">a tag</span>\there',
    '#hashtag is not a heading',
  ].join('\n');
  const { headings, body } = markdownToIndexText(md);
  assert.equal(headings, 'Kettle guide\nChoosing');
  assert.deepEqual(body.split('\n'), [
    'Boil water in a kettle — see a steel kettle.',
    'Quoted advice : use descale weekly.',
    'first item',
    'numbered old item',
    'col a col b',
    'text with a tag here',
    '#hashtag is not a heading',
  ]);
  assert.ok(!/https?:|png|Buy/.test(body), 'link targets, image URLs and titles are not words of the page');
});

test('a repeated line is kept once (its words and phrases still match); distinct lines keep their order', () => {
  const para = 'Benchmark prose with [a link](http://127.0.0.1:9/p/1), **bold words** and enough text.';
  const md = ['# Page 5', '', para, '', 'Another paragraph.', '', para, '', para, '', 'Last words.'].join('\n');
  const { body } = markdownToIndexText(md);
  assert.equal(body, 'Benchmark prose with a link, bold words and enough text.\nAnother paragraph.\nLast words.');
  // The crawl bench's page: one paragraph 180 times is indexed as one.
  assert.equal(markdownToIndexText(Array(180).fill(para).join('\n\n')).body, 'Benchmark prose with a link, bold words and enough text.');
});

test('dropping exact copies of a line before the rewrites gives what dropping them after does', () => {
  // Lines whose rewrites differ in subtle ways: indentation, trailing and inner spaces, tabs,
  // blank and white-space-only lines, list and quote marks, links, tags, emphasis, headings.
  const pool = ['Plain words here.', '  Indented words.', 'Trailing space ', 'Two  inner   spaces', '\ttab\tseparated', '', '   ', '- a list item', '> quoted *text*',
    'see [the docs](https://x.test/d) now', '![img](https://x.test/i.png)', 'a <b>tag</b> line', '## A heading', '| a | b |', '---', '12) numbered', 'Plain words here. '];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let round = 0; round < 50; round++) {
    const lines = Array.from({ length: 40 }, () => pool[next() % pool.length]!);
    // The same text with every repeated line made unique by a trailing space, which the
    // rewrites remove: no line is then dropped before them, only after.
    const seen = new Set<string>();
    const unique = lines.map((l, i) => (seen.has(l) ? `${l}${' '.repeat(1 + (i % 3))}` : (seen.add(l), l)));
    assert.deepEqual(markdownToIndexText(lines.join('\n')), markdownToIndexText(unique.join('\n')), `round ${round}`);
  }
});

test('the body is capped at MAX_INDEXED_CHARS, and so is a huge markdown before any rewrite', () => {
  const line = (i: number) => `line ${i} ${'word '.repeat(20)}`;
  const md = Array.from({ length: 20_000 }, (_, i) => line(i)).join('\n');
  const { body } = markdownToIndexText(md);
  assert.equal(body.length, MAX_INDEXED_CHARS);
  assert.ok(body.startsWith('line 0 word'));
});

test('searchEntryOf: the entry of a stored document (title, language configuration, no 4xx pages)', () => {
  const doc = (statusCode: number) => ({
    markdown: '# Wasserkocher\n\nUnsere Wasserkocher kochen Wasser.\n\nUnsere Wasserkocher kochen Wasser.',
    metadata: { url: 'https://www.Example.test/de/k/?b=2&a=1#x', statusCode, title: ' Wasserkocher  im Test ', language: 'de-DE' },
  });
  const e = searchEntryOf(doc(200))!;
  assert.equal(e.urlKey, 'example.test/de/k?a=1&b=2');
  assert.equal(e.title, 'Wasserkocher im Test');
  assert.equal(e.config, 'german');
  assert.equal(e.headings, 'Wasserkocher');
  assert.equal(e.body, 'Unsere Wasserkocher kochen Wasser.');
  assert.equal(searchEntryOf(doc(404)), null);
});

test('searchEntryOf: the content hash follows the indexed text and configuration, not the URL or the dates', () => {
  const doc = (o: { url?: string; text?: string; title?: string; language?: string; published?: string }) => ({
    markdown: `# Kettles\n\n${o.text ?? 'Kettles boil water.'}`,
    metadata: { url: o.url ?? 'https://example.test/k', statusCode: 200, title: o.title ?? 'Kettles', language: o.language ?? 'en', publishedTime: o.published },
  });
  const hash = (o: Parameters<typeof doc>[0]) => searchEntryOf(doc(o))!.contentHash;
  const base = hash({});
  assert.match(base, /^[0-9a-f]{32}$/);
  assert.equal(hash({ url: 'https://www.example.test/k/', published: '2026-01-01T00:00:00Z' }), base);
  assert.equal(hash({ text: 'Kettles boil water.\n\nKettles boil water.' }), base, 'a repeated line is not indexed, so not hashed');
  for (const other of [{ text: 'Kettles boil tea.' }, { title: 'Kettle' }, { language: 'de' }]) assert.notEqual(hash(other), base, JSON.stringify(other));
});
