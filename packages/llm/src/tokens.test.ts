import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONTEXT_MARGIN, countMessageTokens, countTokens, fitToContext, splitByTokens, TRUNCATION_MARKER, truncateToTokens } from './tokens';

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 97}`).join(' ');

test('tokens: o200k_base counts (exact for GPT-4o-family models)', () => {
  assert.equal(countTokens(''), 0);
  assert.equal(countTokens('hello world'), 2);
  assert.equal(countTokens('Hello, world!'), 4);
  // Page text is untrusted: special-token text is counted as plain text, never thrown on.
  assert.ok(countTokens('before <|endoftext|> after') > 3);
  // Chat overhead: 4 per message + 3 for the reply primer.
  assert.equal(countMessageTokens([{ content: 'hello world' }]), 2 + 4 + 3);
});

test('tokens: truncateToTokens keeps the head within the limit', () => {
  const text = words(5_000);
  const total = countTokens(text);
  assert.ok(total > 5_000);
  const t = truncateToTokens(text, 1_000);
  assert.equal(t.truncated, true);
  assert.ok(t.tokens <= 1_000 && t.tokens >= 990, `${t.tokens}`);
  assert.ok(text.startsWith(t.text));
  assert.equal(countTokens(t.text), t.tokens);
  const whole = truncateToTokens('short text', 1_000);
  assert.deepEqual(whole, { text: 'short text', truncated: false, tokens: 2 });
  assert.deepEqual(truncateToTokens('abc', 0), { text: '', truncated: true, tokens: 0 });
});

test('tokens: a cut inside multi-byte text leaves no broken character', () => {
  const text = '日本語のテキスト🙂'.repeat(300);
  for (const n of [7, 50, 333]) {
    const t = truncateToTokens(text, n);
    assert.ok(t.tokens <= n);
    assert.ok(!t.text.includes('\uFFFD'));
    assert.ok(text.startsWith(t.text));
  }
});

test('tokens: a 4 MB page is cut quickly (characters first, then tokens)', () => {
  const big = words(800_000); // ≈ 4.4 MB
  const t0 = performance.now();
  const t = truncateToTokens(big, 8_000);
  const ms = performance.now() - t0;
  assert.ok(t.tokens <= 8_000 && t.truncated);
  assert.ok(ms < 3_000, `took ${ms.toFixed(0)} ms`);
});

test('tokens: fitToContext stays within window − margin − reply − prompt, marker included', () => {
  const limits = { contextWindow: 4_096, maxOutput: 1_024 };
  const page = words(20_000);
  const fit = fitToContext(page, { limits, reservedOutput: 1_024, promptTokens: 300 });
  const expectedBudget = Math.floor(4_096 * (1 - CONTEXT_MARGIN)) - 1_024 - 300;
  assert.equal(fit.budget, expectedBudget);
  assert.ok(fit.truncated);
  assert.ok(fit.text.endsWith(TRUNCATION_MARKER));
  assert.ok(fit.tokens <= fit.budget, `${fit.tokens} > ${fit.budget}`);
  assert.equal(countTokens(fit.text), fit.tokens);
  // Small pages pass untouched.
  const small = fitToContext('# Title\n\nBody.', { limits, reservedOutput: 1_024, promptTokens: 300 });
  assert.deepEqual([small.text, small.truncated], ['# Title\n\nBody.', false]);
  // No room at all: nothing of the page is sent.
  assert.equal(fitToContext(page, { limits, reservedOutput: 4_000, promptTokens: 300 }).text, '');
});

test('tokens: splitByTokens covers the text in pieces within the limit', () => {
  const text = words(3_000);
  const pieces = splitByTokens(text, 500);
  assert.ok(pieces.length >= 6);
  assert.equal(pieces.join(''), text);
  for (const p of pieces) assert.ok(countTokens(p) <= 501); // re-encoding a piece may merge differently at its edges
});
