import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { extractJson } from './extract';
import { summarize } from './formats';
import { contextCounts } from './provider-errors';
import { fakeProvider } from './test-helpers';
import { countMessageTokens } from './tokens';

// The server's tokenizer and WDS's disagree (llama-server with SmolLM2 counted a page 22% higher
// than o200k): the client learns the server's count from its refusal and from replies near the
// window, and builds the next prompt from that.
const { fake, client } = await fakeProvider();
after(() => fake.close());

const WINDOW = 4_096;
const longPage = { url: 'https://example.com/manual', markdown: Array.from({ length: 600 }, (_, i) => `Section ${i + 1}: descale the kettle every ${i + 2} weeks.`).join('\n\n') };
const userText = (i: number) => String(fake.chatRequests()[i]!.messages.at(-1)!.content);
const tokensOf = (i: number) => countMessageTokens(fake.chatRequests()[i]!.messages);

test('contextCounts reads the counts llama.cpp, OpenAI and vLLM state', () => {
  assert.deepEqual(contextCounts('request (4186 tokens) exceeds the available context size (4096 tokens), try increasing it'), { promptTokens: 4186, contextTokens: 4096 });
  assert.deepEqual(contextCounts("This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages."), { contextTokens: 8192, promptTokens: 9000 });
  assert.deepEqual(contextCounts("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion)."), { contextTokens: 4096, promptTokens: 4000, requestedTokens: 5000 });
  assert.deepEqual(contextCounts('prompt is too long'), {});
});

test('a refusal stating the server\'s count: the page is cut to it and sent once more; the next prompt fits at once', async () => {
  fake.reset();
  const c = client('local-model', { contextWindowTokens: WINDOW, maxOutputTokens: 256 });
  assert.equal(c.limits.contextWindow, WINDOW);
  // The first request is refused with the server's count (above ours, as SmolLM2's is); the rebuilt one is answered.
  fake.enqueue({ error: { status: 400, message: 'request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it' } }, { content: 'A kettle manual.' });
  const r = await summarize(c, longPage);
  assert.equal(r.text, 'A kettle manual.');
  assert.equal(fake.chatRequests().length, 2, 'refused once, sent once more');
  const refusedTokens = tokensOf(0);
  assert.ok(tokensOf(1) < refusedTokens, `the second prompt is smaller (${tokensOf(1)} < ${refusedTokens})`);
  // 5000 server tokens for `refusedTokens` of ours: the rebuilt prompt, scaled, fits the window with its reply.
  const scale = 5000 / refusedTokens;
  assert.ok(tokensOf(1) * scale + 256 <= WINDOW, `scaled ${Math.round(tokensOf(1) * scale)} + 256 within ${WINDOW}`);
  assert.ok(c.limits.contextWindow < WINDOW, `the client's limits narrowed: ${c.limits.contextWindow}`);
  assert.match(String(r.warning), /truncated/, 'the cut is reported');
  assert.ok(userText(1).includes('Section 1:'), 'the page head is kept');

  // The same client now builds a prompt that fits first time.
  fake.reset();
  fake.enqueue({ content: 'Again.' });
  await summarize(c, longPage);
  assert.equal(fake.chatRequests().length, 1);
});

test('a second refusal is the caller\'s error; a refusal without counts narrows by a step', async () => {
  fake.reset();
  const c = client('local-model', { contextWindowTokens: WINDOW, maxOutputTokens: 256 });
  fake.enqueue({ error: { status: 400, message: 'prompt is too long' } }, { error: { status: 400, message: 'prompt is too long' } });
  await assert.rejects(summarize(c, longPage), (e: { code?: string }) => e.code === 'LLM_CONTEXT_EXCEEDED');
  assert.equal(fake.chatRequests().length, 2, 'one retry, not a loop');
  assert.ok(tokensOf(1) < tokensOf(0));
});

test('json extraction: a refused rung is rebuilt to the server\'s count on the same rung', async () => {
  fake.reset();
  const c = client('local-model', { contextWindowTokens: WINDOW, maxOutputTokens: 256 });
  fake.enqueue({ error: { status: 400, message: 'request (4700 tokens) exceeds the available context size (4096 tokens)' } }, { content: { name: 'Kettle' } });
  const r = await extractJson(c, { page: longPage, schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } });
  assert.deepEqual(r.data, { name: 'Kettle' });
  const sent = fake.chatRequests();
  assert.equal(sent.length, 2);
  assert.equal(sent[0]!.response_format?.type, sent[1]!.response_format?.type, 'the same rung');
  assert.ok(tokensOf(1) < tokensOf(0));
  assert.equal(r.truncatedInput, true);
});

test('a reply near the window whose usage counts more than ours narrows the fit; one far from it does not count again', async () => {
  fake.reset();
  const c = client('local-model', { contextWindowTokens: WINDOW, maxOutputTokens: 256 });
  fake.enqueue({ content: 'short', usage: { prompt_tokens: 40 } });
  await summarize(c, { url: 'https://example.com/a', markdown: 'A short page about kettles.' });
  assert.equal(c.limits.contextWindow, WINDOW, 'a small prompt says nothing about the tokenizer');
  fake.enqueue({ content: 'long', usage: { prompt_tokens: 4_000 } });
  await summarize(c, longPage);
  const ours = tokensOf(1);
  assert.ok(ours < 4_000);
  assert.equal(c.limits.contextWindow, Math.floor(WINDOW / (4_000 / ours)));
});
