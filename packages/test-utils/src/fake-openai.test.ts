import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { promptText, sampleFromSchema, startFakeOpenAI } from './fake-openai';

// The fake is checked at the protocol level (raw HTTP), since other tests trust it to be OpenAI.
const fake = await startFakeOpenAI({ models: ['m1', { id: 'legacy', jsonSchema: false, tools: false }], apiKey: 'sk-test' });
after(() => fake.close());
const post = (path: string, body: unknown, key = 'sk-test') =>
  fetch(`${fake.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
const user = [{ role: 'user', content: 'hello' }];
const json = async (r: Response | Promise<Response>): Promise<any> => (await r).json();

test('fake: chat completion shape, usage, request log, auth', async () => {
  fake.reset();
  const res = await post('/chat/completions', { model: 'm1', messages: user });
  assert.equal(res.status, 200);
  const body = await json(res);
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.choices[0].message.role, 'assistant');
  assert.equal(body.choices[0].finish_reason, 'stop');
  assert.equal(body.usage.total_tokens, body.usage.prompt_tokens + body.usage.completion_tokens);
  assert.equal(fake.requests.length, 1);
  assert.equal(promptText(fake.lastChat()!), 'hello');
  const denied = await post('/chat/completions', { model: 'm1', messages: user }, 'sk-wrong');
  assert.equal(denied.status, 401);
  assert.equal((await json(denied)).error.code, 'invalid_api_key');
  const models = await json(fetch(`${fake.baseUrl}/models`, { headers: { authorization: 'Bearer sk-test' } }));
  assert.deepEqual(models.data.map((m: { id: string }) => m.id), ['m1', 'legacy']);
});

test('fake: default replies satisfy json_schema, call the forced tool; declared capabilities are enforced', async () => {
  fake.reset();
  const schema = { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' }, minItems: 2 }, kind: { enum: ['a', 'b'] }, at: { type: 'string', format: 'date-time' } }, required: ['tags'] };
  const r = await json(post('/chat/completions', { model: 'm1', messages: user, response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }));
  assert.deepEqual(JSON.parse(r.choices[0].message.content), { tags: ['example', 'example'], kind: 'a', at: '2024-01-01T00:00:00Z' });
  const tools = [{ type: 'function', function: { name: 'go', parameters: { type: 'object', properties: { url: { type: 'string', format: 'uri' } } } } }];
  const t = await json(post('/chat/completions', { model: 'm1', messages: user, tools, tool_choice: 'required' }));
  assert.equal(t.choices[0].finish_reason, 'tool_calls');
  assert.deepEqual(JSON.parse(t.choices[0].message.tool_calls[0].function.arguments), { url: 'https://example.com/' });
  const noSchema = await post('/chat/completions', { model: 'legacy', messages: user, response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } });
  assert.equal(noSchema.status, 400);
  assert.equal((await json(noSchema)).error.param, 'response_format');
  assert.equal((await post('/chat/completions', { model: 'legacy', messages: user, tools })).status, 400);
  assert.equal(sampleFromSchema({ $ref: '#/$defs/N', $defs: { N: { type: 'integer', minimum: 5 } } }), 5);
});

test('fake: queued errors with Retry-After, replies cut at max_tokens, dropped connections', async () => {
  fake.reset();
  fake.enqueue({ error: { status: 429 }, retryAfter: 7, retryAfterMs: 7_000 }, { content: 'x'.repeat(400) }, { drop: true });
  const limited = await post('/chat/completions', { model: 'm1', messages: user });
  assert.equal(limited.status, 429);
  assert.deepEqual([limited.headers.get('retry-after'), limited.headers.get('retry-after-ms')], ['7', '7000']);
  assert.equal((await json(limited)).error.type, 'rate_limit_exceeded');
  const cut = await json(post('/chat/completions', { model: 'm1', messages: user, max_tokens: 10 }));
  assert.deepEqual([cut.choices[0].message.content.length, cut.choices[0].finish_reason], [40, 'length']);
  await assert.rejects(post('/chat/completions', { model: 'm1', messages: user }));
  assert.equal(fake.pending(), 0);
});

test('fake: SSE streaming with usage chunk and [DONE]', async () => {
  fake.reset();
  fake.enqueue({ content: 'streamed reply text that spans chunks' });
  const res = await post('/chat/completions', { model: 'm1', messages: user, stream: true, stream_options: { include_usage: true } });
  assert.match(res.headers.get('content-type')!, /text\/event-stream/);
  const events = (await res.text()).split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
  assert.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
  assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), 'streamed reply text that spans chunks');
  assert.equal(chunks.at(-2).choices[0].finish_reason, 'stop');
  assert.deepEqual(chunks.at(-1).choices, []);
  assert.ok(chunks.at(-1).usage.completion_tokens > 0);
});

test('fake: delays and the concurrency counter; handler sees each request', async () => {
  fake.reset();
  const seen: number[] = [];
  fake.setHandler((_req, ctx) => {
    seen.push(ctx.index);
    return { content: 'ok', delayMs: 150 };
  });
  try {
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 5 }, () => post('/chat/completions', { model: 'm1', messages: user }).then((r) => r.json())));
    assert.ok(Date.now() - t0 >= 140);
    assert.equal(fake.maxInFlight, 5);
    assert.equal(fake.inFlight, 0);
    assert.deepEqual(seen.sort(), [0, 1, 2, 3, 4]);
  } finally {
    fake.setHandler(undefined);
  }
});

test('fake: embeddings as floats or base64, deterministic', async () => {
  fake.reset();
  const f = await json(post('/embeddings', { model: 'e', input: ['a', 'b'] }));
  assert.equal(f.data.length, 2);
  assert.equal(f.data[0].embedding.length, 8);
  const b = await json(post('/embeddings', { model: 'e', input: 'a', encoding_format: 'base64' }));
  const buf = Buffer.from(b.data[0].embedding, 'base64');
  const floats = Array.from(new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)));
  floats.forEach((x, i) => assert.ok(Math.abs(x - f.data[0].embedding[i]) < 1e-6));
});
