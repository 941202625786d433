import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, test } from 'node:test';
import { createLlmClient } from './client';
import { resolveLlmConfig } from './config';
import { LlmError } from './errors';
import { retryAfterMs } from './provider-errors';
import { fakeProvider } from './test-helpers';

const { fake, client } = await fakeProvider({ models: ['fake-model', { id: 'new-openai-style' }], embeddingDimensions: 4 });
after(() => fake.close());
const hi = [{ role: 'user' as const, content: 'hi' }];

async function failure(p: Promise<unknown>): Promise<LlmError> {
  const e = await p.then(
    () => assert.fail('expected the call to fail'),
    (x: unknown) => x,
  );
  assert.ok(e instanceof LlmError, `not an LlmError: ${String(e)}`);
  return e;
}

test('errors: 429 with Retry-After is retryable with that delay, and the client does not retry by itself', async () => {
  fake.reset();
  fake.enqueue({ error: { status: 429 }, retryAfter: 2 }, { content: 'would be the retry' });
  const e = await failure(client().chat({ messages: hi }));
  assert.equal(e.code, 'LLM_RATE_LIMITED');
  assert.equal(e.retryable, true);
  assert.equal(e.retryAfterMs, 2_000);
  assert.equal(e.providerStatus, 429);
  assert.equal(fake.chatRequests().length, 1, 'exactly one request: Temporal owns retries');
  // OpenAI's millisecond header wins over the seconds one.
  fake.reset();
  fake.enqueue({ error: { status: 429 }, retryAfter: 2, retryAfterMs: 350 });
  assert.equal((await failure(client().chat({ messages: hi }))).retryAfterMs, 350);
  // A quota error is a 429 that waiting does not fix.
  fake.enqueue({ error: { status: 429, code: 'insufficient_quota', type: 'insufficient_quota', message: 'You exceeded your current quota' } });
  const q = await failure(client().chat({ messages: hi }));
  assert.equal(q.retryable, false);
});

test('errors: 5xx retryable, one request; 400 not retryable, the provider message kept', async () => {
  fake.reset();
  fake.enqueue({ error: { status: 503 } });
  const e5 = await failure(client().chat({ messages: hi }));
  assert.deepEqual([e5.code, e5.retryable, e5.status], ['LLM_PROVIDER_ERROR', true, 502]);
  fake.enqueue({ error: { status: 400, message: "Invalid value for 'temperature'", param: 'temperature' } });
  const e4 = await failure(client().chat({ messages: hi }));
  assert.deepEqual([e4.code, e4.retryable, e4.kind], ['LLM_PROVIDER_REJECTED', false, 'BAD_GATEWAY']);
  assert.match(e4.message, /Invalid value for 'temperature'/);
  assert.equal(fake.chatRequests().length, 2);
  fake.enqueue({ error: { status: 400, message: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.", code: 'context_length_exceeded' } });
  assert.equal((await failure(client().chat({ messages: hi }))).code, 'LLM_CONTEXT_EXCEEDED');
});

test('errors: bad credentials name OPENAI_API_KEY and never echo the key', async () => {
  fake.reset();
  fake.enqueue({ error: { status: 401, message: 'Incorrect API key provided: sk-live-abcdef123456. You can find your API key at …', code: 'invalid_api_key' } });
  const e = await failure(client('fake-model', {}, { OPENAI_API_KEY: 'sk-live-abcdef123456' }).chat({ messages: hi }));
  assert.equal(e.retryable, false);
  assert.match(e.message, /OPENAI_API_KEY/);
  assert.ok(!JSON.stringify(e.toJSON()).includes('abcdef123456'), JSON.stringify(e.toJSON()));
  fake.enqueue({ error: { status: 404, message: 'The model `nope` does not exist' } });
  assert.match((await failure(client('nope').chat({ messages: hi }))).message, /MODEL_NAME/);
});

test('errors: timeout, refused connection and reset connection are retryable; an abort rethrows its reason', async () => {
  fake.reset();
  fake.enqueue({ hang: true });
  const t = await failure(client('fake-model', { requestTimeoutMs: 300 }).chat({ messages: hi }));
  assert.deepEqual([t.code, t.retryable], ['LLM_TIMEOUT', true]);

  const closed = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
  const cfg = resolveLlmConfig({ OPENAI_BASE_URL: `http://127.0.0.1:${closed}/v1`, MODEL_NAME: 'm' });
  assert.ok(cfg.ok);
  const c = await failure(createLlmClient(cfg.config).chat({ messages: hi }));
  assert.deepEqual([c.code, c.retryable], ['LLM_CONNECTION_FAILED', true]);

  fake.enqueue({ drop: true });
  const d = await failure(client().chat({ messages: hi }));
  assert.deepEqual([d.code, d.retryable], ['LLM_CONNECTION_FAILED', true]);

  fake.enqueue({ hang: true });
  const ac = new AbortController();
  const reason = new Error('activity cancelled');
  setTimeout(() => ac.abort(reason), 100);
  await assert.rejects(client().chat({ messages: hi, signal: ac.signal }), (e) => e === reason);
});

test('retry-after parsing: ms header, seconds, HTTP date, garbage', () => {
  assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '120.5' })), 121);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': '3' })), 3_000);
  const now = Date.parse('2025-01-01T00:00:00Z');
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:10 GMT' }), now), 10_000);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' })), undefined);
  assert.equal(retryAfterMs(new Headers()), undefined);
});

test('max_tokens: a server that wants max_completion_tokens is answered once with it, then remembered', async () => {
  fake.reset();
  fake.setHandler((req) =>
    req.max_tokens !== undefined
      ? { error: { status: 400, message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", param: 'max_tokens', code: 'unsupported_parameter' } }
      : undefined,
  );
  try {
    const c = client('new-openai-style');
    const r = await c.chat({ messages: hi, maxOutputTokens: 50 });
    assert.equal(r.content, 'This is a reply from the fake model.');
    await c.chat({ messages: hi, maxOutputTokens: 50 });
    const sent = fake.chatRequests();
    assert.equal(sent.length, 3);
    assert.deepEqual(sent.map((s) => [s.max_tokens, s.max_completion_tokens]), [[50, undefined], [undefined, 50], [undefined, 50]]);
  } finally {
    fake.setHandler(undefined);
  }
});

test('tools: definitions and tool_choice go out; calls come back parsed, streamed or not', async () => {
  fake.reset();
  const tools = [
    { name: 'scrape', description: 'Scrape a URL', parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } },
    { name: 'search', description: 'Search the web', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
  ];
  fake.enqueue({ toolCalls: [{ name: 'scrape', arguments: { url: 'https://a.example/' } }] }, { toolCalls: [{ name: 'scrape', arguments: { url: 'https://b.example/long/path/to/stream' }, id: 'call_x' }] });
  const r = await client().chat({ messages: hi, tools, toolChoice: 'required' });
  assert.equal(r.finishReason, 'tool_calls');
  assert.deepEqual(r.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]), [['scrape', { url: 'https://a.example/' }]]);
  const s = await client().chat({ messages: hi, tools, toolChoice: { name: 'scrape' }, stream: true });
  assert.deepEqual(s.toolCalls, [{ id: 'call_x', name: 'scrape', arguments: '{"url":"https://b.example/long/path/to/stream"}' }]);
  const [a, b] = fake.chatRequests();
  assert.equal(a!.tool_choice, 'required');
  // A named choice is sent as that tool alone with 'required' (llama.cpp's server ignores the named form).
  assert.equal(b!.tool_choice, 'required');
  assert.deepEqual(b!.tools!.map((t) => t.function.name), ['scrape']);
  // A server that enforced nothing and called another tool: that call was not offered, so it is dropped.
  fake.enqueue({ toolCalls: [{ name: 'search', arguments: { query: 'x' } }] });
  assert.deepEqual((await client().chat({ messages: hi, tools, toolChoice: { name: 'scrape' } })).toolCalls, []);
  fake.reset();
  assert.deepEqual(a!.tools![0], { type: 'function', function: tools[0] });
  // A tool turn goes back in the protocol's shape.
  await client().chat({ messages: [...hi, { role: 'assistant', content: null, toolCalls: r.toolCalls }, { role: 'tool', toolCallId: r.toolCalls[0]!.id, content: 'page text' }] });
  const m = fake.lastChat()!.messages;
  assert.equal(m[1]!.tool_calls![0]!.function.name, 'scrape');
  assert.deepEqual([m[2]!.role, m[2]!.tool_call_id, m[2]!.content], ['tool', r.toolCalls[0]!.id, 'page text']);
});

test('streaming: pieces reach onDelta, the text and usage match the non-streamed reply', async () => {
  fake.reset();
  const text = 'A streamed answer that is long enough to arrive in several server-sent events.';
  fake.enqueue({ content: text, usage: { prompt_tokens: 11, completion_tokens: 17 } });
  const pieces: string[] = [];
  const r = await client().chat({ messages: hi, stream: true, onDelta: (p) => pieces.push(p) });
  assert.ok(pieces.length > 2);
  assert.equal(pieces.join(''), text);
  assert.equal(r.content, text);
  assert.equal(r.finishReason, 'stop');
  assert.deepEqual(r.usage, { promptTokens: 11, completionTokens: 17, totalTokens: 28, calls: 1 });
  assert.equal(r.usageEstimated, false);
  assert.equal(fake.lastChat()!.stream, true);
});

test('embeddings: vectors in input order; without MODEL_EMBEDDING_NAME a typed 400 naming it', async () => {
  fake.reset();
  const c = client('fake-model', {}, { MODEL_EMBEDDING_NAME: 'fake-embed' });
  const r = await c.embed(['alpha', 'beta', 'alpha']);
  assert.equal(r.vectors.length, 3);
  assert.equal(r.vectors[0]!.length, 4);
  assert.deepEqual(r.vectors[0], r.vectors[2]);
  assert.notDeepEqual(r.vectors[0], r.vectors[1]);
  assert.equal(r.usage.calls, 1);
  const e = await failure(client().embed(['x']));
  assert.deepEqual([e.status, e.code, (e.details as { variable: string }).variable], [400, 'FEATURE_NOT_AVAILABLE', 'MODEL_EMBEDDING_NAME']);
});
