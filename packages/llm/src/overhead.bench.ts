/**
 * Per-call overhead of this package against the local fake provider (no model latency):
 * `node --import tsx packages/llm/src/overhead.bench.ts [calls]`. Compares a bare fetch of the
 * same request with the client (`chat`) and with a full `extractJson` (prompt building with token
 * counting, schema compiled once and validated). Not part of `npm test` or `npm run bench`.
 */
import { startFakeOpenAI } from '@wds/test-utils/fake-openai';
import { createLlmClient } from './client';
import { resolveLlmConfig } from './config';
import { extractJson } from './extract';

const N = Number(process.argv[2] ?? 500);
const fake = await startFakeOpenAI();
const cfg = resolveLlmConfig({ OPENAI_BASE_URL: fake.baseUrl, MODEL_NAME: 'fake-model' });
if (!cfg.ok) throw new Error(cfg.message);
const client = createLlmClient(cfg.config);
const schema = { type: 'object', properties: { title: { type: 'string' }, price: { type: 'number' } }, required: ['title', 'price'] };
const markdown = `# Product\n\n${'Some product description text with details. '.repeat(150)}`; // ≈ 1.2k tokens
const messages = [{ role: 'system' as const, content: 'Extract.' }, { role: 'user' as const, content: markdown }];
const body = JSON.stringify({ model: 'fake-model', messages, response_format: { type: 'json_schema', json_schema: { name: 'extraction', schema } } });

const runs: Record<string, () => Promise<unknown>> = {
  'bare fetch': async () => (await fetch(`${fake.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json(),
  'client.chat': () => client.chat({ messages, responseFormat: { type: 'json_schema', name: 'extraction', schema } }),
  extractJson: () => extractJson(client, { page: { markdown }, schema }),
};

const results: Record<string, { sequentialMs: number; parallelMs: number; cpuMsPerCall: number }> = {};
for (const round of [0, 1]) {
  for (const [name, fn] of Object.entries(runs)) {
    for (let i = 0; i < 50; i++) await fn();
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await fn();
    const sequentialMs = (performance.now() - t0) / N;
    const cpu0 = process.cpuUsage();
    const t1 = performance.now();
    await Promise.all(Array.from({ length: N }, () => fn()));
    const parallelMs = performance.now() - t1;
    const cpu = process.cpuUsage(cpu0);
    if (round === 1) results[name] = { sequentialMs, parallelMs, cpuMsPerCall: (cpu.user + cpu.system) / 1000 / N };
  }
}
await fake.close();
console.log(`${N} calls each (second round; the fake server runs in this process, so CPU includes its share)`);
for (const [name, r] of Object.entries(results)) {
  console.log(`${name.padEnd(12)} sequential ${r.sequentialMs.toFixed(3)} ms/call   ${N} concurrent ${r.parallelMs.toFixed(0)} ms   CPU ${r.cpuMsPerCall.toFixed(3)} ms/call`);
}
