import { scrapeUrlRequestSchema } from '@wds/contracts';
import { buildDocument } from '@wds/documents';
import { fetchPage } from '@wds/fetch';
import { INSPECT_ARGS, rssAfterGcMb } from './gc';
import { startBenchStack } from './stack';
import { measureTemporalFloor } from './temporal-floor';
import { html, startFixtureSite } from '@wds/test-utils';
import { cpuByPid, cpuUsedBetween, rssMb, rssTrend, round, runConcurrent, summary, writeResult } from './stats';

/**
 * Issue 2's scrape benchmark. In one run: the engine in-process (fetch + build, the baseline),
 * POST /v2/scrape through the full stack (API → Temporal → worker → Postgres) on cache misses,
 * cache hits, throughput at concurrency 8 (with CPU ms per scrape by process), and API/worker RSS over 2,000 scrapes.
 * Targets: stack p50 − engine p50 ≤ 25 ms; cache-hit p50 < 10 ms; RSS growth ≤ 50 MB, judged
 * by RSS right after a full collection before and after the 2,000 scrapes (rssAfterGcMb); plain
 * samples every 50 scrapes, their trend (rssTrend) and peak are reported beside it.
 */
const N_LAT = Number(process.env.BENCH_N ?? 200);
const N_RSS = Number(process.env.BENCH_RSS_N ?? 2000);

function page(i: number) {
  const paras = Array.from({ length: 40 }, (_, k) => `<p>Paragraph ${k} of page ${i} with <a href="/p/${k}">a link</a> and some <b>bold</b> words.</p>`).join('\n');
  return `<!doctype html><html lang="en"><head><title>Bench ${i}</title><meta name="description" content="d"></head><body><nav><a href="/">home</a></nav><main><h1>Page ${i}</h1>${paras}</main><footer>f</footer></body></html>`;
}

export async function runScrapeBench() {
  const site = await startFixtureSite({ '/static': html(page(0)) });
  const url = site.url('/static');
  const opts = scrapeUrlRequestSchema.parse({ url, maxAge: 0 });

  // Baseline: the same engine, in this process.
  const engine = await runConcurrent(N_LAT, 1, async () => {
    const p = await fetchPage({ url, timeoutMs: 30_000, skipTlsVerification: true, allowPrivateNetwork: true, maxBodyBytes: 20 << 20 });
    buildDocument({ requestedUrl: url, finalUrl: p.finalUrl, statusCode: p.statusCode, contentTypeHeader: p.headers['content-type'] ?? '', body: p.body }, opts, { scrapeId: 'x', engine: 'http' });
  });

  // The embedded default keeps Temporal in a SQLite file; measure that, as users run it.
  const stack = await startBenchStack({ temporalInMemory: process.env.BENCH_TEMPORAL_MEMORY === '1', nodeArgs: INSPECT_ARGS });
  const { base, headers, api, worker } = stack;
  const post = async (body: unknown) => {
    const r = await fetch(`${base}/v2/scrape`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (r.status !== 200) throw new Error(`scrape failed: ${r.status} ${await r.text()}`);
    await r.arrayBuffer();
  };

  try {
    await runConcurrent(20, 1, () => post({ url, maxAge: 0 })); // warm-up (bundles, JIT, pools)
    const miss = await runConcurrent(N_LAT, 1, () => post({ url, maxAge: 0 }));
    await post({ url });
    const hit = await runConcurrent(N_LAT, 1, () => post({ url }));
    const t0 = performance.now();
    const cpu0 = cpuByPid({ ...stack.roles, bench: process.pid });
    const conc = await runConcurrent(N_LAT, 8, () => post({ url, maxAge: 0 }));
    const throughput = N_LAT / ((performance.now() - t0) / 1000);
    // Where a scrape's CPU goes, per process (the bench's own: the client and the fixture site).
    const cpuMsPerScrape = Object.fromEntries(Object.entries(cpuUsedBetween(cpu0, cpuByPid({ ...stack.roles, bench: process.pid }))).map(([k, v]) => [k, round((v * 1000) / N_LAT, 2)]));

    const afterGc = async () => ({ api: await rssAfterGcMb(api), worker: await rssAfterGcMb(worker) });
    const gcBefore = await afterGc();
    const rss = { api: [rssMb(api.child.pid!)], worker: [rssMb(worker.child.pid!)] };
    await runConcurrent(N_RSS, 8, async (i) => {
      await post({ url, maxAge: i % 2 ? 0 : undefined });
      if (i % 50 === 49) {
        rss.api.push(rssMb(api.child.pid!));
        rss.worker.push(rssMb(worker.child.pid!));
      }
    });
    const gcAfter = await afterGc();
    const rssReport = (xs: number[]) => ({ first: xs[0], last: xs.at(-1), peak: Math.max(...xs), trendGrowth: rssTrend(xs), series: xs });

    const floor = summary(await measureTemporalFloor(stack.temporalAddress, N_LAT));
    const e = summary(engine), m = summary(miss), h = summary(hit);
    const result = {
      bench: 'scrape',
      temporalPersistence: process.env.BENCH_TEMPORAL_MEMORY === '1' ? 'memory' : 'sqlite',
      // The stack inherits this environment: WDS_SCRAPE_FETCH=local npm run bench -- scrape.
      scrapeFetch: process.env.WDS_SCRAPE_FETCH ?? 'direct',
      engineInProcessMs: e,
      fullStackMissMs: m,
      fullStackOverheadP50Ms: round(m.p50 - e.p50),
      ratioStackToEngineP50: round(m.p50 / e.p50),
      // Temporal's part of that overhead: start → an activity on a second queue begins (no work).
      temporalFloorMs: floor,
      overheadBeyondTemporalP50Ms: round(m.p50 - e.p50 - floor.p50),
      cacheHitMs: h,
      concurrency8: { scrapesPerSec: round(throughput, 1), latencyMs: summary(conc), cpuMsPerScrape },
      rssMb: {
        scrapes: N_RSS,
        afterFullGc: { before: gcBefore, after: gcAfter, growthApi: round(gcAfter.api - gcBefore.api, 1), growthWorker: round(gcAfter.worker - gcBefore.worker, 1) },
        samples: rss.api.length,
        api: rssReport(rss.api),
        worker: rssReport(rss.worker),
      },
      targets: { overheadP50Ms: 25, cacheHitP50Ms: 10, rssGrowthMb: 50 },
    };
    console.log(JSON.stringify(result, null, 2));
    console.log(`written to ${writeResult('scrape', result)}`);
    return result;
  } finally {
    await stack.stop();
    await site.close();
  }
}
