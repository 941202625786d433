import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { promptText } from '@wds/test-utils/fake-openai';
import { LlmError } from './errors';
import { extractJson } from './extract';
import { fakeProvider } from './test-helpers';

const { fake, client } = await fakeProvider({
  models: [
    'fake-model',
    { id: 'no-json-schema', jsonSchema: false },
    { id: 'plain-text-only', jsonSchema: false, jsonObject: false },
  ],
});
after(() => fake.close());

const page = { markdown: '# Acme Rocket\n\nThe Acme Rocket costs **$129.99** and ships in 3 days.', url: 'https://shop.example/rocket' };
const schema = {
  type: 'object',
  properties: { name: { type: 'string' }, price: { type: 'number' } },
  required: ['name', 'price'],
  additionalProperties: false,
};
const good = { name: 'Acme Rocket', price: 129.99 };

async function failure(p: Promise<unknown>): Promise<LlmError> {
  const e = await p.then(() => assert.fail('expected a failure'), (x: unknown) => x);
  assert.ok(e instanceof LlmError, String(e));
  return e;
}

test('json_schema: the schema goes in response_format, page text and prompt reach the model, data comes back', async () => {
  fake.reset();
  fake.enqueue({ content: good });
  const r = await extractJson(client(), { page, schema, prompt: 'Get the product name and price in dollars' });
  assert.deepEqual(r.data, good);
  assert.equal(r.mode, 'json_schema');
  assert.equal(r.repaired, false);
  assert.equal(r.usage.calls, 1);
  const [req] = fake.chatRequests();
  assert.deepEqual(req!.response_format, { type: 'json_schema', json_schema: { name: 'extraction', schema, strict: false } });
  const text = promptText(req!);
  assert.ok(text.includes('The Acme Rocket costs **$129.99** and ships in 3 days.'), 'page text reached the model');
  assert.ok(text.includes('Get the product name and price in dollars'), 'user prompt reached the model');
  assert.ok(text.includes('https://shop.example/rocket'));
  assert.ok(req!.max_tokens! > 0);
});

test('fallback: a model rejecting json_schema gets json_object with the schema in the prompt; the client remembers', async () => {
  fake.reset();
  fake.enqueue({ content: good }, { content: good });
  const c = client('no-json-schema');
  const r = await extractJson(c, { page, schema });
  assert.deepEqual([r.data, r.mode], [good, 'json_object']);
  const sent = fake.chatRequests();
  assert.deepEqual(sent.map((s) => s.response_format?.type), ['json_schema', 'json_object']);
  assert.ok(promptText(sent[1]!).includes(JSON.stringify(schema)), 'schema in the prompt text');
  assert.equal(c.capabilities.jsonSchema, false);
  await extractJson(c, { page, schema });
  assert.deepEqual(fake.chatRequests().map((s) => s.response_format?.type), ['json_schema', 'json_object', 'json_object'], 'no second failed request');
});

test('fallback: a model with neither response format is prompted and its fenced, thinking reply parsed', async () => {
  fake.reset();
  fake.enqueue({ content: '<think>The page says $129.99.</think>\nHere you go:\n```json\n{"name": "Acme Rocket", "price": 129.99}\n```' });
  const r = await extractJson(client('plain-text-only'), { page, schema });
  assert.deepEqual([r.data, r.mode], [good, 'prompt']);
  assert.deepEqual(fake.chatRequests().map((s) => s.response_format?.type), ['json_schema', 'json_object', undefined]);
});

test('capability flag: a model configured without json_schema starts at json_object (no wasted request)', async () => {
  fake.reset();
  fake.enqueue({ content: good });
  const r = await extractJson(client('no-json-schema', { jsonSchema: false }), { page, schema });
  assert.equal(r.mode, 'json_object');
  assert.deepEqual(fake.chatRequests().map((s) => s.response_format?.type), ['json_object']);
});

test('repair: an invalid first reply is sent back with its validation errors, and the fix is accepted', async () => {
  fake.reset();
  fake.enqueue({ content: { name: 'Acme Rocket', price: '$129.99' }, usage: { prompt_tokens: 100, completion_tokens: 10 } }, { content: good, usage: { prompt_tokens: 130, completion_tokens: 9 } });
  const r = await extractJson(client(), { page, schema });
  assert.deepEqual(r.data, good);
  assert.equal(r.repaired, true);
  assert.deepEqual(r.usage, { promptTokens: 230, completionTokens: 19, totalTokens: 249, calls: 2 });
  const repair = fake.chatRequests()[1]!;
  const turns = repair.messages.slice(-2);
  assert.deepEqual(turns[0], { role: 'assistant', content: '{"name":"Acme Rocket","price":"$129.99"}' });
  assert.equal(turns[1]!.role, 'user');
  assert.match(String(turns[1]!.content), /\/price must be number/);
  assert.ok(promptText(repair).includes('ships in 3 days'), 'the repair turn still has the page');
});

test('repair: non-JSON prose is repaired too', async () => {
  fake.reset();
  fake.enqueue({ content: 'The rocket costs $129.99.' }, { content: good });
  const r = await extractJson(client('plain-text-only', { jsonSchema: false, jsonObject: false }), { page, schema });
  assert.deepEqual([r.data, r.repaired], [good, true]);
  assert.match(String(fake.chatRequests()[1]!.messages.at(-1)!.content), /not valid JSON/);
});

test('repair fails → typed 422 CANNOT_CONFORM with the errors and the tokens spent', async () => {
  fake.reset();
  fake.enqueue({ content: { name: 'Acme Rocket' } }, { content: { name: 'Acme Rocket', price: null } });
  const e = await failure(extractJson(client(), { page, schema }));
  assert.deepEqual([e.status, e.code, e.retryable], [422, 'LLM_CANNOT_CONFORM', false]);
  assert.deepEqual((e.details as { errors: string[] }).errors, ['/price must be number']);
  assert.equal(e.usage!.calls, 2);
  assert.equal(fake.chatRequests().length, 2, 'exactly one repair attempt');
});

test('invalid user schema → typed 422 before any model call', async () => {
  fake.reset();
  const e = await failure(extractJson(client(), { page, schema: { type: 'object', properties: { a: { type: 'bogus' } } } }));
  assert.deepEqual([e.status, e.code], [422, 'LLM_INVALID_SCHEMA']);
  assert.equal(fake.requests.length, 0);
  await assert.rejects(extractJson(client(), { page }), (x: unknown) => x instanceof LlmError && x.status === 400);
});

test('output limit: a reply cut at max tokens is OUTPUT_LIMIT at once (repeating it would be cut again)', async () => {
  fake.reset();
  fake.enqueue({ content: '{"name": "Acme Rocket", "pri', finishReason: 'length' });
  const e = await failure(extractJson(client(), { page, schema }));
  assert.deepEqual([e.status, e.code], [422, 'LLM_OUTPUT_LIMIT']);
  assert.equal(fake.chatRequests().length, 1);
});

test('refusal → typed REFUSED', async () => {
  fake.reset();
  fake.enqueue({ content: '', refusal: "I can't help with that." });
  const e = await failure(extractJson(client(), { page, schema }));
  assert.equal(e.code, 'LLM_REFUSED');
});

test('prompt only (no schema): json_object, any JSON accepted', async () => {
  fake.reset();
  fake.enqueue({ content: { product: 'Acme Rocket', dollars: 129.99 } });
  const r = await extractJson(client(), { page, prompt: 'What is sold here and for how much?' });
  assert.deepEqual(r.data, { product: 'Acme Rocket', dollars: 129.99 });
  assert.equal(r.mode, 'json_object');
  assert.ok(promptText(fake.lastChat()!).includes('What is sold here and for how much?'));
});

test('array root: wrapped as {result} for the provider, unwrapped for the user', async () => {
  fake.reset();
  fake.enqueue({ content: { result: [good] } });
  const r = await extractJson(client(), { page, schema: { type: 'array', items: schema } });
  assert.deepEqual(r.data, [good]);
  assert.equal((fake.lastChat()!.response_format!.json_schema!.schema as { type: string }).type, 'object');
});

test('streaming extraction: pieces arrive through onDelta, the joined JSON is validated', async () => {
  fake.reset();
  fake.enqueue({ content: good });
  const pieces: string[] = [];
  const r = await extractJson(client(), { page, schema, stream: true, onDelta: (p) => pieces.push(p) });
  assert.deepEqual(r.data, good);
  assert.ok(pieces.length > 1);
  assert.equal(fake.lastChat()!.stream, true);
});

test('a page larger than the context is truncated, with a warning, and the request fits', async () => {
  fake.reset();
  fake.enqueue({ content: good });
  const huge = { markdown: `# Catalogue\n\n${'Rocket parts and fuel for sale. '.repeat(20_000)}` };
  const r = await extractJson(client('fake-model', { contextWindowTokens: 4_096, maxOutputTokens: 512 }), { page: huge, schema });
  assert.equal(r.truncatedInput, true);
  assert.match(r.warning!, /truncated/);
  const req = fake.lastChat()!;
  assert.equal(req.max_tokens, 512);
  const { countMessageTokens } = await import('./tokens');
  assert.ok(countMessageTokens(req.messages) + 512 <= 4_096 * 0.9, 'prompt + reply within the window less the margin');
});

test('repair of a context-filling page: the page is re-fitted so the repair request still fits', async () => {
  fake.reset();
  const longWrongReply = JSON.stringify({ name: 'Acme Rocket '.repeat(150), price: 'unknown' }); // ≈ 450 tokens
  fake.enqueue({ content: longWrongReply }, { content: good });
  const huge = { markdown: `# Catalogue\n\n${'Rocket parts and fuel for sale. '.repeat(20_000)}` };
  const r = await extractJson(client('fake-model', { contextWindowTokens: 4_096, maxOutputTokens: 512 }), { page: huge, schema });
  assert.deepEqual([r.data, r.repaired], [good, true]);
  const { countMessageTokens } = await import('./tokens');
  const [first, repair] = fake.chatRequests();
  assert.equal(repair!.messages.at(-2)!.content, longWrongReply);
  for (const req of [first!, repair!]) assert.ok(countMessageTokens(req.messages) + 512 <= 4_096 * 0.9, `${countMessageTokens(req.messages)}`);
});
