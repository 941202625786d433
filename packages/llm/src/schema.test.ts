import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { LlmError } from './errors';
import { compileUserSchema } from './schema';
import { closeSchemaThreads, SCHEMA_LIMITS } from './schema-pool';

after(() => closeSchemaThreads());

async function invalid(schema: unknown): Promise<LlmError> {
  try {
    await compileUserSchema(schema);
  } catch (e) {
    assert.ok(e instanceof LlmError);
    return e;
  }
  assert.fail('expected an invalid-schema error');
}

test('schema: draft 2020-12 (zod v4 / pydantic output) validates with $defs and prefixItems', async () => {
  const c = await compileUserSchema({
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { item: { $ref: '#/$defs/Item' }, pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } },
    required: ['item'],
    $defs: { Item: { type: 'object', properties: { price: { type: 'number' } }, required: ['price'] } },
  });
  assert.equal(c.draft, '2020-12');
  assert.deepEqual(await c.validate({ item: { price: 3 }, pair: ['a', 1] }), { ok: true });
  const bad = await c.validate({ item: { price: 'three' }, pair: ['a', 'b'] });
  assert.ok(!bad.ok);
  assert.deepEqual(bad.errors, ['/item/price must be number', '/pair/1 must be number']);
  assert.equal(c.providerSchema.$schema, undefined, 'the $schema keyword is not sent to providers');
});

test('schema: draft-07 (zod-to-json-schema) with definitions and tuple items; without $schema it is recognised too', async () => {
  const body = {
    type: 'object',
    properties: { t: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] }, d: { $ref: '#/definitions/D' } },
    definitions: { D: { type: 'string', format: 'date' } },
    additionalProperties: false,
  };
  for (const schema of [{ $schema: 'http://json-schema.org/draft-07/schema#', ...body }, body]) {
    const c = await compileUserSchema(schema);
    assert.equal(c.draft, 'draft-07');
    assert.deepEqual(await c.validate({ t: ['x', 1], d: '2024-02-03' }), { ok: true });
    const bad = await c.validate({ t: ['x', 1.5], d: 'yesterday', extra: 1 });
    assert.ok(!bad.ok);
    assert.deepEqual(bad.errors.sort(), ['(root) must NOT have additional properties (extra)', '/d must match format "date"', '/t/1 must be integer'].sort());
  }
});

test('schema: invalid schemas are a typed 422 with the problems listed; nothing is guessed', async () => {
  const e = await invalid({ type: 'object', properties: { a: { type: 'strin' } } });
  assert.equal(e.status, 422);
  assert.equal(e.code, 'LLM_INVALID_SCHEMA');
  assert.equal(e.retryable, false);
  assert.match(e.message, /^Invalid JSON Schema/);
  assert.ok(Array.isArray((e.details as { errors: string[] }).errors));
  assert.equal((await invalid('{"type":"object"}')).code, 'LLM_INVALID_SCHEMA');
  assert.equal((await invalid([{ type: 'object' }])).code, 'LLM_INVALID_SCHEMA');
  assert.equal((await invalid(null)).code, 'LLM_INVALID_SCHEMA');
  assert.match((await invalid({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' })).message, /unsupported \$schema/);
  assert.match((await invalid({ type: 'object', properties: { a: { $ref: '#/$defs/Missing' } } })).message, /Missing|resolve/i);
  assert.equal((await invalid({ type: 'string', pattern: '([a-z' })).code, 'LLM_INVALID_SCHEMA');
});

test('schema: unknown keywords and formats are tolerated (users annotate schemas)', async () => {
  const c = await compileUserSchema({ type: 'object', properties: { a: { type: 'string', 'x-ui': 'wide', format: 'my-format' } }, examples: [{}] });
  assert.deepEqual(await c.validate({ a: 'anything' }), { ok: true });
});

test('schema: a non-object root is wrapped for the provider as {result}, definitions hoisted', async () => {
  const c = await compileUserSchema({ type: 'array', items: { $ref: '#/$defs/P' }, $defs: { P: { type: 'object', properties: { n: { type: 'string' } } } } });
  assert.equal(c.wrapped, true);
  assert.deepEqual(c.providerSchema, {
    type: 'object',
    properties: { result: { type: 'array', items: { $ref: '#/$defs/P' } } },
    required: ['result'],
    additionalProperties: false,
    $defs: { P: { type: 'object', properties: { n: { type: 'string' } } } },
  });
  assert.deepEqual(await c.validate([{ n: 'x' }]), { ok: true });
  // Object roots go as they are (a properties-only schema counts as an object).
  assert.equal((await compileUserSchema({ properties: { a: { type: 'string' } } })).wrapped, false);
});

test('schema: compiled once per distinct schema', async () => {
  const s = { type: 'object', properties: { z: { type: 'number' } } };
  assert.equal(await compileUserSchema(s), await compileUserSchema(JSON.parse(JSON.stringify(s))));
});

// ---- hostile schemas and data: nothing stalls the caller's event loop ----

/** Largest gap between timer ticks of this thread while `work` runs (a stall shows as one long gap). */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T | Error; stallMs: number }> {
  let last = Date.now();
  let stallMs = 0;
  const tick = setInterval(() => {
    const now = Date.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  try {
    return { result: await work().catch((e: Error) => e), stallMs };
  } finally {
    clearInterval(tick);
  }
}

test('schema: pattern (a+)+$ runs on the linear-time engine, in pattern, patternProperties and propertyNames', async () => {
  const evil = `${'a'.repeat(5_000)}!`;
  const c = await compileUserSchema({
    type: 'object',
    properties: { v: { type: 'string', pattern: '^(a+)+$' } },
    patternProperties: { '^(b+)+$': { type: 'number' } },
    propertyNames: { pattern: '^((a|b)+)+$|^v$' },
  });
  // A backtracking RegExp takes seconds for 30 characters and doubles with each one: 5,000 would never end.
  const r = await c.validate({ v: evil });
  assert.ok(!r.ok);
  assert.deepEqual(r.errors, ['/v must match pattern "^(a+)+$"']);
  assert.deepEqual(await c.validate({ v: 'aaa', bbb: 1 }), { ok: true });
  const bad = await c.validate({ v: 'aaa', [`${'b'.repeat(5_000)}!`]: 'x' });
  assert.ok(!bad.ok && bad.errors.some((e) => /property name must be valid/.test(e)), JSON.stringify(bad));
  assert.ok(!(await c.validate({ v: 'aaa', bbb: 'not a number' })).ok, 'patternProperties still apply');
});

test('schema: a pattern the linear-time engine cannot run is a 422 that names it', async () => {
  const e = await invalid({ type: 'object', properties: { a: { type: 'string', pattern: '^(\\w+)\\1$' } } });
  assert.equal(e.status, 422);
  assert.equal(e.code, 'LLM_INVALID_SCHEMA');
  assert.match(e.message, /\/properties\/a\/pattern '\^\(\\w\+\)\\1\$' is not a supported regular expression/);
  // Even where ajv would never compile it (an always-true schema), and in either draft.
  assert.match((await invalid({ patternProperties: { '(?=x)': {} } })).message, /\/patternProperties '\(\?=x\)' is not a supported/);
  assert.match((await invalid({ $schema: 'http://json-schema.org/draft-07/schema#', properties: { a: { pattern: 'a{1,1000}b{1,1000}c{1,1000}' } } })).message, /too complex/);
});

test("schema: validation that explodes without any pattern (anyOf over a recursive $ref) ends at the schema thread's deadline or memory bound as a 422, the event loop free", async () => {
  // Both branches fail only at the leaf, so ajv walks 2^depth paths: 2^40 steps for 80 bytes of data.
  const c = await compileUserSchema({ $ref: '#/$defs/n', $defs: { n: { anyOf: [{ type: 'array', items: { $ref: '#/$defs/n' } }, { type: 'array', items: { $ref: '#/$defs/n' } }] } } });
  let data: unknown = 1;
  for (let i = 0; i < 40; i++) data = [data];
  const { result, stallMs } = await longestStall(() => c.validate(data));
  assert.ok(result instanceof LlmError, String(result));
  assert.equal(result.status, 422);
  assert.equal(result.code, 'LLM_INVALID_SCHEMA');
  assert.equal(result.retryable, false);
  // Which bound it meets first depends on the host: a fast one runs out of the thread's heap (ajv's error
  // lists grow with the paths) before the deadline.
  assert.match(result.message, new RegExp(`took longer than ${SCHEMA_LIMITS.deadlineMs} ms|needs more than \\d+ MB`));
  // Not a speed assertion: the work is on another thread, so this one only ever waits for timers.
  assert.ok(stallMs < SCHEMA_LIMITS.deadlineMs, `the caller's event loop stalled for ${stallMs} ms`);
  // The thread was replaced: the next validation answers.
  const ok = await compileUserSchema({ type: 'array', items: { type: 'number' } });
  assert.deepEqual(await ok.validate([1, 2]), { ok: true });
});
