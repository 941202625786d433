import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { stopChild } from '@wds/launch';
import { promptText, startFakeOpenAI, type FakeOpenAI } from '@wds/test-utils';
import { workflowPhases } from './phases';
import { profileNodeArgs, profileWindow } from './profile';
import { startBenchStack } from './stack';
import { cpuByPid, cpuUsedBetween, round, summary, writeResult } from './stats';

/**
 * Issue 15's LLM benchmark: json-format scrapes through the full stack against the fake
 * OpenAI-compatible provider (@wds/test-utils) answering each call in BENCH_LLM_MODEL_MS (1 s),
 * with at most BENCH_LLM_CAP (20) calls in flight.
 *
 * The cap is modelled as it is met in reality: a provider has a concurrency (or rate) limit and
 * answers 429 beyond it, and the operator sizes WDS_LLM_CONCURRENCY (× workers) to it. So the
 * fake answers 429 beyond the cap (counted: it must stay 0, else the platform overran the
 * provider and paid retries for it), and the one worker runs with WDS_LLM_CONCURRENCY = cap.
 *
 * 1. Per-call platform overhead: json scrapes one at a time, interleaved with plain (HTTP-only)
 *    scrapes of the same kind of page; overhead = json p50 − plain p50 − the model's time.
 * 2. Bursts, interleaved A/B (this host's speed drifts): plain scrapes run closed-loop
 *    (BENCH_LLM_PLAIN_CONCURRENCY in flight) all along; windows alternate between plain alone
 *    (A, BENCH_LLM_BASELINE_S) and plain beside a burst of BENCH_LLM_N json scrapes sent at once
 *    (B, until the burst's last answer). Targets: a burst completes within 15% of the ideal
 *    N / cap × model time (10 s); plain throughput in B ≥ 90% of that in A.
 * CPU per process group over the A and B windows says where the time went.
 */
const N = Number(process.env.BENCH_LLM_N ?? 200);
const CAP = Number(process.env.BENCH_LLM_CAP ?? 20);
const MODEL_MS = Number(process.env.BENCH_LLM_MODEL_MS ?? 1_000);
const ROUNDS = Number(process.env.BENCH_LLM_ROUNDS ?? 3);
const PLAIN_CONCURRENCY = Number(process.env.BENCH_LLM_PLAIN_CONCURRENCY ?? 2);
const BASELINE_MS = Number(process.env.BENCH_LLM_BASELINE_S ?? 10) * 1_000;
const SEQ_N = Number(process.env.BENCH_LLM_SEQ_N ?? 20);
const PAGE_BYTES = Number(process.env.BENCH_LLM_PAGE_BYTES ?? 5_000);

const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] };

async function startSite(): Promise<{ child: ChildProcess; origin: string }> {
  const script = fileURLToPath(new URL('./site-server.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, '10000000', String(PAGE_BYTES)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) =>
    child.stdout!.on('data', (d) => {
      const m = /PORT (\d+)/.exec(String(d));
      if (m) resolve(Number(m[1]));
    }),
  );
  return { child, origin: `http://127.0.0.1:${port}` };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU seconds of a process's main thread (a Node event loop: its ceiling is one core). */
function mainThreadCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

export async function runLlmBench() {
  const load: { atStart: number[]; atEnd?: number[] } = { atStart: loadavg().map((x) => round(x)) };
  let over = 0;
  // The handler reads the fake's own in-flight count (this request included).
  const ref: { fake?: FakeOpenAI } = {};
  const fake = await startFakeOpenAI({
    handler: (req) => {
      if (ref.fake!.inFlight > CAP) {
        over++;
        return { error: { status: 429, message: `More than ${CAP} requests in flight` }, retryAfterMs: 250 };
      }
      const title = /# (Page \d+)/.exec(promptText(req))?.[1] ?? 'unknown';
      return { content: { title }, delayMs: MODEL_MS, usage: { prompt_tokens: 1_500, completion_tokens: 10 } };
    },
  });
  ref.fake = fake;
  const site = await startSite();
  const stack = await startBenchStack({
    temporalInMemory: process.env.BENCH_TEMPORAL_MEMORY === '1',
    nodeArgs: profileNodeArgs(),
    env: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-bench-not-a-secret', MODEL_NAME: 'fake-model', WDS_LLM_CONCURRENCY: String(CAP), WDS_LLM_TIMEOUT_MS: '60000' },
  });
  const roles = { ...stack.roles, site: site.child.pid!, bench: process.pid };
  let page = 0;
  const nextUrl = () => `${site.origin}/p/${page++}`;
  const errors: Record<string, number> = {};
  // The scrape ids of the json scrapes answered (a burst's, for where its time went).
  let jsonIds: string[] = [];
  const scrape = async (body: Record<string, unknown>, check?: (data: any, url: string) => boolean, ids?: string[]) => {
    const url = nextUrl();
    try {
      const r = await fetch(`${stack.base}/v2/scrape`, { method: 'POST', headers: stack.headers, body: JSON.stringify({ url, maxAge: 0, timeout: 120_000, ...body }) });
      const j = (await r.json()) as { data?: { metadata?: { scrapeId?: string } }; error?: string };
      if (r.status !== 200) throw new Error(`${r.status} ${j.error ?? ''}`.trim());
      if (check && !check(j.data, url)) throw new Error('wrong document');
      if (ids && j.data?.metadata?.scrapeId) ids.push(j.data.metadata.scrapeId);
      return true;
    } catch (e) {
      const k = (e as Error).message.slice(0, 80);
      errors[k] = (errors[k] ?? 0) + 1;
      return false;
    }
  };
  const json = () => scrape({ formats: [{ type: 'json', schema }] }, (d, url) => d?.json?.title === `Page ${url.split('/').pop()}`, jsonIds);
  const plain = () => scrape({ formats: ['markdown'] }, (d) => typeof d?.markdown === 'string');

  try {
    // Warm-up: bundles, JIT, pools, the wds-llm slots.
    await Promise.all(Array.from({ length: 20 }, () => json()));
    await Promise.all(Array.from({ length: 20 }, () => plain()));
    fake.reset();
    over = 0;

    // 1. One at a time, interleaved.
    const seqJson: number[] = [];
    const seqPlain: number[] = [];
    for (let i = 0; i < SEQ_N; i++) {
      let t = performance.now();
      await json();
      seqJson.push(performance.now() - t);
      t = performance.now();
      await plain();
      seqPlain.push(performance.now() - t);
    }
    const sj = summary(seqJson);
    const sp = summary(seqPlain);

    // 2. Plain scrapes all along; A and B windows alternate.
    const plainDone: number[] = [];
    let running = true;
    const plainLoop = Promise.all(
      Array.from({ length: PLAIN_CONCURRENCY }, async () => {
        while (running) if (await plain()) plainDone.push(performance.now());
      }),
    );
    const between = (t0: number, t1: number) => plainDone.filter((t) => t > t0 && t <= t1).length;
    interface Window { kind: 'A' | 'B'; ms: number; plainPerSec: number; cpuCores: Record<string, number>; burst?: { completionMs: number; failed: number; modelCalls: number; maxInFlight: number; meanInFlight: number; firstAtCapMs: number | null; phases: Awaited<ReturnType<typeof workflowPhases>> } }
    const windows: Window[] = [];
    // Per process group in cores, and the worker's and API's main threads apart (`worker.main`, `api.main`).
    const mains = () => ({ 'worker.main': mainThreadCpu(stack.worker.child.pid!), 'api.main': mainThreadCpu(stack.api.child.pid!) });
    const windowCpu = (before: { pids: ReturnType<typeof cpuByPid>; mains: ReturnType<typeof mains> }, ms: number) => ({
      ...Object.fromEntries(Object.entries(cpuUsedBetween(before.pids, cpuByPid(roles))).map(([k, v]) => [k, round(v / (ms / 1000))])),
      ...Object.fromEntries(Object.entries(mains()).map(([k, v]) => [k, round((v - before.mains[k as keyof typeof before.mains]) / (ms / 1000))])),
    });
    const cpuNow = () => ({ pids: cpuByPid(roles), mains: mains() });
    const baseline = async () => {
      const cpu = cpuNow();
      const t0 = performance.now();
      await sleep(BASELINE_MS);
      const t1 = performance.now();
      windows.push({ kind: 'A', ms: round(t1 - t0), plainPerSec: round(between(t0, t1) / ((t1 - t0) / 1000)), cpuCores: windowCpu(cpu, t1 - t0) });
    };
    const burst = async () => {
      fake.reset();
      jsonIds = [];
      const cpu = cpuNow();
      // BENCH_PROFILE_WINDOW: the API's and worker's main threads over the first burst.
      const prof = windows.some((w) => w.kind === 'B') ? { stop: async () => {} } : await profileWindow({ api: stack.api, worker: stack.worker });
      const t0 = performance.now();
      const epoch0 = Date.now();
      // The provider's calls in flight, sampled: how well the burst kept the cap busy.
      const inFlight: number[] = [];
      const sampler = setInterval(() => inFlight.push(fake.inFlight), 50);
      const ok = await Promise.all(Array.from({ length: N }, () => json()));
      const t1 = performance.now();
      clearInterval(sampler);
      const firstFull = inFlight.findIndex((x) => x >= CAP);
      const cpuCores = windowCpu(cpu, t1 - t0);
      await prof.stop();
      // Read from the histories after the window (its CPU is not the burst's).
      const phases = await workflowPhases(stack.temporalAddress, jsonIds.map((id) => `scrape-${id}`), epoch0, epoch0 + (t1 - t0));
      windows.push({
        kind: 'B',
        ms: round(t1 - t0),
        plainPerSec: round(between(t0, t1) / ((t1 - t0) / 1000)),
        cpuCores,
        burst: { completionMs: round(t1 - t0), failed: ok.filter((x) => !x).length, modelCalls: fake.chatRequests().length, maxInFlight: fake.maxInFlight, meanInFlight: round(inFlight.reduce((a, b) => a + b, 0) / Math.max(1, inFlight.length)), firstAtCapMs: firstFull < 0 ? null : firstFull * 50, phases },
      });
    };
    await sleep(2_000); // the plain loop settles
    for (let r = 0; r < ROUNDS; r++) {
      await baseline();
      await burst();
    }
    await baseline();
    running = false;
    await plainLoop;

    const as = windows.filter((w) => w.kind === 'A');
    const bs = windows.filter((w) => w.kind === 'B');
    const rate = (ws: Window[]) => ws.reduce((a, w) => a + w.plainPerSec * w.ms, 0) / ws.reduce((a, w) => a + w.ms, 0);
    // Each burst against the mean of the baselines either side of it.
    const perRound = bs.map((b) => {
      const i = windows.indexOf(b);
      const around = (windows[i - 1]!.plainPerSec + windows[i + 1]!.plainPerSec) / 2;
      return round(b.plainPerSec / around, 3);
    });
    const ideal = (N / CAP) * MODEL_MS;
    const completions = bs.map((b) => b.burst!.completionMs);
    const meanCores = (ws: Window[]) => {
      const keys = [...new Set(ws.flatMap((w) => Object.keys(w.cpuCores)))];
      return Object.fromEntries(keys.map((k) => [k, round(ws.reduce((a, w) => a + (w.cpuCores[k] ?? 0) * w.ms, 0) / ws.reduce((a, w) => a + w.ms, 0))]));
    };
    load.atEnd = loadavg().map((x) => round(x));
    const result = {
      bench: 'llm',
      config: { n: N, cap: CAP, modelMs: MODEL_MS, rounds: ROUNDS, plainConcurrency: PLAIN_CONCURRENCY, baselineMs: BASELINE_MS, pageBytes: PAGE_BYTES, workers: 1, wdsLlmConcurrency: CAP },
      loadAverage: load,
      perCall: {
        jsonScrapeMs: sj,
        plainScrapeMs: sp,
        // What the platform adds to a scrape for its model step, beyond the model's own time.
        llmStepOverheadP50Ms: round(sj.p50 - sp.p50 - MODEL_MS),
        // The whole json scrape beyond the model's time (fetch, document, two activities, storage).
        platformOverheadP50Ms: round(sj.p50 - MODEL_MS),
      },
      bursts: {
        idealMs: ideal,
        completionMs: completions,
        ratioToIdeal: completions.map((c) => round(c / ideal, 3)),
        // Beyond the model time, per round of `cap` calls.
        overheadPerRoundMs: completions.map((c) => round((c - ideal) / (N / CAP))),
        failed: bs.map((b) => b.burst!.failed),
        maxInFlightAtProvider: bs.map((b) => b.burst!.maxInFlight),
        modelCalls: bs.map((b) => b.burst!.modelCalls),
      },
      plainThroughput: {
        alonePerSec: round(rate(as)),
        besideBurstsPerSec: round(rate(bs)),
        ratio: round(rate(bs) / rate(as), 3),
        perRoundRatio: perRound,
      },
      cpuCores: { alone: meanCores(as), besideBursts: meanCores(bs) },
      windows,
      providerOverCap429: over,
      errors,
      targets: { completionWithinOfIdeal: 0.15, plainThroughputRatio: 0.9, providerOverCap429: 0 },
    };
    console.log(JSON.stringify(result, null, 2));
    console.log(`written to ${writeResult('llm', result)}`);
    return result;
  } finally {
    await stack.stop();
    await stopChild(site.child);
    await fake.close();
  }
}
