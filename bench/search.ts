import { connectDb, createKey, ensureTeam, indexDocuments, searchIndex, searchIndexSize } from '@wds/db';
import { spawnApp, stopChild, type AppProcess } from '@wds/launch';
import { startSite, startSiteCrawl } from './crawl';
import { makeCorpus, makePage, makeQueries } from './search-corpus';
import { startBenchStack, type BenchStack } from './stack';
import { cpuByPid, cpuUsedBetween, round, summary, writeResult } from './stats';

/**
 * Issue 16: the own search index at scale, and what indexing costs a crawl.
 *  1. Crawl a local site (BENCH_SEARCH_CRAWL_PAGES, 2,000) through the full stack with indexing
 *     off, on, off, on (the worker restarted with WDS_SEARCH_INDEX each time; a new site process,
 *     so new URLs, per crawl: every page is fetched): pages/s each way, target on ≥ 90% of off.
 *     BENCH_SEARCH_SITES (repeated,varied): the crawl bench's site as it is (one paragraph repeated
 *     on every page, which indexing stores once) and with different text in every paragraph
 *     (site-server.ts `varied`, what indexing real pages costs); each kind off, on, off, on.
 *  2. Index BENCH_SEARCH_PAGES (100,000) generated pages (bench/search-corpus.ts: Zipf vocabulary,
 *     ~800 words, English/German/French/none) with indexDocuments, the rows the storing statements
 *     write; rows/s and index size per page (table + TOAST + GIN).
 *  3. BENCH_SEARCH_QUERIES (1,000) queries drawn from the pages (title words, body words, quoted
 *     phrases, -exclusions) through searchIndex, one at a time: p50/p95, target p95 < 50 ms;
 *     then 200 through POST /v2/search end to end.
 * BENCH_SEARCH_SKIP=crawl,index,http skips phases (index: 2 and 3); BENCH_SEARCH_ROUNDS off/on pairs per site (2).
 */
const CRAWL_PAGES = Number(process.env.BENCH_SEARCH_CRAWL_PAGES ?? 2000);
const PAGES = Number(process.env.BENCH_SEARCH_PAGES ?? 100_000);
const QUERIES = Number(process.env.BENCH_SEARCH_QUERIES ?? 1000);
const SKIP = (process.env.BENCH_SEARCH_SKIP ?? '').split(',');
const SITES = (process.env.BENCH_SEARCH_SITES ?? 'repeated,varied').split(',');
/** Off/on pairs per site (each crawl a new site process); the ratio is of the means, each pair's ratio is reported too. */
const ROUNDS = Number(process.env.BENCH_SEARCH_ROUNDS ?? 2);

/** One crawl: pages/s, and CPU ms per page of each process group (where indexing's cost lands). */
async function crawlOnce(stack: BenchStack, worker: AppProcess, origin: string, pages: number): Promise<{ pagesPerSec: number; cpuMsPerPage: Record<string, number> }> {
  const roles = { ...stack.roles, worker: worker.child.pid! };
  const cpu0 = cpuByPid(roles);
  const t0 = performance.now();
  const { id, headers } = await startSiteCrawl(stack, origin, pages, 20);
  for (;;) {
    const s = (await (await fetch(`${stack.base}/v2/crawl/${id}?skip=1000000`, { headers })).json()) as { status: string; completed: number };
    if (s.status !== 'scraping') {
      const cpu = cpuUsedBetween(cpu0, cpuByPid(roles));
      return {
        pagesPerSec: round(s.completed / ((performance.now() - t0) / 1000), 1),
        cpuMsPerPage: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, round((v * 1000) / s.completed, 2)])),
      };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Crawls with the worker's indexing off and on, alternating, in the same stack, on one kind of site. */
async function crawlPhase(stack: BenchStack, varied: boolean) {
  const runs: { indexing: boolean; pagesPerSec: number; cpuMsPerPage: Record<string, number> }[] = [];
  let worker: AppProcess = stack.worker;
  try {
    for (const indexing of Array.from({ length: 2 * ROUNDS }, (_, i) => i % 2 === 1)) {
      // A fresh site process per crawl: URLs differ (its port), so no crawl reuses another's cache or frontier.
      const site = await startSite(CRAWL_PAGES, { varied });
      try {
        await stopChild(worker.child);
        worker = await spawnApp('worker', { ...stack.env, WDS_SEARCH_INDEX: String(indexing) });
        runs.push({ indexing, ...(await crawlOnce(stack, worker, site.origin, CRAWL_PAGES)) });
      } finally {
        await stopChild(site.child);
      }
    }
  } finally {
    // The stack stops only the worker it started (stopped by the first crawl).
    await stopChild(worker.child);
  }
  const mean = (on: boolean) => runs.filter((r) => r.indexing === on).reduce((a, r) => a + r.pagesPerSec, 0) / ROUNDS;
  const pairRatios = Array.from({ length: ROUNDS }, (_, i) => round(runs[2 * i + 1]!.pagesPerSec / runs[2 * i]!.pagesPerSec));
  return { pages: CRAWL_PAGES, text: varied ? 'varied' : 'repeated', runs, pairRatios, offPagesPerSec: round(mean(false), 1), onPagesPerSec: round(mean(true), 1), ratioOnToOff: round(mean(true) / mean(false)), target: 0.9 };
}

export async function runSearchBench() {
  // The stack starts with indexing off; the crawl phase swaps workers.
  const stack = await startBenchStack({ env: { WDS_SEARCH_INDEX: 'false' } });
  const dbh = connectDb(stack.databaseUrl, { max: 4 });
  try {
    const crawl = [];
    for (const kind of SITES) if (!SKIP.includes('crawl')) crawl.push(await crawlPhase(stack, kind === 'varied'));
    if (SKIP.includes('index')) {
      const result = { bench: 'search', crawl, loadAverage: (await import('node:os')).loadavg().map((x) => round(x, 1)) };
      console.log(JSON.stringify(result, null, 2));
      console.log(`written to ${writeResult('search', result)}`);
      return result;
    }

    const teamId = await ensureTeam(dbh.db, 'bench-search');
    const corpus = makeCorpus();
    const t0 = performance.now();
    const BATCH = 250;
    let next = 0;
    let written = 0;
    // Two writers, as two workers storing pages would.
    await Promise.all(
      [0, 1].map(async () => {
        for (;;) {
          const from = next;
          next += BATCH;
          if (from >= PAGES) return;
          const docs = Array.from({ length: Math.min(BATCH, PAGES - from) }, (_, k) => makePage(corpus, from + k).document);
          written += await indexDocuments(dbh.db, teamId, docs);
          if (written % 10_000 < BATCH) process.stderr.write(`indexed ${written}\n`);
        }
      }),
    );
    const indexSecs = (performance.now() - t0) / 1000;
    await dbh.pool.query('VACUUM ANALYZE search_pages');
    const size = await searchIndexSize(dbh.db);

    const queries = makeQueries(corpus, PAGES, QUERIES);
    // Warm-up (plans, caches), not measured.
    for (const q of queries.slice(0, 20)) await searchIndex(dbh.db, { query: q, teamId, limit: 10, kind: 'web' });
    const lat: number[] = [];
    const byKind: Record<string, number[]> = {};
    let empty = 0;
    for (const q of queries) {
      const t = performance.now();
      const hits = await searchIndex(dbh.db, { query: q, teamId, limit: 10, kind: 'web' });
      const ms = performance.now() - t;
      lat.push(ms);
      const kind = q.startsWith('"') ? 'phrase' : q.includes(' -') ? 'exclusion' : q.split(' ').length === 1 ? 'oneWord' : 'words';
      (byKind[kind] ??= []).push(ms);
      if (!hits.length) empty++;
    }

    let http: ReturnType<typeof summary> | null = null;
    if (!SKIP.includes('http')) {
      // Through the route, with a key of the team whose pages were indexed.
      const { key } = await createKey(dbh.db, teamId);
      const h = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const httpLat: number[] = [];
      for (const q of queries.slice(0, 200)) {
        const t = performance.now();
        const r = await fetch(`${stack.base}/v2/search`, { method: 'POST', headers: h, body: JSON.stringify({ query: q, limit: 10 }) });
        await r.json();
        if (r.status !== 200) throw new Error(`POST /v2/search answered ${r.status}`);
        httpLat.push(performance.now() - t);
      }
      http = summary(httpLat);
    }

    const result = {
      bench: 'search',
      crawl,
      index: {
        pages: size.pages,
        generatedPages: PAGES,
        seconds: round(indexSecs, 1),
        rowsPerSec: round(PAGES / indexSecs, 0),
        bytesPerPage: Math.round(size.bytes / size.pages),
        tableBytesPerPage: Math.round(size.tableBytes / size.pages),
        indexBytesPerPage: Math.round(size.indexBytes / size.pages),
        totalMb: round(size.bytes / 1048576, 1),
      },
      queries: { ...summary(lat), empty, byKind: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, summary(v)])), target: { p95Ms: 50 } },
      httpSearch: http,
      loadAverage: (await import('node:os')).loadavg().map((x) => round(x, 1)),
    };
    console.log(JSON.stringify(result, null, 2));
    console.log(`written to ${writeResult('search', result)}`);
    return result;
  } finally {
    await dbh.close();
    await stack.stop();
  }
}
