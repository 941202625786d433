import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { stopChild } from '@wds/launch';
import { startBenchStack, type BenchStack } from './stack';
import { cpuByPid, cpuUsedBetween, percentile, round, writeResult } from './stats';

/**
 * Issue 6's load test: open-loop load on POST /v2/scrape against the embedded stack, in two
 * phases — cache hits (a fixed set of URLs scraped again and again) and misses (a new URL each
 * time) — at increasing rates. Open loop: request i is sent at t0 + i/rate whether or not earlier
 * ones have answered (a closed loop would slow down with the server and hide its queueing);
 * latency is measured from that scheduled time, so a late send counts against the stack. At most
 * MAX_OUTSTANDING requests are in flight; a request that would exceed it is not sent and counts
 * as an error. A step holds when every request answered 200 and p99 < 1 s. Each phase stops
 * after its first failing step. CPU per process (from /proc) over each step names the bottleneck.
 */
const RATES = (process.env.BENCH_LOAD_RATES ?? '5,10,15,20,30,40,60,80,120,160,240,320,400,480,560,640').split(',').map(Number);
/**
 * `on`: the per-team limits are enforced (rate and concurrency bookkeeping in Postgres on every
 * request) at values the load never reaches; `off` (default): no limits, as before issue 20.
 */
const LIMITS = process.env.BENCH_LOAD_LIMITS === 'on' ? 'on' : 'off';
const STEP_S = Number(process.env.BENCH_LOAD_STEP_S ?? 12);
const MAX_OUTSTANDING = Number(process.env.BENCH_LOAD_MAX_OUTSTANDING ?? 400);
const PAGE_BYTES = Number(process.env.BENCH_LOAD_PAGE_BYTES ?? 20_000);
const PHASES = (process.env.BENCH_LOAD_PHASES ?? 'hits,misses').split(',');
const HIT_URLS = 50;
const REQUEST_TIMEOUT_MS = 30_000;
const P99_LIMIT_MS = 1_000;

interface Step {
  rate: number;
  sent: number;
  ok: number;
  errors: number;
  errorKinds: Record<string, number>;
  /** metadata.cacheState of the 200 answers: proves each phase measured what it says. */
  cacheState: Record<string, number>;
  /** 200 answers per second over the step (from first scheduled send to last answer). */
  achievedRps: number;
  latencyMs: { p50: number; p99: number; max: number };
  /** Cores used on average during the sending window, per process group (2 = both cores of this machine). */
  cpuCores: Record<string, number>;
  /** Per process group, its busiest thread (a single thread tops out at 1 core). */
  busiestThread: Record<string, { thread: string; cores: number }>;
  held: boolean;
}

async function startSite(): Promise<{ child: ChildProcess; origin: string }> {
  const script = fileURLToPath(new URL('./site-server.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, '10000000', String(PAGE_BYTES)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.on('data', (d) => { const m = /PORT (\d+)/.exec(String(d)); if (m) resolve(Number(m[1])); }));
  return { child, origin: `http://127.0.0.1:${port}` };
}

/** Busy CPU seconds of the whole machine (all cores), from /proc/stat. */
function machineBusy(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f as [number, number, number, number, number, number, number, number];
  return (user + nice + system + irq + softirq + steal) / 100;
}

/**
 * CPU seconds per thread of the given processes (name from /proc/.../comm). A process can be
 * saturated while using under one core in total: its event loop or its workflow thread is.
 */
function threadCpu(pids: Map<number, { role: string }>): Map<string, { role: string; name: string; cpu: number }> {
  const out = new Map<string, { role: string; name: string; cpu: number }>();
  for (const [pid, { role }] of pids) {
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // exited
    }
    for (const tid of tids) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
        out.set(`${pid}/${tid}`, { role, name: tid === String(pid) ? `${name} (main)` : name, cpu: (Number(f[11]) + Number(f[12])) / 100 });
      } catch {
        // the thread ended while being read
      }
    }
  }
  return out;
}

function cpuSnapshot(roles: Record<string, number | RegExp>) {
  const pids = cpuByPid(roles);
  return { at: performance.now(), pids, threads: threadCpu(pids), machine: machineBusy() };
}

/** Per process group, its busiest thread over the window, in cores. */
function busiestThreads(a: ReturnType<typeof cpuSnapshot>, b: ReturnType<typeof cpuSnapshot>): Record<string, { thread: string; cores: number }> {
  const secs = (b.at - a.at) / 1000;
  const out: Record<string, { thread: string; cores: number }> = {};
  for (const [key, t] of b.threads) {
    const cores = round((t.cpu - (a.threads.get(key)?.cpu ?? 0)) / secs, 2);
    if (cores > (out[t.role]?.cores ?? -1)) out[t.role] = { thread: t.name, cores };
  }
  return out;
}

function coresBetween(a: ReturnType<typeof cpuSnapshot>, b: ReturnType<typeof cpuSnapshot>): Record<string, number> {
  const secs = (b.at - a.at) / 1000;
  const out: Record<string, number> = {};
  let ours = 0;
  for (const [k, d] of Object.entries(cpuUsedBetween(a.pids, b.pids))) {
    ours += d;
    out[k] = round(d / secs, 2);
  }
  // Everything else on the machine (another benchmark, the kernel): it competes for the same cores.
  out.other = round(Math.max(0, b.machine - a.machine - ours) / secs, 2);
  out.total = round((b.machine - a.machine) / secs, 2);
  return out;
}

async function runStep(stack: BenchStack, roles: Record<string, number | RegExp>, rate: number, urlFor: (i: number) => string): Promise<Step> {
  const { headers } = stack;
  const total = Math.round(rate * STEP_S);
  const latencies: number[] = [];
  const errorKinds: Record<string, number> = {};
  const cacheState: Record<string, number> = {};
  const fail = (k: string) => void (errorKinds[k] = (errorKinds[k] ?? 0) + 1);
  let outstanding = 0;
  let lastAnswer = 0;
  const pending: Promise<void>[] = [];
  const cpu0 = cpuSnapshot(roles);
  const t0 = performance.now();

  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    if (outstanding >= MAX_OUTSTANDING) {
      fail('over_outstanding_cap');
      continue;
    }
    outstanding++;
    pending.push(
      (async () => {
        try {
          const res = await fetch(`${stack.base}/v2/scrape`, { method: 'POST', headers, body: JSON.stringify({ url: urlFor(i), formats: ['markdown'] }), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
          const body = (await res.json().catch(() => null)) as { data?: { metadata?: { cacheState?: string } } } | null;
          if (res.status !== 200) return fail(`http_${res.status}`);
          latencies.push(performance.now() - due);
          const state = body?.data?.metadata?.cacheState ?? 'none';
          cacheState[state] = (cacheState[state] ?? 0) + 1;
        } catch (e) {
          fail((e as Error).name === 'TimeoutError' ? 'client_timeout' : 'network');
        } finally {
          outstanding--;
          lastAnswer = performance.now();
        }
      })(),
    );
  }
  const cpu1 = cpuSnapshot(roles);
  await Promise.all(pending); // the backlog of a failing step drains before the next one starts
  const errors = Object.values(errorKinds).reduce((a, b) => a + b, 0);
  const sorted = latencies.length ? latencies : [NaN];
  const p99 = round(percentile(sorted, 99), 1);
  return {
    rate,
    sent: total - (errorKinds.over_outstanding_cap ?? 0),
    ok: latencies.length,
    errors,
    errorKinds,
    cacheState,
    achievedRps: round(latencies.length / ((lastAnswer - t0) / 1000), 1),
    latencyMs: { p50: round(percentile(sorted, 50), 1), p99, max: round(Math.max(...sorted), 1) },
    cpuCores: coresBetween(cpu0, cpu1),
    busiestThread: busiestThreads(cpu0, cpu1),
    held: errors === 0 && p99 < P99_LIMIT_MS,
  };
}

/**
 * What limits throughput at the first failing step: a thread at its one-core ceiling (a Node
 * event loop, the Temporal SDK's workflow thread), else the machine's cores all busy, else
 * neither — then the limit is waiting (locks, fsync), not CPU.
 */
function bottleneck(step: Step | undefined): string {
  if (!step) return 'none reached: every rate held (raise BENCH_LOAD_RATES)';
  const { total, other, ...groups } = step.cpuCores;
  const [role, cores] = Object.entries(groups).sort((a, b) => b[1] - a[1])[0]!;
  const machine = availableParallelism();
  const hot = Object.entries(step.busiestThread).filter(([, t]) => t.cores >= 0.85).map(([r, t]) => `${r} thread "${t.thread}" at ${t.cores} cores`);
  const busy = total! >= machine * 0.9 ? `all ${machine} cores busy (${total}, of which ${other} outside the stack)` : `${round(machine - total!, 2)} of ${machine} cores idle`;
  return `at ${step.rate} req/s: ${hot.length ? `saturated: ${hot.join(', ')}` : 'no thread at its one-core ceiling'}; most CPU: ${role} ${cores} cores; ${busy}`;
}

async function phase(stack: BenchStack, roles: Record<string, number | RegExp>, name: string, urlFor: (rate: number, i: number) => string) {
  const steps: Step[] = [];
  for (const rate of RATES) {
    const s = await runStep(stack, roles, rate, (i) => urlFor(rate, i));
    steps.push(s);
    const threads = Object.entries(s.busiestThread).map(([r, t]) => `${r}:${t.thread}=${t.cores}`).join(' ');
    console.log(`${name} ${rate} req/s: achieved ${s.achievedRps}/s, p50 ${s.latencyMs.p50} ms, p99 ${s.latencyMs.p99} ms, errors ${s.errors}${s.errors ? ` ${JSON.stringify(s.errorKinds)}` : ''}, cores ${JSON.stringify(s.cpuCores)}, busiest threads ${threads}`);
    if (!s.held) break;
  }
  const held = steps.filter((s) => s.held).pop();
  return { steps, highestHeldRps: held?.rate ?? 0, bottleneck: bottleneck(steps.find((s) => !s.held)) };
}

export async function runLoadBench() {
  const site = await startSite();
  // The embedded default keeps Temporal in a SQLite file; BENCH_TEMPORAL_MEMORY=1 shows what that costs.
  const limits: Record<string, string> = LIMITS === 'on' ? { WDS_RATE_LIMIT_SCRAPE: '10000000', WDS_MAX_CONCURRENT_SCRAPES: '100000' } : {};
  const stack = await startBenchStack({ temporalInMemory: process.env.BENCH_TEMPORAL_MEMORY === '1', env: limits });
  const roles = { ...stack.roles, site: site.child.pid!, loadgen: process.pid };
  const post = (url: string) => fetch(`${stack.base}/v2/scrape`, { method: 'POST', headers: stack.headers, body: JSON.stringify({ url, formats: ['markdown'] }) }).then(async (r) => {
    if (r.status !== 200) throw new Error(`warm-up scrape: ${r.status} ${await r.text()}`);
  });
  try {
    // Warm-up (bundles, JIT, pools), then the hit set goes into the page cache.
    for (let i = 0; i < 20; i++) await post(`${site.origin}/p/${9_000_000 + i}`);
    for (let i = 0; i < HIT_URLS; i++) await post(`${site.origin}/p/${i}`);
    const hits = PHASES.includes('hits') ? await phase(stack, roles, 'hits', (_r, i) => `${site.origin}/p/${i % HIT_URLS}`) : null;
    // Misses: a page nobody scraped before (unique path per rate and index).
    const misses = PHASES.includes('misses') ? await phase(stack, roles, 'misses', (rate, i) => `${site.origin}/p/${100_000 + rate * 10_000 + i}`) : null;
    const result = {
      bench: 'load',
      stepSeconds: STEP_S,
      maxOutstanding: MAX_OUTSTANDING,
      pageBytes: PAGE_BYTES,
      cores: availableParallelism(),
      temporalPersistence: process.env.BENCH_TEMPORAL_MEMORY === '1' ? 'memory' : 'sqlite',
      limits: LIMITS,
      criterion: `p99 < ${P99_LIMIT_MS} ms and zero errors`,
      hits,
      misses,
    };
    console.log(JSON.stringify(result, null, 2));
    console.log(`written to ${writeResult('load', result)}`);
    return result;
  } finally {
    await stack.stop();
    await stopChild(site.child);
  }
}
