import type { CrawlPlan } from '@wds/workflows/crawl';

/**
 * Turns a job's concurrency options into the workflow's window: `maxConcurrency` pages at once
 * in total (default: the deployment's), split into batch activities of up to 10 concurrent
 * pages (ten pages per slot); `delay` (seconds) forces one page at a time, as Firecrawl documents.
 */
export function planCrawl(o: { maxConcurrency?: number | null; delay?: number | null }, defaultConcurrency: number, batchesPerRun?: number): CrawlPlan {
  const perRun = batchesPerRun ? { batchesPerRun } : {};
  if (o.delay && o.delay > 0) return { window: 1, batchSize: 5, concurrency: 1, delayMs: Math.round(o.delay * 1000), ...perRun };
  const total = o.maxConcurrency ?? defaultConcurrency;
  const concurrency = Math.min(total, 10);
  // Ten pages per slot: each batch costs a workflow task and an activity round trip through
  // Temporal, and its slots claim further URLs as they free up, so bigger batches lose nothing.
  return { window: Math.ceil(total / concurrency), batchSize: concurrency * 10, concurrency, delayMs: 0, ...perRun };
}
