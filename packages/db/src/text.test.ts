import assert from 'node:assert/strict';
import { test } from 'node:test';
import { storable, storableText } from './text';

test('NUL and unpaired surrogates become U+FFFD; pairs and ordinary text stay', () => {
  assert.equal(storableText('a\u0000b'), 'a\ufffdb');
  assert.equal(storableText('x\ud800y\udc00z'), 'x\ufffdy\ufffdz');
  assert.equal(storableText('emoji 😀 and 日本'), 'emoji 😀 and 日本');
  assert.equal(storableText('end\ud83d'), 'end\ufffd');
});

test('deep values are fixed without touching what needs nothing', () => {
  const clean = { a: ['x', { y: 1 }], d: new Date(0) };
  assert.equal(storable(clean), clean, 'no copy when nothing changes');
  const dirty = { markdown: 'a\u0000', metadata: { title: 't\ud800', 'k\u0000': 'v' }, links: ['ok', 'b\udc00'], keep: clean };
  const out = storable(dirty);
  assert.deepEqual(out, { markdown: 'a\ufffd', metadata: { title: 't\ufffd', 'k\ufffd': 'v' }, links: ['ok', 'b\ufffd'], keep: clean });
  assert.equal(out.keep, clean);
  assert.equal(dirty.markdown, 'a\u0000', 'the input is not mutated');
  assert.ok(!JSON.stringify(out).includes('\\u0000'));
});
