/**
 * Issue 19: a crawl of a script-rendered site through the full stack (API → Temporal → fetch
 * worker → browser worker → Postgres) against the bare browser pool rendering the same pages
 * in this process, interleaved A/B/A/B in one run. Target: the stack ≥ 70% of the bare pool's
 * pages/s. Also the peak memory of the browser worker (its Node process and its Chromium).
 *
 *   npm run bench -- browser      (BENCH_BROWSER_CRAWL_PAGES, default 500; BENCH_BROWSER_CRAWL_ROUNDS,
 *                                  default 2; the pool size is BENCH_BROWSER_CONCURRENCY, default two per core)
 *
 * The site (bench/site-server.ts in `js` mode, its own process) serves every page as an empty app
 * root plus a script that writes its heading, text and links: the crawl discovers pages only from
 * rendered DOMs, and each page is fetched over HTTP first, found script-rendered and handed to
 * the browser window — the whole per-page path. The bare pool renders the same URLs as a flat
 * list with as many renders at once as the browser worker's pool has pages.
 */
import { loadavg } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { BrowserPool } from '@wds/browser';
import { spawnApp, stopChild, type AppProcess } from '@wds/launch';
import { activityResultsOf } from '@wds/test-utils';
import { workflowIds } from '@wds/workflows/common';
import { startSite } from './crawl';
import { startBenchStack, type BenchStack } from './stack';
import { cpuByPid, cpuUsedBetween, round } from './stats';
import { treeMemory, type TreeMemory } from './tree-memory';

export interface BrowserCrawlFigures {
  pages: number;
  rounds: number;
  /** Renders at once: the browser worker's WDS_BROWSER_PAGES and the bare pool's maxConcurrentPages. */
  poolPages: number;
  stack: { pagesPerSec: number[]; mean: number; renderedPages: number[]; fetchBatches: FetchBatches[] };
  barePool: { pagesPerSec: number[]; mean: number };
  /** Mean stack pages/s ÷ mean bare pool pages/s (target ≥ 0.7). */
  ratio: number;
  /** Peak memory of the browser worker during the stack's crawls (its process tree: Node + Chromium). */
  browserWorkerMb: { rss: number; rssNode: number; rssChromium: number; pss: number; processes: number };
  loadAverage: { atStart: number[]; atEnd: number[] };
  /**
   * CPU ms per page by process group, summed over the rounds: the stack's crawls (API, fetch
   * worker, browser worker with its Chromium, Postgres, Temporal, the site) and the bare pool's
   * runs (this process with its Chromium, the site). On 2 cores the stack's own work takes CPU
   * from Chromium, so this says where the gap to the bare pool goes.
   */
  cpuMsPerPage: { stack: Record<string, number>; barePool: Record<string, number> };
}

/** A crawl's fetch batch activities, and those that claimed nothing (each a wasted activity and its history events). */
export interface FetchBatches {
  batches: number;
  empty: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function fetchBatchesOf(stack: BenchStack, jobId: string): Promise<FetchBatches> {
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    const h = new Client({ connection }).workflow.getHandle(workflowIds.crawl(jobId));
    const r = (await activityResultsOf<{ claimed: number }>(h, 'processBatch')).filter((b) => b !== undefined);
    return { batches: r.length, empty: r.filter((b) => b.claimed === 0).length };
  } finally {
    await connection.close();
  }
}

/** One crawl of the whole site through the API; pages/s from the start request to `completed`. */
async function stackCrawl(stack: BenchStack, origin: string, pages: number): Promise<{ pagesPerSec: number; rendered: number; fetchBatches: FetchBatches }> {
  const t0 = performance.now();
  const res = await fetch(`${stack.base}/v2/crawl`, {
    method: 'POST',
    headers: stack.headers,
    // maxAge 0: every round renders afresh instead of reading the previous round's pages from the cache.
    body: JSON.stringify({ url: `${origin}/p/0`, limit: pages, sitemap: 'skip', crawlEntireDomain: true, maxConcurrency: 20, scrapeOptions: { formats: ['markdown'], maxAge: 0 } }),
  });
  const { id } = (await res.json()) as { id: string };
  for (;;) {
    // Counters only (a skip past the end, as the other crawl benches poll): a full status page is
    // every document so far, and reading it five times a second took CPU from the crawl it measures.
    const s = (await (await fetch(`${stack.base}/v2/crawl/${id}?skip=1000000`, { headers: stack.headers })).json()) as { status: string; completed: number };
    if (s.status !== 'scraping') {
      const secs = (performance.now() - t0) / 1000;
      if (s.status !== 'completed') throw new Error(`crawl ${id} ended ${s.status}`);
      return { pagesPerSec: round(s.completed / secs, 1), rendered: await renderedCount(stack, id), fetchBatches: await fetchBatchesOf(stack, id) };
    }
    await sleep(200);
  }
}

/** Documents of a crawl whose markdown has the script-written heading (proof they were rendered). */
async function renderedCount(stack: BenchStack, id: string): Promise<number> {
  let n = 0;
  for (let next: string | undefined = `${stack.base}/v2/crawl/${id}`; next; ) {
    const page = (await (await fetch(next, { headers: stack.headers })).json()) as { data: { markdown?: string }[]; next?: string };
    n += page.data.filter((d) => /^# Page \d+/m.test(d.markdown ?? '')).length;
    next = page.next;
  }
  return n;
}

/** The same pages rendered by a bare pool in this process, `concurrency` at once. */
async function bareRun(pool: BrowserPool, origin: string, pages: number, concurrency: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < pages) {
        const i = next++;
        const r = await pool.render({ url: `${origin}/p/${i}`, timeoutMs: 30_000, waitFor: 0, mobile: false, blockAds: true, skipTlsVerification: false, allowPrivateNetwork: true });
        if (!r.html.includes(`<h1>Page ${i}</h1>`)) throw new Error(`page ${i} was not rendered`);
      }
    }),
  );
  return round(pages / ((performance.now() - t0) / 1000), 1);
}

export async function measureBrowserCrawl(o: { pages: number; rounds: number; poolPages: number }): Promise<BrowserCrawlFigures> {
  const atStart = loadavg().map((x) => round(x));
  const site = await startSite(o.pages, { js: true, bytes: 4_000 });
  const stack = await startBenchStack();
  let browserWorker: AppProcess | undefined;
  const pool = new BrowserPool({ maxConcurrentPages: o.poolPages, recycleAfterPages: 200 });
  let peak: TreeMemory = { rssNode: 0, rssChildren: 0, pss: 0, processes: 0 };
  let sampler: NodeJS.Timeout | undefined;
  try {
    browserWorker = await spawnApp('worker', { ...stack.env, WDS_WORKER_QUEUES: 'wds-browser', WDS_BROWSER_PAGES: String(o.poolPages) });
    const pid = browserWorker.child.pid!;
    const sample = () => {
      const m = treeMemory(pid, true);
      if (m.rssNode + m.rssChildren > peak.rssNode + peak.rssChildren) peak = { ...m, pss: Math.max(m.pss, peak.pss) };
      else peak.pss = Math.max(peak.pss, m.pss);
    };
    // Warm-up: Chromium launched on both sides, code caches, the stack's first workflow.
    await bareRun(pool, site.origin, Math.min(o.pages, o.poolPages * 5), o.poolPages);
    await stackCrawl(stack, site.origin, Math.min(o.pages, 30));

    const stackRuns: Awaited<ReturnType<typeof stackCrawl>>[] = [];
    const bareRuns: number[] = [];
    const roles = { ...stack.roles, browserWorker: pid, site: site.child.pid!, bench: process.pid };
    const cpu = { stack: {} as Record<string, number>, barePool: {} as Record<string, number> };
    const measured = async <T>(into: Record<string, number>, run: () => Promise<T>): Promise<T> => {
      const before = cpuByPid(roles);
      const out = await run();
      for (const [role, s] of Object.entries(cpuUsedBetween(before, cpuByPid(roles)))) into[role] = (into[role] ?? 0) + s;
      return out;
    };
    for (let r = 0; r < o.rounds; r++) {
      bareRuns.push(await measured(cpu.barePool, () => bareRun(pool, site.origin, o.pages, o.poolPages)));
      sampler = setInterval(sample, 500);
      stackRuns.push(await measured(cpu.stack, () => stackCrawl(stack, site.origin, o.pages)));
      clearInterval(sampler);
    }
    const perPage = (c: Record<string, number>) => Object.fromEntries(Object.entries(c).filter(([, s]) => s > 0).map(([k, s]) => [k, round((s * 1000) / (o.pages * o.rounds), 1)]));
    const mean = (xs: number[]) => round(xs.reduce((a, b) => a + b, 0) / xs.length, 1);
    const stackMean = mean(stackRuns.map((x) => x.pagesPerSec));
    const bareMean = mean(bareRuns);
    return {
      pages: o.pages,
      rounds: o.rounds,
      poolPages: o.poolPages,
      stack: { pagesPerSec: stackRuns.map((x) => x.pagesPerSec), mean: stackMean, renderedPages: stackRuns.map((x) => x.rendered), fetchBatches: stackRuns.map((x) => x.fetchBatches) },
      barePool: { pagesPerSec: bareRuns, mean: bareMean },
      ratio: round(stackMean / bareMean),
      browserWorkerMb: {
        rss: Math.round((peak.rssNode + peak.rssChildren) / 2 ** 20),
        rssNode: Math.round(peak.rssNode / 2 ** 20),
        rssChromium: Math.round(peak.rssChildren / 2 ** 20),
        pss: Math.round(peak.pss / 2 ** 20),
        processes: peak.processes,
      },
      loadAverage: { atStart, atEnd: loadavg().map((x) => round(x)) },
      cpuMsPerPage: { stack: perPage(cpu.stack), barePool: perPage(cpu.barePool) },
    };
  } finally {
    clearInterval(sampler);
    await pool.close();
    if (browserWorker) await stopChild(browserWorker.child);
    await stack.stop();
    site.child.kill('SIGTERM');
  }
}
