import { loadavg } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { connectDb } from '@wds/db';
import { html, startFakeOpenAI, startFixtureSite, type FakeChatRequest } from '@wds/test-utils';
import { profileNodeArgs, profileWindow } from './profile';
import { startBenchStack } from './stack';
import { cpuByPid, cpuUsedBetween, percentile, round, writeResult } from './stats';

/**
 * Issue 17: N agents (default 100) in parallel, S steps each (default 20), a fake model answering
 * in 200 ms, each step scraping a fixture page (the last one finishes). Per step, from the rows the
 * activities write: platform overhead = step wall time (previous step's end → this step's last
 * tool row) − model latency − tool time. Also the total against the ideal (the model and tool time
 * alone), Temporal and Postgres CPU per step, and every workflow run's history length.
 * Target: overhead p50 ≤ 50 ms, every history < 10,000 events.
 */
const AGENTS = Number(process.env.BENCH_AGENTS ?? 100);
const STEPS = Number(process.env.BENCH_AGENT_STEPS ?? 20);
const MODEL_MS = Number(process.env.BENCH_AGENT_MODEL_MS ?? 200);

const agentOf = (r: FakeChatRequest) => Number(/agent (\d+)/.exec(String(r.messages.find((m) => m.role === 'user')?.content ?? ''))?.[1] ?? 0);

export async function runAgentBench() {
  const site = await startFixtureSite();
  for (let a = 0; a < AGENTS; a++) {
    for (let s = 1; s < STEPS; s++) site.route(`/a${a}/p${s}`, html(`<html><head><title>Agent ${a} page ${s}</title></head><body><main><h1>Page ${s}</h1><p>${'Some text about products. '.repeat(40)}</p></main></body></html>`));
  }
  // Model calls per agent: its step. (Counting the transcript's assistant turns would stop at the
  // transcript window the agent sends, and no agent would ever finish.)
  const calls = new Map<number, number>();
  const model = await startFakeOpenAI({
    delayMs: MODEL_MS,
    handler: (r) => {
      const a = agentOf(r);
      const step = (calls.get(a) ?? 0) + 1;
      calls.set(a, step);
      if (step >= STEPS) return { toolCalls: [{ name: 'finish', arguments: { data: { agent: a, steps: step } } }] };
      return { toolCalls: [{ name: 'scrape', arguments: { url: site.url(`/a${a}/p${step}`) } }] };
    },
  });
  const stack = await startBenchStack({
    temporalInMemory: process.env.BENCH_TEMPORAL_MEMORY === '1',
    nodeArgs: profileNodeArgs(),
    env: {
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_API_KEY: 'sk-bench-not-a-secret',
      MODEL_NAME: 'fake-model',
      WDS_LLM_CONCURRENCY: String(AGENTS),
      WDS_FETCH_CONCURRENCY: String(AGENTS),
    },
  });
  const dbh = connectDb(stack.databaseUrl, { max: 2 });
  try {
    const load = loadavg();
    const cpu0 = cpuByPid(stack.roles);
    const prof = await profileWindow({ api: stack.api, worker: stack.worker });
    const t0 = performance.now();
    const ids = await Promise.all(
      Array.from({ length: AGENTS }, async (_, a) => {
        const res = await fetch(`${stack.base}/v2/agent`, { method: 'POST', headers: stack.headers, body: JSON.stringify({ prompt: `Benchmark agent ${a}: read the pages`, maxCredits: 1_000_000 }) });
        const body = (await res.json()) as { id: string };
        if (!body.id) throw new Error(`start failed: ${JSON.stringify(body)}`);
        return body.id;
      }),
    );
    const pending = new Set(ids);
    const failed: string[] = [];
    // Polled once a second: 100 status reads every 250 ms cost the API and Postgres more CPU than the agents' steps.
    while (pending.size) {
      await new Promise((r) => setTimeout(r, 1_000));
      for (const id of [...pending]) {
        const s = (await (await fetch(`${stack.base}/v2/agent/${id}`, { headers: stack.headers })).json()) as { status: string };
        if (s.status === 'processing') continue;
        pending.delete(id);
        if (s.status !== 'completed') failed.push(id);
      }
    }
    const wallSeconds = (performance.now() - t0) / 1000;
    const cpu = cpuUsedBetween(cpu0, cpuByPid(stack.roles));
    await prof.stop();

    // Per step, from the transcript rows (created_at is each writing transaction's start).
    const rows = await dbh.pool.query<{ run_id: string; step: number; role: string; key: string; at: Date; result: { latencyMs?: number; ms?: number } | null }>(
      `SELECT run_id, step, role, key, created_at AS at, result FROM agent_messages WHERE run_id = ANY($1) ORDER BY run_id, seq`,
      [ids],
    );
    const overhead: number[] = [];
    // The two legs of a step's overhead: up to the model's reply being stored, and from there to the tool's result.
    const modelLeg: number[] = [];
    const toolLeg: number[] = [];
    const idealPerAgent: number[] = [];
    const byRun = new Map<string, typeof rows.rows>();
    for (const r of rows.rows) byRun.set(r.run_id, [...(byRun.get(r.run_id) ?? []), r]);
    for (const list of byRun.values()) {
      let prevEnd = list.find((r) => r.key === 'user')!.at.getTime();
      let ideal = 0;
      for (let s = 1; s <= STEPS; s++) {
        const assistant = list.find((r) => r.step === s && r.role === 'assistant');
        const tools = list.filter((r) => r.step === s && r.role === 'tool');
        if (!assistant || !tools.length) break;
        const end = Math.max(...tools.map((t) => t.at.getTime()));
        const modelMs = assistant.result?.latencyMs ?? 0;
        const toolMs = Math.max(...tools.map((t) => t.result?.ms ?? 0));
        overhead.push(end - prevEnd - modelMs - toolMs);
        modelLeg.push(assistant.at.getTime() - prevEnd - modelMs);
        toolLeg.push(end - assistant.at.getTime() - toolMs);
        ideal += modelMs + toolMs;
        prevEnd = end;
      }
      idealPerAgent.push(ideal);
    }
    const steps = overhead.length;

    const connection = await Connection.connect({ address: stack.temporalAddress });
    const histories: number[] = [];
    try {
      const client = new Client({ connection, namespace: 'default' });
      for (const id of ids) histories.push((await client.workflow.getHandle(`agent-${id}`).describe()).historyLength);
    } finally {
      await connection.close();
    }

    const idealSeconds = percentile(idealPerAgent, 50) / 1000;
    const result = {
      bench: 'agent',
      agents: AGENTS,
      stepsPerAgent: STEPS,
      modelMs: MODEL_MS,
      loadAverageAtStart: load.map((x) => round(x, 2)),
      completed: AGENTS - failed.length,
      failed: failed.length,
      stepsMeasured: steps,
      overheadPerStepMs: { p50: round(percentile(overhead, 50), 1), p95: round(percentile(overhead, 95), 1), mean: round(overhead.reduce((a, b) => a + b, 0) / steps, 1) },
      overheadLegsMs: {
        toModelReplyStored: { p50: round(percentile(modelLeg, 50), 1), p95: round(percentile(modelLeg, 95), 1) },
        toToolResultStored: { p50: round(percentile(toolLeg, 50), 1), p95: round(percentile(toolLeg, 95), 1) },
      },
      wallSeconds: round(wallSeconds, 1),
      idealSecondsPerAgent: round(idealSeconds, 2),
      wallOverIdeal: round(wallSeconds / idealSeconds, 2),
      cpuMsPerStep: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, round((v * 1000) / steps, 1)])),
      cpuSeconds: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, round(v, 1)])),
      historyEvents: { max: Math.max(...histories), p50: percentile(histories, 50) },
      targets: { overheadP50Ms: 50, historyEvents: 10_000 },
    };
    const file = writeResult('agent', result);
    console.log(JSON.stringify(result, null, 2));
    console.log(`written to ${file}`);
    return result;
  } finally {
    await dbh.close();
    await stack.stop();
    await model.close();
    await site.close();
  }
}
