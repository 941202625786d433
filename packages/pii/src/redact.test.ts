import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CRAFTED } from './crafted';
import { piiOptionsOf, wantsModelPass } from './options';
import { findPii, redact, redactValues } from './redact';

const text = 'Mail anna.schmidt@example.de, call +49 30 1234567, card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00. Version 1.2.3.4, order 2024-03-15.';

test('tag style: placeholders per kind, the rest intact', () => {
  assert.equal(
    redact(text).text,
    'Mail <EMAIL>, call <PHONE>, card <CREDIT_CARD>, IBAN <IBAN>. Version 1.2.3.4, order 2024-03-15.',
  );
});

test('mask keeps the length, remove drops the value', () => {
  assert.equal(redact('x anna@example.de y', { replaceStyle: 'mask' }).text, 'x *************** y');
  assert.equal(redact('x anna@example.de y', { replaceStyle: 'remove' }).text, 'x  y');
});

test('hash: one token per value under one key, the same for spellings of one value, another under another key', () => {
  const a = redact('A@Example.de and a@example.de; +49 30 1234567 = +49 (30) 1234567', { replaceStyle: 'hash', hashKey: 'k1' }).text;
  const tokens = a.match(/<[A-Z_]+_[0-9a-f]{12}>/g)!;
  assert.equal(tokens.length, 4);
  assert.equal(tokens[0], tokens[1]);
  assert.equal(tokens[2], tokens[3]);
  assert.notEqual(tokens[0], tokens[2]);
  const b = redact('a@example.de', { replaceStyle: 'hash', hashKey: 'k2' }).text;
  assert.notEqual(b, tokens[0]);
});

test('entities pick buckets: FINANCIAL covers cards and IBANs only', () => {
  const r = redact(text, { entities: ['FINANCIAL'] });
  assert.deepEqual(Object.keys(r.counts).sort(), ['CREDIT_CARD', 'IBAN']);
  assert.match(r.text, /anna\.schmidt@example\.de/);
});

test('checksums decide: a Luhn-invalid card and a mod-97-invalid IBAN stay', () => {
  assert.deepEqual(findPii('card 4111 1111 1111 1112, IBAN DE89 3704 0044 0532 0130 01'), []);
});

test('numbers inside link targets are ids, except tel: and IPv4 hosts', () => {
  const md = '[item](https://shop.example/p/4111111111111111?ref=0301234567) [call](tel:+4930123456) [admin](http://10.1.2.3/x)';
  assert.deepEqual(findPii(md).map((s) => [s.kind, md.slice(s.start, s.end)]), [['PHONE', '+4930123456'], ['IP_ADDRESS', '10.1.2.3']]);
});

test('redactValues replaces what a model reported, longest first', () => {
  const r = redactValues('Anna Weber met Anna at the Weber house.', [{ kind: 'PERSON', text: 'Anna' }, { kind: 'PERSON', text: 'Anna Weber' }]);
  assert.equal(r.text, '<PERSON> met <PERSON> at the Weber house.');
});

test('request values: true and objects map to options; only accurate/aggressive ask for the model', () => {
  assert.equal(piiOptionsOf(false), null);
  assert.deepEqual(piiOptionsOf(true), { mode: 'fast', replaceStyle: 'tag', hashKey: undefined });
  assert.deepEqual(piiOptionsOf({ entities: ['EMAIL'], replaceStyle: 'mask' }, 'k'), { mode: 'fast', entities: ['EMAIL'], replaceStyle: 'mask', hashKey: 'k' });
  assert.equal(wantsModelPass(true), false);
  assert.equal(wantsModelPass({ mode: 'accurate' }), true);
});

// Linear time: each crafted input (README) of 512 KB finishes in seconds; a backtracking or
// quadratic pass takes minutes on them. Ratios between sizes are measured in linear.bench.ts.
test('crafted inputs of 512 KB finish in seconds', () => {
  for (const [name, make] of Object.entries(CRAFTED)) {
    const t0 = performance.now();
    redact(make(1 << 19), { mode: 'aggressive' });
    const ms = performance.now() - t0;
    assert.ok(ms < 15_000, `${name}: ${ms.toFixed(0)} ms`);
  }
});
