import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createScope } from './scope';
import { repeatsSegments, TRAP_LIMITS } from './traps';

const from = { depth: 0, external: false };

test('traps: a URL past 2,083 characters or 20 path segments is not followed', () => {
  const s = createScope('https://site.test/', {});
  assert.equal(s.admit(`https://site.test/a?q=${'x'.repeat(2_000)}`, from).ok, true);
  assert.deepEqual(s.admit(`https://site.test/a?q=${'x'.repeat(2_100)}`, from), { ok: false, reason: 'trap-length' });
  const deep = (n: number) => `https://site.test/${Array.from({ length: n }, (_, i) => `s${i}`).join('/')}`;
  assert.equal(s.admit(deep(20), from).ok, true);
  assert.deepEqual(s.admit(deep(21), from), { ok: false, reason: 'trap-segments' });
});

test('traps: a run of one to three segments repeated three times in a row is a loop; dates and twice are not', () => {
  assert.equal(repeatsSegments(['a', 'a', 'a']), true);
  assert.equal(repeatsSegments(['x', 'a', 'b', 'a', 'b', 'a', 'b']), true);
  assert.equal(repeatsSegments(['cal', 'a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c', 'end']), true);
  assert.equal(repeatsSegments(['a', 'b', 'a', 'b']), false, 'twice is a structure');
  assert.equal(repeatsSegments(['2024', '01', '01']), false);
  assert.equal(repeatsSegments(['docs', 'a', 'docs', 'b', 'docs']), false, 'not in a row');
  const s = createScope('https://site.test/', {});
  assert.deepEqual(s.admit('https://site.test/shop/item/shop/item/shop/item', from), { ok: false, reason: 'trap-repeat' });
  assert.equal(s.admit('https://site.test/shop/item/shop/item', from).ok, true);
});

test('traps: a path is followed with at most 50 query variants; repeats of one variant and other paths are unaffected', () => {
  const s = createScope('https://site.test/', {});
  for (let i = 0; i < TRAP_LIMITS.maxQueryVariants; i++) assert.equal(s.admit(`https://site.test/calendar?month=${i}`, from).ok, true);
  assert.deepEqual(s.admit('https://site.test/calendar?month=999', from), { ok: false, reason: 'trap-variants' });
  assert.equal(s.admit('https://site.test/calendar?month=3', from).ok, true, 'a variant already admitted stays admitted (links repeat)');
  assert.equal(s.admit('https://site.test/calendar', from).ok, true, 'the path itself');
  assert.equal(s.admit('https://site.test/other?month=999', from).ok, true);
  // With ignoreQueryParameters every variant is one URL: nothing to count.
  const plain = createScope('https://site.test/', { ignoreQueryParameters: true });
  for (let i = 0; i < 60; i++) assert.equal(plain.admit(`https://site.test/calendar?month=${i}`, from).ok, true);
});
