import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { connectDb } from '@wds/db';
import { sql } from 'drizzle-orm';
import { startBenchStack } from './stack';
import { cpuByPid, cpuUsedBetween, percentile, round, runConcurrent, writeResult } from './stats';

/**
 * Issue 18: BENCH_MONITORS monitors (2,000) of one page each on BENCH_MONITOR_SCHEDULE ("every 5
 * minutes": about 7 checks/s) against a local site where 1% of pages change per fetch; half the
 * pages send an ETag (304 when unchanged), half always send the body. After a warm-up (the first
 * round makes every page `new`), for BENCH_MONITOR_MINUTES (15): checks per second, schedule lag
 * (due time → start) p50/p99, and the CPU the stack used per check — Temporal, worker, API and
 * Postgres — with its split. Baseline, measured in this run before and after the window: a plain
 * loop in this process fetching and hashing the same pages (CPU ms per page), the floor any check
 * costs. Targets: lag p99 < 60 s; ≤ 10 ms of CPU per unchanged check.
 */
const MONITORS = Number(process.env.BENCH_MONITORS ?? 2_000);
const SCHEDULE = process.env.BENCH_MONITOR_SCHEDULE ?? 'every 5 minutes';
const MINUTES = Number(process.env.BENCH_MONITOR_MINUTES ?? 15);
/** Warm-up: one full round of the schedule plus its jitter (every page's first check). */
const WARMUP_S = Number(process.env.BENCH_MONITOR_WARMUP_S ?? 330);
const CHANGE_RATE = 0.01;

interface Site {
  url(i: number): string;
  fetches: number;
  changes: number;
  close(): Promise<void>;
}

function body(i: number, v: number): string {
  const para = `Product ${i} keeps its description here, with enough words to make a page of a realistic size. `.repeat(30);
  return `<!doctype html><html><head><title>Page ${i}</title></head><body><nav><a href="/">Home</a></nav><main><h1>Page ${i}</h1><p>Version ${v}.</p><p>${para}</p></main><footer>Footer</footer></body></html>`;
}

async function startSite(n: number): Promise<Site> {
  const versions = new Array<number>(n).fill(0);
  const site = { fetches: 0, changes: 0 } as Site;
  const server: Server = createServer((req, res) => {
    const i = Number(/^\/p\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1);
    if (!(i >= 0 && i < n)) return void res.writeHead(404).end();
    site.fetches++;
    if (Math.random() < CHANGE_RATE) {
      versions[i]!++;
      site.changes++;
    }
    const b = body(i, versions[i]!);
    if (i % 2 === 0) {
      const etag = `"${i}-${versions[i]}"`;
      if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { etag }).end();
      return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', etag }).end(b);
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(b);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  site.url = (i) => `${base}/p/${i}`;
  site.close = () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
  return site;
}

/** The baseline: fetch and hash `count` pages in this process, `concurrency` at a time; CPU ms per page. */
async function plainLoop(site: Site, count: number): Promise<number> {
  const cpu0 = process.cpuUsage();
  await runConcurrent(count, 20, async (k) => {
    const res = await fetch(site.url(k % MONITORS));
    createHash('sha256').update(Buffer.from(await res.arrayBuffer())).digest('hex');
  });
  const c = process.cpuUsage(cpu0);
  return (c.user + c.system) / 1000 / count;
}

export async function runMonitorBench() {
  const site = await startSite(MONITORS);
  const stack = await startBenchStack({ env: { WDS_MONITOR_MIN_INTERVAL_SECONDS: process.env.BENCH_MONITOR_MIN_INTERVAL ?? '300', WDS_STRANDED_JOB_SWEEP_MS: '5000' } });
  const dbh = connectDb(stack.databaseUrl, { max: 2 });
  try {
    const baselineBefore = await plainLoop(site, 2_000);
    const t0 = Date.now();
    await runConcurrent(MONITORS, 16, async (i) => {
      const res = await fetch(`${stack.base}/v2/monitor`, {
        method: 'POST',
        headers: stack.headers,
        body: JSON.stringify({ name: `bench ${i}`, schedule: { text: SCHEDULE }, targets: [{ type: 'scrape', urls: [site.url(i)] }] }),
      });
      if (res.status !== 200) throw new Error(`create failed: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    });
    process.stderr.write(`monitor bench: ${MONITORS} monitors created in ${Date.now() - t0} ms; warming up ${WARMUP_S} s\n`);
    await new Promise((r) => setTimeout(r, WARMUP_S * 1000));

    const load0 = loadavg()[0]!;
    const cpu0 = cpuByPid(stack.roles);
    const w0 = new Date();
    const fetches0 = site.fetches;
    const changes0 = site.changes;
    await new Promise((r) => setTimeout(r, MINUTES * 60_000));
    const cpu = cpuUsedBetween(cpu0, cpuByPid(stack.roles));
    const w1 = new Date();
    const load1 = loadavg()[0]!;
    const baselineAfter = await plainLoop(site, 2_000);

    const rows = (
      await dbh.db.execute<{ status: string; trigger: string; lag_ms: number | null; same: number; changed: number; new: number; removed: number; error: number }>(sql`
        SELECT status, trigger, (EXTRACT(EPOCH FROM started_at - scheduled_for) * 1000)::int AS lag_ms,
          (summary->>'same')::int AS same, (summary->>'changed')::int AS changed, (summary->>'new')::int AS new,
          (summary->>'removed')::int AS removed, (summary->>'error')::int AS error
        FROM monitor_checks WHERE coalesce(started_at, created_at) >= ${w0.toISOString()}::timestamptz AND coalesce(started_at, created_at) < ${w1.toISOString()}::timestamptz`)
    ).rows;
    const ran = rows.filter((r) => r.status === 'completed' || r.status === 'partial' || r.status === 'failed');
    const lags = ran.filter((r) => r.lag_ms !== null).map((r) => r.lag_ms!);
    const seconds = (w1.getTime() - w0.getTime()) / 1000;
    const cpuMs = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, round((v * 1000) / Math.max(1, ran.length), 2)]));
    const totalCpuMsPerCheck = round(Object.values(cpu).reduce((a, b) => a + b, 0) * 1000 / Math.max(1, ran.length), 2);
    const sum = (k: 'same' | 'changed' | 'new' | 'removed' | 'error') => ran.reduce((n, r) => n + (r[k] ?? 0), 0);
    const baseline = round((baselineBefore + baselineAfter) / 2, 3);
    const result = {
      monitors: MONITORS,
      schedule: SCHEDULE,
      windowSeconds: round(seconds, 1),
      loadAverage: { start: round(load0, 1), end: round(load1, 1) },
      checks: ran.length,
      checksPerSecond: round(ran.length / seconds, 2),
      unfinishedOrSkipped: Object.fromEntries([...new Set(rows.map((r) => r.status))].filter((s) => !['completed', 'partial', 'failed'].includes(s)).map((s) => [s, rows.filter((r) => r.status === s).length])),
      pages: { same: sum('same'), changed: sum('changed'), new: sum('new'), removed: sum('removed'), error: sum('error') },
      site: { fetches: site.fetches - fetches0, changes: site.changes - changes0 },
      lagMs: { p50: percentile(lags, 50), p99: percentile(lags, 99), max: Math.max(0, ...lags) },
      cpuMsPerCheck: { total: totalCpuMsPerCheck, ...cpuMs },
      baselineFetchAndHashCpuMsPerPage: { before: round(baselineBefore, 3), after: round(baselineAfter, 3) },
      ratioToBaseline: round(totalCpuMsPerCheck / baseline, 1),
      targets: { lagP99Under60s: percentile(lags, 99) < 60_000, cpuPerCheckAtMost10ms: totalCpuMsPerCheck <= 10 },
    };
    const file = writeResult('monitor', result);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n${file}\n`);
    return result;
  } finally {
    await dbh.close();
    await stack.stop();
    await site.close();
  }
}
