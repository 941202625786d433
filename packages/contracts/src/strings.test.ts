import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scrapeUrlRequestSchema } from './scrape';
import { findBadStrings, MAX_BODY_DEPTH } from './strings';
import { parseBody } from './validation';

test('NUL and unpaired surrogates are found in values and keys at any depth, with their path', () => {
  const issues = findBadStrings({ url: 'http://a/\u0000', headers: { 'x\u0000': 'v', ok: 'a\ud800' }, list: ['fine', ['\udc00x']] });
  assert.deepEqual(
    issues.map((i) => [i.code, i.path.join('.')]),
    [
      ['invalid_characters', 'url'],
      ['invalid_characters', 'headers.x\u0000'],
      ['invalid_characters', 'headers.ok'],
      ['invalid_characters', 'list.1.0'],
    ],
  );
});

test('paired surrogates (emoji) and ordinary text pass', () => {
  assert.deepEqual(findBadStrings({ a: 'smile 😀', b: ['ünïcødé', '日本語'], c: 1, d: null }), []);
});

test('nesting beyond the bound is one issue, without recursion', () => {
  let deep: unknown = 'x';
  for (let i = 0; i < 100_000; i++) deep = [deep];
  const issues = findBadStrings({ a: deep });
  assert.equal(issues.length, 1);
  assert.equal(issues[0]!.code, 'too_deep');
  assert.equal(issues[0]!.path.length, MAX_BODY_DEPTH);
});

test('parseBody refuses bad characters even where the schema accepts any string, and says url', () => {
  const r = parseBody(scrapeUrlRequestSchema, { url: 'https://example.com/', headers: { Cookie: 'a\u0000' } });
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.deepEqual(r.details.map((d) => d.path.join('.')), ['headers.Cookie']);
    assert.equal(r.urlInvalid, false);
  }
  const u = parseBody(scrapeUrlRequestSchema, { url: 'https://example.com/\ud800' });
  assert.equal(u.ok, false);
  if (!u.ok) assert.equal(u.urlInvalid, true);
  assert.equal(parseBody(scrapeUrlRequestSchema, { url: 'https://example.com/😀' }).ok, true);
});
