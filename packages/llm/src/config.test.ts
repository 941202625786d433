import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startFakeOpenAI } from '@wds/test-utils/fake-openai';
import { createLlmClient } from './client';
import { notConfiguredError, resolveLlmConfig } from './config';
import { modelLimits } from './models';

test('config: nothing set → not configured, naming OPENAI_API_KEY; the API error is 400 FEATURE_NOT_AVAILABLE', () => {
  const r = resolveLlmConfig({});
  assert.equal(r.ok, false);
  if (r.ok) return;
  assert.equal(r.variable, 'OPENAI_API_KEY');
  assert.match(r.message, /OPENAI_API_KEY/);
  assert.match(r.message, /OLLAMA_BASE_URL/);
  const e = notConfiguredError(r);
  assert.equal(e.status, 400);
  assert.equal(e.code, 'FEATURE_NOT_AVAILABLE');
  assert.deepEqual(e.toBody(), { success: false, error: r.message, code: 'FEATURE_NOT_AVAILABLE', details: { variable: 'OPENAI_API_KEY' } });
  // Blank values count as unset (compose files often pass VAR= ).
  assert.equal(resolveLlmConfig({ OPENAI_API_KEY: '  ', MODEL_NAME: '' }).ok, false);
});

test('config: OpenAI itself — key required, gpt-4o-mini and text-embedding-3-small by default, known limits', () => {
  const r = resolveLlmConfig({ OPENAI_API_KEY: 'sk-test' });
  assert.ok(r.ok);
  assert.equal(r.config.provider, 'openai');
  assert.equal(r.config.baseUrl, 'https://api.openai.com/v1');
  assert.equal(r.config.model, 'gpt-4o-mini');
  assert.equal(r.config.embeddingModel, 'text-embedding-3-small');
  assert.deepEqual(r.config.limits, { contextWindow: 128_000, maxOutput: 16_384 });
  const noKey = resolveLlmConfig({ OPENAI_BASE_URL: 'https://api.openai.com/v1/' });
  assert.ok(!noKey.ok && noKey.variable === 'OPENAI_API_KEY');
});

test('config: another OpenAI-compatible server — key optional, MODEL_NAME required, URL checked', () => {
  const r = resolveLlmConfig({ OPENAI_BASE_URL: 'http://vllm:8000/v1/', MODEL_NAME: 'Qwen/Qwen2.5-7B-Instruct' }, { contextWindowTokens: 65_536 });
  assert.ok(r.ok);
  assert.equal(r.config.provider, 'openai-compatible');
  assert.equal(r.config.baseUrl, 'http://vllm:8000/v1');
  assert.equal(r.config.apiKey, undefined);
  assert.equal(r.config.embeddingModel, undefined);
  assert.deepEqual(r.config.limits, { contextWindow: 65_536, maxOutput: 4_096 });
  const noModel = resolveLlmConfig({ OPENAI_BASE_URL: 'http://vllm:8000/v1', OPENAI_API_KEY: 'k' });
  assert.ok(!noModel.ok && noModel.variable === 'MODEL_NAME');
  const badUrl = resolveLlmConfig({ OPENAI_BASE_URL: 'vllm:8000', MODEL_NAME: 'm' });
  assert.ok(!badUrl.ok && badUrl.variable === 'OPENAI_BASE_URL');
});

test("config: Ollama — Firecrawl's /api form maps to the OpenAI-compatible /v1; MODEL_NAME required", () => {
  for (const url of ['http://localhost:11434/api', 'http://localhost:11434', 'http://localhost:11434/v1/']) {
    const r = resolveLlmConfig({ OLLAMA_BASE_URL: url, MODEL_NAME: 'deepseek-r1:7b', MODEL_EMBEDDING_NAME: 'nomic-embed-text' });
    assert.ok(r.ok, url);
    assert.equal(r.config.provider, 'ollama');
    assert.equal(r.config.baseUrl, 'http://localhost:11434/v1');
    assert.equal(r.config.embeddingModel, 'nomic-embed-text');
    assert.deepEqual(r.config.limits, { contextWindow: 32_768, maxOutput: 4_096 });
  }
  const r = resolveLlmConfig({ OLLAMA_BASE_URL: 'http://localhost:11434/api' });
  assert.ok(!r.ok && r.variable === 'MODEL_NAME');
});

test('model limits: known families, router prefixes, overrides; output never above the window', () => {
  assert.deepEqual(modelLimits('gpt-4.1-mini'), { contextWindow: 1_047_576, maxOutput: 32_768 });
  assert.deepEqual(modelLimits('openai/gpt-4o'), { contextWindow: 128_000, maxOutput: 16_384 });
  assert.deepEqual(modelLimits('o3-mini'), { contextWindow: 200_000, maxOutput: 100_000 });
  assert.deepEqual(modelLimits('llama3.1:8b'), { contextWindow: 32_768, maxOutput: 4_096 });
  assert.deepEqual(modelLimits('llama3.1:8b', { contextWindow: 2_048 }), { contextWindow: 2_048, maxOutput: 2_048 });
});

test('client: configuration comes only from the config — OpenAI SDK env variables are not picked up', async (t) => {
  const fake = await startFakeOpenAI({ apiKey: 'sk-right-key' });
  t.after(() => fake.close());
  const saved = { ...process.env };
  t.after(() => {
    for (const k of ['OPENAI_ORG_ID', 'OPENAI_PROJECT_ID', 'OPENAI_BASE_URL', 'OPENAI_API_KEY']) delete process.env[k];
    Object.assign(process.env, saved);
  });
  Object.assign(process.env, { OPENAI_ORG_ID: 'org-from-env', OPENAI_PROJECT_ID: 'proj-from-env', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'sk-from-env' });
  const r = resolveLlmConfig({ OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-right-key', MODEL_NAME: 'fake-model' });
  assert.ok(r.ok);
  const res = await createLlmClient(r.config).chat({ messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(res.content, 'This is a reply from the fake model.');
  const h = fake.requests[0]!.headers;
  assert.equal(h['openai-organization'], undefined);
  assert.equal(h['openai-project'], undefined);
  assert.equal(h.authorization, 'Bearer sk-right-key');
});
