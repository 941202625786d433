import assert from 'node:assert/strict';
import { test } from 'node:test';
import { limitsResolver, parseOriginLimits } from './limits';
import { parseRetryAfter } from './retry-after';

test('Retry-After: delay-seconds, an HTTP date (past → 0), nothing readable → null (exponential backoff then)', () => {
  const now = Date.parse('2026-12-03T12:00:00Z');
  assert.equal(parseRetryAfter('2', now), 2_000);
  assert.equal(parseRetryAfter(' 120 ', now), 120_000);
  assert.equal(parseRetryAfter(['5', '9'], now), 5_000, 'the first of repeated headers');
  assert.equal(parseRetryAfter('Thu, 03 Dec 2026 12:00:30 GMT', now), 30_000);
  assert.equal(parseRetryAfter('Thursday, 03-Dec-26 12:01:00 GMT', now), 60_000, 'the obsolete RFC 850 form');
  assert.equal(parseRetryAfter('Thu, 03 Dec 2026 11:00:00 GMT', now), 0, 'a date in the past: at once');
  for (const bad of [undefined, '', '-1', '1.5', 'soon', 'tomorrow', '2026-12-03T12:00:30Z']) assert.equal(parseRetryAfter(bad, now), null, String(bad));
});

test('per-origin limits: origin over host over the longest *.domain over the defaults; fields left out keep the defaults', () => {
  const rules = parseOriginLimits(
    JSON.stringify({
      'https://shop.example.com': { maxInFlight: 1 },
      'shop.example.com': { maxInFlight: 3, minIntervalMs: 50 },
      '*.example.com': { minIntervalMs: 500 },
      '*.eu.example.com': { minIntervalMs: 2_000 },
    }),
  );
  const of = limitsResolver({ maxInFlight: 8, minIntervalMs: 0 }, rules);
  assert.deepEqual(of('https://shop.example.com'), { maxInFlight: 1, minIntervalMs: 0 });
  assert.deepEqual(of('http://shop.example.com:8080'), { maxInFlight: 3, minIntervalMs: 50 });
  assert.deepEqual(of('https://a.eu.example.com'), { maxInFlight: 8, minIntervalMs: 2_000 });
  assert.deepEqual(of('https://www.example.com'), { maxInFlight: 8, minIntervalMs: 500 });
  assert.deepEqual(of('https://example.com'), { maxInFlight: 8, minIntervalMs: 500 }, '*.domain covers the domain itself');
  assert.deepEqual(of('https://notexample.com'), { maxInFlight: 8, minIntervalMs: 0 }, 'no suffix match without the dot');
  assert.deepEqual(parseOriginLimits(undefined), []);
  assert.deepEqual(parseOriginLimits('  '), []);
});

test('per-origin limits: what is wrong is said', () => {
  assert.throws(() => parseOriginLimits('{'), /must be a JSON object/);
  assert.throws(() => parseOriginLimits('[]'), /must be a JSON object/);
  assert.throws(() => parseOriginLimits('{"ftp://x.example": {}}'), /not an http\(s\) origin/);
  assert.throws(() => parseOriginLimits('{"x.example": 3}'), /must map to an object/);
  assert.throws(() => parseOriginLimits('{"x.example": {"cap": 3}}'), /unknown field "cap"/);
  assert.throws(() => parseOriginLimits('{"x.example": {"maxInFlight": -1}}'), /whole number/);
  assert.throws(() => parseOriginLimits('{"x.example": {"minIntervalMs": 1.5}}'), /whole number/);
});
