import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { stopChild } from '@wds/launch';
import { startBenchStack, type BenchStack } from './stack';
import { cpuByPid, cpuSecondsBetween, round, writeResult } from './stats';

/**
 * Issue 32: crawls of `ORIGINS` origins × `PAGES` pages at once (one crawl per origin) with the
 * deployment's politeness budget at a per-origin cap of `CAP` against the same crawls with
 * politeness off (`WDS_POLITENESS=false`), two stacks side by side, rounds interleaved
 * A/B/B/A… Aggregate pages/s must stay ≥ 90% (the budget is no bottleneck where it does not
 * bind), and the worker + Postgres CPU per page it adds is reported. The sites record how many
 * requests each had open at once: with the budget no origin may see more than the cap.
 */
const ORIGINS = Number(process.env.BENCH_POLITE_ORIGINS ?? 50);
const PAGES = Number(process.env.BENCH_POLITE_PAGES ?? 200);
const CAP = Number(process.env.BENCH_POLITE_CAP ?? 2);
const ROUNDS = Number(process.env.BENCH_POLITE_ROUNDS ?? 2);

async function startSites() {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./polite-sites.ts', import.meta.url)), String(ORIGINS), String(PAGES)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const ports = await new Promise<number[]>((resolve) => child.stdout!.on('data', (d) => { const m = /PORTS ([\d,]+)/.exec(String(d)); if (m) resolve(m[1]!.split(',').map(Number)); }));
  return { child, origins: ports.map((p) => `http://127.0.0.1:${p}`) };
}

/** One round: every origin crawled at once; pages/s over the whole, CPU per page, the most requests an origin had open. */
async function round1(stack: BenchStack, origins: string[], limit = PAGES) {
  await Promise.all(origins.map((o) => fetch(`${o}/__stats`)));
  const cpu0 = cpuByPid(stack.roles);
  const t0 = performance.now();
  const ids = await Promise.all(
    origins.map(async (o) => {
      const res = await fetch(`${stack.base}/v2/crawl`, { method: 'POST', headers: stack.headers, body: JSON.stringify({ url: `${o}/p/0`, limit, sitemap: 'skip', crawlEntireDomain: true, scrapeOptions: { maxAge: 0 } }) });
      return ((await res.json()) as { id: string }).id;
    }),
  );
  let completed = 0;
  const pending = new Set(ids);
  while (pending.size) {
    await new Promise((r) => setTimeout(r, 500));
    for (const id of [...pending]) {
      const s = (await (await fetch(`${stack.base}/v2/crawl/${id}?skip=100000000`, { headers: stack.headers })).json()) as { status: string; completed: number };
      if (s.status !== 'scraping') {
        pending.delete(id);
        completed += s.completed;
      }
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSecondsBetween(cpu0, cpuByPid(stack.roles));
  const stats = await Promise.all(origins.map(async (o) => (await (await fetch(`${o}/__stats`)).json()) as { maxOpen: number; served: number }));
  return {
    pagesPerSec: round(completed / seconds, 1),
    completed,
    seconds: round(seconds, 1),
    cpuMsPerPage: { worker: round((cpu.worker! * 1000) / completed, 2), postgres: round((cpu.postgres! * 1000) / completed, 2) },
    maxOpenPerOrigin: Math.max(...stats.map((s) => s.maxOpen)),
  };
}

export async function runPoliteBench() {
  const { child, origins } = await startSites();
  const polite = await startBenchStack({ env: { WDS_ORIGIN_MAX_IN_FLIGHT: String(CAP) } });
  const off = await startBenchStack({ env: { WDS_POLITENESS: 'false' } });
  try {
    const load0 = loadavg()[0]!;
    const runs: { polite: Awaited<ReturnType<typeof round1>>[]; off: Awaited<ReturnType<typeof round1>>[] } = { polite: [], off: [] };
    // A short warm-up round each, unmeasured (first crawls compile and fill pools).
    await round1(polite, origins, Math.ceil(PAGES / 10));
    await round1(off, origins, Math.ceil(PAGES / 10));
    for (let i = 0; i < ROUNDS; i++) {
      // A/B then B/A: the host's drift falls on both sides.
      const order = i % 2 ? (['off', 'polite'] as const) : (['polite', 'off'] as const);
      for (const k of order) {
        const r = await round1(k === 'polite' ? polite : off, origins);
        runs[k].push(r);
        process.stderr.write(`polite: round ${i + 1} ${k}: ${r.pagesPerSec} pages/s, max ${r.maxOpenPerOrigin} open per origin\n`);
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const rate = (k: 'polite' | 'off') => mean(runs[k].map((r) => r.pagesPerSec));
    const cpu = (k: 'polite' | 'off', p: 'worker' | 'postgres') => mean(runs[k].map((r) => r.cpuMsPerPage[p]));
    const result = {
      bench: 'polite',
      origins: ORIGINS,
      pagesPerOrigin: PAGES,
      cap: CAP,
      rounds: ROUNDS,
      runs,
      ratioPagesPerSec: round(rate('polite') / rate('off'), 3),
      addedCpuMsPerPage: { worker: round(cpu('polite', 'worker') - cpu('off', 'worker'), 2), postgres: round(cpu('polite', 'postgres') - cpu('off', 'postgres'), 2) },
      capHeld: runs.polite.every((r) => r.maxOpenPerOrigin <= CAP),
      loadavg: { before: round(load0, 2), after: round(loadavg()[0]!, 2) },
      targets: { ratioPagesPerSec: 0.9 },
      met: { ratio: rate('polite') / rate('off') >= 0.9, cap: runs.polite.every((r) => r.maxOpenPerOrigin <= CAP) },
    };
    console.log(JSON.stringify(result, null, 2));
    console.log(`written to ${writeResult('polite', result)}`);
    return result;
  } finally {
    await Promise.all([polite.stop(), off.stop()]);
    await stopChild(child);
  }
}
