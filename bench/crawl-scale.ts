import { Client, Connection } from '@temporalio/client';
import { stopChild } from '@wds/launch';
import { workflowIds } from '@wds/workflows/common';
import { startSite, startSiteCrawl } from './crawl';
import { startBenchStack } from './stack';
import { cpuByPid, cpuSecondsBetween, rssMb, rssTrend, round, writeResult } from './stats';

/**
 * Issue 5 (b): one crawl of a 100,000-page synthetic site through the full stack. It must
 * complete with the worker's and API's RSS flat (growth under 100 MB from page 10k to the end)
 * and every workflow run's history under 10,000 events (the workflow continues as new).
 */
const PAGES = Number(process.env.BENCH_SCALE_PAGES ?? 100_000);
const CONCURRENCY = Number(process.env.BENCH_CRAWL_CONCURRENCY ?? 20);
const SAMPLE_MS = 2_000;

export async function runCrawlScaleBench() {
  const site = await startSite(PAGES);
  const stack = await startBenchStack();
  const { base, api, worker, roles } = stack;
  try {
    const cpu0 = cpuByPid(roles);
    const t0 = performance.now();
    const { id, headers } = await startSiteCrawl(stack, site.origin, PAGES, CONCURRENCY);
    // RSS at every sample, labelled with the pages done then; the check compares page 10k with the end.
    const samples: { completed: number; seconds: number; apiMb: number; workerMb: number }[] = [];
    let final: { status: string; completed: number };
    for (;;) {
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
      final = (await (await fetch(`${base}/v2/crawl/${id}?skip=100000000`, { headers })).json()) as { status: string; completed: number };
      samples.push({ completed: final.completed, seconds: round((performance.now() - t0) / 1000, 1), apiMb: rssMb(api.child.pid!), workerMb: rssMb(worker.child.pid!) });
      if (samples.length % 30 === 0) process.stderr.write(`crawl-scale: ${final.completed} pages after ${samples.at(-1)!.seconds} s\n`);
      if (final.status !== 'scraping') break;
    }
    const seconds = (performance.now() - t0) / 1000;
    const cpuSeconds = cpuSecondsBetween(cpu0, cpuByPid(roles));
    const at10k = samples.find((s) => s.completed >= 10_000) ?? samples[0]!;
    const after10k = samples.filter((s) => s.completed >= 10_000);
    const maxAfter = (k: 'apiMb' | 'workerMb') => Math.max(...after10k.map((s) => s[k]));
    // Growth is the trend of the samples after page 10k (rssTrend); peaks are reported too.
    const trend = (k: 'apiMb' | 'workerMb') => rssTrend(after10k.map((s) => s[k]));

    // Every run of the workflow (it continues as new), with its history length.
    const connection = await Connection.connect({ address: stack.temporalAddress });
    const client = new Client({ connection });
    const runs: { runId: string; historyLength: number; status: string }[] = [];
    for await (const w of client.workflow.list({ query: `WorkflowId = '${workflowIds.crawl(id)}'` })) {
      runs.push({ runId: w.runId, historyLength: w.historyLength, status: w.status.name });
    }
    await connection.close();

    const result = {
      bench: 'crawl-scale',
      pages: PAGES,
      concurrency: CONCURRENCY,
      status: final.status,
      completed: final.completed,
      seconds: round(seconds, 1),
      pagesPerSec: round(final.completed / seconds, 1),
      rssMb: {
        api: { at10k: at10k.apiMb, end: samples.at(-1)!.apiMb, trendGrowth: trend('apiMb'), peakAbove10k: round(maxAfter('apiMb') - at10k.apiMb, 1) },
        worker: { at10k: at10k.workerMb, end: samples.at(-1)!.workerMb, trendGrowth: trend('workerMb'), peakAbove10k: round(maxAfter('workerMb') - at10k.workerMb, 1) },
      },
      workflowRuns: runs.length,
      maxHistoryEvents: Math.max(...runs.map((r) => r.historyLength)),
      cpuSeconds,
      targets: { rssGrowthMb: 100, historyEvents: 10_000 },
      met: {
        completed: final.status === 'completed' && final.completed === PAGES,
        rss: trend('apiMb') < 100 && trend('workerMb') < 100,
        history: runs.every((r) => r.historyLength < 10_000),
      },
      rssTimeline: samples.filter((_, i) => i % 15 === 0).map((s) => [s.completed, s.apiMb, s.workerMb]),
    };
    console.log(JSON.stringify({ ...result, rssTimeline: `${result.rssTimeline.length} samples (in the file)` }, null, 2));
    console.log(`written to ${writeResult('crawl-scale', result)}`);
    return result;
  } finally {
    await stack.stop();
    await stopChild(site.child);
  }
}
