import type { CrawlPlan } from '@wds/workflows/contracts';

/**
 * Turns a job's concurrency options into the workflow's window: `maxConcurrency` pages at once
 * in total (default: the deployment's), split into batch activities of up to 10 concurrent
 * pages; `delay` (seconds) forces one page at a time, as Firecrawl documents.
 */
export function planCrawl(o: { maxConcurrency?: number | null; delay?: number | null }, defaultConcurrency: number): CrawlPlan {
  if (o.delay && o.delay > 0) return { window: 1, batchSize: 5, concurrency: 1, delayMs: Math.round(o.delay * 1000) };
  const total = o.maxConcurrency ?? defaultConcurrency;
  const concurrency = Math.min(total, 10);
  return { window: Math.ceil(total / concurrency), batchSize: concurrency * 2, concurrency, delayMs: 0 };
}
