import { startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions } from '@wds/test-utils/fake-openai';
import { createLlmClient, type LlmClient } from './client';
import { resolveLlmConfig, type LlmEnv, type LlmSettings } from './config';

/** A fake provider and a production client pointed at it over HTTP (test files only). */
export async function fakeProvider(
  fakeOptions: FakeOpenAIOptions = {},
): Promise<{ fake: FakeOpenAI; client: (model?: string, settings?: LlmSettings, env?: LlmEnv) => LlmClient }> {
  const fake = await startFakeOpenAI(fakeOptions);
  const client = (model = 'fake-model', settings: LlmSettings = {}, env: LlmEnv = {}) => {
    const r = resolveLlmConfig({ OPENAI_BASE_URL: fake.baseUrl, MODEL_NAME: model, ...env }, settings);
    if (!r.ok) throw new Error(r.message);
    return createLlmClient(r.config);
  };
  return { fake, client };
}
