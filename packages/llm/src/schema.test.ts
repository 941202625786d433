import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LlmError } from './errors';
import { compileUserSchema } from './schema';

function invalid(schema: unknown): LlmError {
  try {
    compileUserSchema(schema);
  } catch (e) {
    assert.ok(e instanceof LlmError);
    return e;
  }
  assert.fail('expected an invalid-schema error');
}

test('schema: draft 2020-12 (zod v4 / pydantic output) validates with $defs and prefixItems', () => {
  const c = compileUserSchema({
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { item: { $ref: '#/$defs/Item' }, pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } },
    required: ['item'],
    $defs: { Item: { type: 'object', properties: { price: { type: 'number' } }, required: ['price'] } },
  });
  assert.equal(c.draft, '2020-12');
  assert.deepEqual(c.validate({ item: { price: 3 }, pair: ['a', 1] }), { ok: true });
  const bad = c.validate({ item: { price: 'three' }, pair: ['a', 'b'] });
  assert.ok(!bad.ok);
  assert.deepEqual(bad.errors, ['/item/price must be number', '/pair/1 must be number']);
  assert.equal(c.providerSchema.$schema, undefined, 'the $schema keyword is not sent to providers');
});

test('schema: draft-07 (zod-to-json-schema) with definitions and tuple items; without $schema it is recognised too', () => {
  const body = {
    type: 'object',
    properties: { t: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] }, d: { $ref: '#/definitions/D' } },
    definitions: { D: { type: 'string', format: 'date' } },
    additionalProperties: false,
  };
  for (const schema of [{ $schema: 'http://json-schema.org/draft-07/schema#', ...body }, body]) {
    const c = compileUserSchema(schema);
    assert.equal(c.draft, 'draft-07');
    assert.deepEqual(c.validate({ t: ['x', 1], d: '2024-02-03' }), { ok: true });
    const bad = c.validate({ t: ['x', 1.5], d: 'yesterday', extra: 1 });
    assert.ok(!bad.ok);
    assert.deepEqual(bad.errors.sort(), ['(root) must NOT have additional properties (extra)', '/d must match format "date"', '/t/1 must be integer'].sort());
  }
});

test('schema: invalid schemas are a typed 422 with the problems listed; nothing is guessed', () => {
  const e = invalid({ type: 'object', properties: { a: { type: 'strin' } } });
  assert.equal(e.status, 422);
  assert.equal(e.code, 'LLM_INVALID_SCHEMA');
  assert.equal(e.retryable, false);
  assert.match(e.message, /^Invalid JSON Schema/);
  assert.ok(Array.isArray((e.details as { errors: string[] }).errors));
  assert.equal(invalid('{"type":"object"}').code, 'LLM_INVALID_SCHEMA');
  assert.equal(invalid([{ type: 'object' }]).code, 'LLM_INVALID_SCHEMA');
  assert.equal(invalid(null).code, 'LLM_INVALID_SCHEMA');
  assert.match(invalid({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }).message, /unsupported \$schema/);
  assert.match(invalid({ type: 'object', properties: { a: { $ref: '#/$defs/Missing' } } }).message, /Missing|resolve/i);
  assert.equal(invalid({ type: 'string', pattern: '([a-z' }).code, 'LLM_INVALID_SCHEMA');
});

test('schema: unknown keywords and formats are tolerated (users annotate schemas)', () => {
  const c = compileUserSchema({ type: 'object', properties: { a: { type: 'string', 'x-ui': 'wide', format: 'my-format' } }, examples: [{}] });
  assert.deepEqual(c.validate({ a: 'anything' }), { ok: true });
});

test('schema: a non-object root is wrapped for the provider as {result}, definitions hoisted', () => {
  const c = compileUserSchema({ type: 'array', items: { $ref: '#/$defs/P' }, $defs: { P: { type: 'object', properties: { n: { type: 'string' } } } } });
  assert.equal(c.wrapped, true);
  assert.deepEqual(c.providerSchema, {
    type: 'object',
    properties: { result: { type: 'array', items: { $ref: '#/$defs/P' } } },
    required: ['result'],
    additionalProperties: false,
    $defs: { P: { type: 'object', properties: { n: { type: 'string' } } } },
  });
  assert.deepEqual(c.validate([{ n: 'x' }]), { ok: true });
  // Object roots go as they are (a properties-only schema counts as an object).
  assert.equal(compileUserSchema({ properties: { a: { type: 'string' } } }).wrapped, false);
});

test('schema: compiled once per distinct schema', () => {
  const s = { type: 'object', properties: { z: { type: 'number' } } };
  assert.equal(compileUserSchema(s), compileUserSchema(JSON.parse(JSON.stringify(s))));
});
