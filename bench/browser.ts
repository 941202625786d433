/**
 * Throughput of `BrowserPool.render` against bare playwright-core on the same Chromium, on a
 * local static page, plus the peak RSS of this process and its Chromium children.
 *
 *   npm run bench -- browser     (BENCH_BROWSER_PAGES, default 200; BENCH_BROWSER_CONCURRENCY,
 *                                  default the pool's two pages per core)
 *
 * Bare baseline = what the pool does at minimum per render: a fresh context + page, goto
 * (load) + content(), close. A second baseline reuses one page per worker (no isolation), to
 * show what context isolation itself costs.
 */
import http from 'node:http';

import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { BrowserPool, DEFAULT_LAUNCH_ARGS, defaultMaxConcurrentPages } from '@wds/browser';
import { measureBrowserCrawl, type BrowserCrawlFigures } from './browser-crawl';
import { measureBrowserWait, type BrowserWaitFigures } from './browser-wait';
import { writeResult } from './stats';
import { treeMemory, type TreeMemory } from './tree-memory';

export interface BenchFigures {
  pages: number;
  concurrency: number;
  executable: string;
  pool: { pagesPerSec: number; p50Ms: number; p95Ms: number };
  bare: { pagesPerSec: number; p50Ms: number; p95Ms: number };
  bareReusedPage: { pagesPerSec: number; p50Ms: number; p95Ms: number };
  /** pool pages/s ÷ bare (fresh context) pages/s. */
  ratio: number;
  /**
   * Peak memory of this process + its Chromium children while the pool alone runs the load
   * (before the baseline browser exists). `rss` sums each process's RSS (counts shared pages
   * once per process, so it overstates); `pss` splits shared pages between processes.
   */
  peakMemoryMb: { rss: number; rssNode: number; rssChromium: number; pss: number; processes: number };
}

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bench page</title>
<style>body{font-family:sans-serif;max-width:40em;margin:auto}</style></head><body>
<header><nav><a href="/a">A</a> <a href="/b">B</a></nav></header>
<main><h1>A static article</h1>${'<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>'.repeat(30)}
<ul>${Array.from({ length: 30 }, (_, i) => `<li><a href="/item/${i}">Item ${i}</a></li>`).join('')}</ul></main>
<footer>© bench</footer></body></html>`;

function summary(latencies: number[], wallMs: number) {
  const s = [...latencies].sort((a, b) => a - b);
  const q = (f: number) => s[Math.min(s.length - 1, Math.floor(f * s.length))] ?? 0;
  return { pagesPerSec: +(latencies.length / (wallMs / 1000)).toFixed(1), p50Ms: +q(0.5).toFixed(1), p95Ms: +q(0.95).toFixed(1) };
}

async function runLoad(n: number, concurrency: number, one: (worker: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (next < n) {
        next++;
        const t = performance.now();
        await one(w);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - t0 };
}

const envNum = (name: string): number | undefined => (process.env[name] ? Number(process.env[name]) : undefined);

/**
 * `npm run bench -- browser`: measures, prints and writes bench/results/browser-<time>.json: the
 * pool against bare playwright-core, then (issue 19) a browser crawl through the full stack
 * against the bare pool (browser-crawl.ts), then (issue 39.3) a script-rendered page with `waitFor`
 * against a bare page doing the same (browser-wait.ts). `BENCH_BROWSER_SKIP=pool,crawl,wait` leaves
 * parts out.
 */
type BrowserBenchFigures = BenchFigures & { crawl?: BrowserCrawlFigures; wait?: BrowserWaitFigures };
export async function runBrowserBench(opts: { pages?: number; concurrency?: number; executablePath?: string } = {}): Promise<BrowserBenchFigures> {
  const skip = new Set((process.env.BENCH_BROWSER_SKIP ?? '').split(',').filter(Boolean));
  const concurrency = opts.concurrency ?? envNum('BENCH_BROWSER_CONCURRENCY') ?? defaultMaxConcurrentPages();
  const figures: Partial<BrowserBenchFigures> = skip.has('pool')
    ? {}
    : await measure({ pages: opts.pages ?? envNum('BENCH_BROWSER_PAGES'), concurrency, executablePath: opts.executablePath });
  if (!skip.has('crawl')) {
    figures.crawl = await measureBrowserCrawl({ pages: envNum('BENCH_BROWSER_CRAWL_PAGES') ?? 500, rounds: envNum('BENCH_BROWSER_CRAWL_ROUNDS') ?? 2, poolPages: concurrency });
  }
  if (!skip.has('wait')) {
    figures.wait = await measureBrowserWait({
      pages: envNum('BENCH_BROWSER_WAIT_PAGES') ?? 40,
      rounds: envNum('BENCH_BROWSER_WAIT_ROUNDS') ?? 4,
      waitForMs: envNum('BENCH_BROWSER_WAIT_MS') ?? 1000,
      blockAds: process.env.BENCH_BROWSER_WAIT_BLOCKADS !== 'false',
    });
  }
  console.log(JSON.stringify(figures, null, 2));
  console.log(`browser bench written to ${writeResult('browser', figures)}`);
  return figures as BrowserBenchFigures;
}

async function measure(opts: { pages?: number; concurrency?: number; executablePath?: string }): Promise<BenchFigures> {
  const pages = opts.pages ?? 200;
  const concurrency = opts.concurrency ?? defaultMaxConcurrentPages();
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(PAGE);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  let peak: TreeMemory = { rssNode: 0, rssChildren: 0, pss: 0, processes: 0 };
  let peakPss = 0;
  const sample = () => {
    const m = treeMemory(process.pid, true);
    if (m.rssNode + m.rssChildren > peak.rssNode + peak.rssChildren) peak = m;
    peakPss = Math.max(peakPss, m.pss);
  };
  let sampler: NodeJS.Timeout | undefined;

  const pool = new BrowserPool({ maxConcurrentPages: concurrency, recycleAfterPages: 100_000, executablePath: opts.executablePath });
  const executable = pool.executablePath();
  let browser: Browser | undefined;
  try {
    const req = { url, timeoutMs: 30_000, waitFor: 0, mobile: false, blockAds: true, skipTlsVerification: false, allowPrivateNetwork: true };
    const poolOne = async () => {
      const r = await pool.render(req);
      if (!r.html.includes('A static article')) throw new Error('bad render');
    };
    // Memory: the pool alone, warmed up, under the same load.
    await runLoad(concurrency * 3, concurrency, poolOne);
    sampler = setInterval(sample, 250);
    await runLoad(Math.ceil(pages / 4), concurrency, poolOne);
    clearInterval(sampler);
    sample();

    browser = await chromium.launch({ executablePath: executable, headless: true, args: [...DEFAULT_LAUNCH_ARGS] });
    const b = browser;
    const bareOne = async () => {
      const ctx = await b.newContext();
      const page = await ctx.newPage();
      await page.goto(url, { waitUntil: 'load' });
      const html = await page.content();
      await ctx.close();
      if (!html.includes('A static article')) throw new Error('bad render');
    };
    const reused = await Promise.all(Array.from({ length: concurrency }, async () => (await b.newContext()).newPage()));
    const reuseOne = async (w: number) => {
      await reused[w]!.goto(url, { waitUntil: 'load' });
      await reused[w]!.content();
    };
    const modes = { pool: poolOne, bare: bareOne, bareReusedPage: reuseOne } as const;
    // Warm-up (launch, code caches), then interleaved rounds so that background load on the
    // machine hits every mode alike.
    for (const one of Object.values(modes)) await runLoad(concurrency * 3, concurrency, one);
    const rounds = 4;
    const acc: Record<keyof typeof modes, { lat: number[]; wall: number }> = {
      pool: { lat: [], wall: 0 }, bare: { lat: [], wall: 0 }, bareReusedPage: { lat: [], wall: 0 },
    };
    for (let r = 0; r < rounds; r++) {
      for (const [name, one] of Object.entries(modes) as [keyof typeof modes, (w: number) => Promise<void>][]) {
        const res = await runLoad(Math.ceil(pages / rounds), concurrency, one);
        acc[name].lat.push(...res.latencies);
        acc[name].wall += res.wallMs;
      }
    }
    const fig = (k: keyof typeof modes) => summary(acc[k].lat, acc[k].wall);
    const poolFig = fig('pool');
    const bareFig = fig('bare');
    return {
      pages,
      concurrency,
      executable,
      pool: poolFig,
      bare: bareFig,
      bareReusedPage: fig('bareReusedPage'),
      ratio: +(poolFig.pagesPerSec / bareFig.pagesPerSec).toFixed(2),
      peakMemoryMb: {
        rss: Math.round((peak.rssNode + peak.rssChildren) / 2 ** 20),
        rssNode: Math.round(peak.rssNode / 2 ** 20),
        rssChromium: Math.round(peak.rssChildren / 2 ** 20),
        pss: Math.round(peakPss / 2 ** 20),
        processes: peak.processes,
      },
    };
  } finally {
    clearInterval(sampler);
    await pool.close();
    await browser?.close();
    server.close();
  }
}
