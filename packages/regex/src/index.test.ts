import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileLinear } from './index';

const LIMITS = { maxLength: 100, maxProgramSize: 200 };

test('(a+)+$ against a long subject that cannot match answers at once (a RegExp takes seconds at 30 characters)', () => {
  const c = compileLinear('^(a+)+$', LIMITS);
  assert.ok(c.ok);
  const t = process.hrtime.bigint();
  assert.equal(c.regex.test(`${'a'.repeat(100_000)}!`), false);
  assert.equal(c.regex.test('aaaa'), true);
  // Not a timing assertion on a loaded machine: 100,000 characters of backtracking would never end.
  assert.ok(process.hrtime.bigint() - t < 60_000_000_000n);
});

test('JavaScript syntax where RE2 has it; searches anywhere unless anchored', () => {
  const ok = (p: string, s: string) => {
    const c = compileLinear(p, LIMITS);
    assert.ok(c.ok, p);
    return c.regex.test(s);
  };
  assert.equal(ok('\\d{3}', 'ab123'), true);
  assert.equal(ok('^\\d{3}$', 'ab123'), false);
  assert.equal(ok('(?<y>\\d{4})-\\d{2}', '2024-05'), true);
  assert.equal(ok('\\p{L}+', 'ünïcode'), true);
  assert.equal(ok('\\u{1F600}', 'smile 😀'), true);
});

test('backreferences, lookaround and oversized patterns are refused with a reason', () => {
  for (const p of ['(\\w+)\\1', '(?=a)b', '(?!x)y']) {
    const c = compileLinear(p, LIMITS);
    assert.ok(!c.ok && /not a supported regular expression/.test(c.reason), p);
  }
  const long = compileLinear('a'.repeat(101), LIMITS);
  assert.ok(!long.ok && /longer than 100/.test(long.reason));
  const big = compileLinear('[a-z]{1,150}', LIMITS);
  assert.ok(!big.ok && /too complex/.test(big.reason));
});

test('toString tells patterns apart (ajv keys compiled patterns by it)', () => {
  const a = compileLinear('^a$', LIMITS);
  const b = compileLinear('^b$', LIMITS);
  assert.ok(a.ok && b.ok);
  assert.notEqual(String(a.regex), String(b.regex));
});
