import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPathPatterns, compilePathPattern, createScope, PATH_PATTERN_LIMITS } from './index';

const matches = (p: string, s: string) => {
  const c = compilePathPattern(p);
  assert.ok(c.ok, `${p} compiles`);
  return c.pattern.test(s);
};

test('ordinary patterns keep their JavaScript meaning', () => {
  const cases: [string, string, boolean][] = [
    ['^/blog/.*', '/blog/2024/post', true],
    ['^/blog/.*', '/news/blog/x', false],
    ['\\d+', '/p/123', true],
    ['\\d+', '/p/abc', false],
    ['^/docs/[a-z-]+$', '/docs/getting-started', true],
    ['^/docs/[a-z-]+$', '/docs/getting-started/2', false],
    ['\\/api\\/v\\d', '/api/v2/x', true],
    ['(?<lang>en|fr)/', '/fr/page', true],
    ['\\u0041BC', '/ABC', true],
    ['blog|news', '/x/news', true],
    ['BLOG', '/blog', false],
    ['\\.pdf$', '/a/b.pdf', true],
    ['[^/]+\\.html$', '/a/b.html', true],
    ['\\bpost\\b', '/a-post-b', true],
  ];
  for (const [p, s, want] of cases) {
    assert.equal(matches(p, s), want, `${p} on ${s}`);
    assert.equal(new RegExp(p).test(s), want, `the same as JavaScript: ${p} on ${s}`);
  }
});

test('catastrophic patterns match in linear time', () => {
  // JavaScript: 26 a's took 5.3 s, and each one more doubles it.
  const subject = '/' + 'a'.repeat(50_000) + '!';
  const t = performance.now();
  assert.equal(matches('(a+)+$', subject), false);
  assert.equal(matches('(a+)+!$', subject), true);
  assert.equal(matches('^/(a|aa)+$', subject), false);
  assert.equal(matches('(.*a){20}!$', subject), true);
  assert.ok(performance.now() - t < 4_000, `${(performance.now() - t).toFixed(0)} ms`);
});

test('backreferences, lookaround, bad syntax and oversize programs are refused, naming the pattern', () => {
  const issues = checkPathPatterns({ includePaths: ['^/ok', '(a)\\1', '(?=x)y'], excludePaths: ['(?<!a)b', '[', '.{1,1000}'] });
  assert.deepEqual(
    issues.map((i) => i.path),
    [['includePaths', 1], ['includePaths', 2], ['excludePaths', 0], ['excludePaths', 1], ['excludePaths', 2]],
  );
  assert.match(issues[0]!.message, /^includePaths\[1\] '\(a\)\\1' is not a supported regular expression .*backreferences and lookaround/);
  assert.match(issues[4]!.message, /'\.\{1,1000\}' is too complex .*2001 instructions, at most 1000/);
  assert.deepEqual(checkPathPatterns({ includePaths: ['^/blog/', '\\d+'], excludePaths: null }), []);
});

test('caps: pattern length, count per list, total characters', () => {
  assert.equal(compilePathPattern('a'.repeat(PATH_PATTERN_LIMITS.maxLength + 1)).ok, false);
  assert.deepEqual(checkPathPatterns({ includePaths: Array(PATH_PATTERN_LIMITS.maxCount + 1).fill('a') }).map((i) => i.path), [['includePaths']]);
  const big = Array.from({ length: 11 }, () => '[a-z]'.repeat(200)); // 1,000 characters, 202 instructions
  const issues = checkPathPatterns({ includePaths: big });
  assert.deepEqual(issues.map((i) => i.path), [['includePaths', 10]]);
  assert.match(issues[0]!.message, /at most 10000 characters/);
});

test('scope matching uses the linear engine: (a+)+$ against a long path (2,000 characters: longer is a trap, traps.ts)', () => {
  const s = createScope('https://site.test/', { includePaths: ['(a+)+$'] });
  const t = performance.now();
  const r = s.admit(`https://site.test/${'a'.repeat(2_000)}b`, { depth: 0, external: false });
  assert.deepEqual(r, { ok: false, reason: 'include' });
  assert.equal(s.admit(`https://site.test/${'a'.repeat(2_000)}`, { depth: 0, external: false }).ok, true);
  assert.ok(performance.now() - t < 3_000, `${(performance.now() - t).toFixed(0)} ms`);
});
