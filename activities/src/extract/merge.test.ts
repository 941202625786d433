import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countFilled, mergePages, type PageData } from './merge';

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    price: { type: ['number', 'null'] },
    features: { type: 'array', items: { type: 'string' } },
    team: { type: 'array', items: { $ref: '#/$defs/person' } },
    hq: { anyOf: [{ type: 'object', properties: { city: { type: 'string' }, country: { type: 'string' } } }, { type: 'null' }] },
  },
  $defs: { person: { type: 'object', properties: { name: { type: 'string' }, role: { type: ['string', 'null'] } } } },
};

const page = (url: string, data: unknown, o: Partial<PageData> = {}): PageData => ({ url, data, named: true, filled: countFilled(data), order: 0, ...o });

test('agreeing and complementary pages merge without conflicts; arrays concatenate without duplicates', () => {
  const m = mergePages(
    [
      page('u1', { name: 'Acme', price: null, features: ['Fast', 'Cheap'], team: [{ name: 'Ann', role: 'CEO' }], hq: { city: 'Porto', country: null } }, { order: 0 }),
      page('u2', { name: ' acme ', price: 10, features: ['cheap ', 'Robust'], team: [{ name: 'Ann', role: 'CEO' }, { name: 'Bob', role: null }], hq: { city: null, country: 'PT' } }, { order: 1 }),
    ],
    schema,
  );
  assert.deepEqual(m.conflicts, []);
  assert.deepEqual(m.data, {
    name: 'acme', // u2 filled more values: it ranks first; the two names are the same value
    price: 10,
    features: ['cheap ', 'Robust', 'Fast'],
    team: [{ name: 'Ann', role: 'CEO' }, { name: 'Bob', role: null }],
    hq: { city: 'Porto', country: 'PT' },
  });
  assert.deepEqual(m.sources.name, ['u2', 'u1']);
  assert.deepEqual(m.sources.price, ['u2']);
  assert.deepEqual(m.sources['hq.city'], ['u1']);
  assert.deepEqual(m.sources['team[0]'], ['u2', 'u1']);
  assert.deepEqual(m.sources['features[2]'], ['u1']);
});

test('disagreeing scalars: the most relevant page wins, the conflict is reported, a choice replaces it', () => {
  const m = mergePages(
    [
      page('found', { name: 'Acme', price: 12 }, { named: false, order: 0 }),
      page('named', { name: 'Acme', price: 10 }, { named: true, order: 1 }),
    ],
    schema,
  );
  assert.equal((m.data as { price: number }).price, 10, 'the named page ranks before the one a wildcard found');
  assert.deepEqual(m.conflicts, [{ path: 'price', candidates: [{ value: 10, sources: ['named'] }, { value: 12, sources: ['found'] }] }]);
  assert.ok(m.applyChoice('price', 1));
  assert.equal((m.data as { price: number }).price, 12);
  assert.deepEqual(m.sources.price, ['found']);
  assert.equal(m.applyChoice('price', 5), false);
  assert.equal(m.applyChoice('nope', 0), false);
});

test('without a schema the shapes come from the values; maxItems cuts the concatenation', () => {
  const m = mergePages([page('a', { tags: ['x', 'y'], meta: { n: 1 } }), page('b', { tags: ['z'], meta: { m: 2 } }, { order: 1 })]);
  assert.deepEqual(m.data, { tags: ['x', 'y', 'z'], meta: { n: 1, m: 2 } });
  const capped = mergePages([page('a', { tags: ['x', 'y'] }), page('b', { tags: ['z'] }, { order: 1 })], { type: 'object', properties: { tags: { type: 'array', maxItems: 2 } } });
  assert.deepEqual(capped.data, { tags: ['x', 'y'] });
});

test('a value no page gave stays null; a non-object root merges as a scalar at $', () => {
  const m = mergePages([page('a', { name: null }), page('b', { name: '' })], schema);
  assert.deepEqual(m.data, { name: null });
  const root = mergePages([page('a', 'one'), page('b', 'two', { order: 1 })], { type: 'string' });
  assert.equal(root.data, 'one');
  assert.equal(root.conflicts[0]!.path, '$');
  root.applyChoice('$', 1);
  assert.equal(root.data, 'two');
});

test('countFilled counts non-empty leaves', () => {
  assert.equal(countFilled({ a: 1, b: null, c: ' ', d: ['x', { e: 2, f: 3 }] }), 4);
  assert.equal(countFilled(null), 0);
});
