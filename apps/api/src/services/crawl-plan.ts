import { needsLlm, type ScrapeOptions } from '@wds/contracts';
import type { BrowserPlan, CrawlPlan, LlmPlan } from '@wds/workflows/crawl';

/** Model steps of one job at a time, at most: the provider is shared by every job of the deployment. */
const MAX_LLM_WINDOW = 10;
/**
 * Pages one LLM batch enriches, one after another: a model step takes a second or more, so five
 * of them make the activity round trip through Temporal (tens of ms) negligible, while a batch
 * still returns often enough to let other jobs' steps into the wds-llm slots.
 */
const LLM_BATCH_PAGES = 5;
/**
 * Browser pages of one job in flight at once, at most: each is an activity waiting for (or holding)
 * a page of some browser worker's pool. Beyond what the fleet's pools hold they only wait in
 * Temporal's queue, so the cap bounds the history a job writes per page, not its speed.
 */
const MAX_BROWSER_WINDOW = 50;

/**
 * Turns a job's concurrency options into the workflow's window: `maxConcurrency` pages at once
 * in total (default: the deployment's), split into batch activities of up to 10 concurrent
 * pages (25 pages per slot); `delay` (seconds) forces one page at a time, as Firecrawl documents.
 */
export function planCrawl(
  o: { maxConcurrency?: number | null; delay?: number | null; scrapeOptions?: Pick<ScrapeOptions, 'formats' | 'onlyCleanContent'> },
  defaultConcurrency: number,
  batchesPerRun?: number,
): CrawlPlan {
  const total = o.maxConcurrency ?? defaultConcurrency;
  // Pages with model-made formats get an LLM window as wide as the job's concurrency (the
  // politeness `delay` is about the site, not the model provider).
  const llm: { llm?: LlmPlan } = o.scrapeOptions && needsLlm(o.scrapeOptions) ? { llm: { window: Math.min(total, MAX_LLM_WINDOW), batchSize: LLM_BATCH_PAGES } } : {};
  // Browser pages as many at once as the job's concurrency (one with a politeness delay).
  const browser: BrowserPlan = { window: o.delay && o.delay > 0 ? 1 : Math.min(total, MAX_BROWSER_WINDOW) };
  const perRun = { ...(batchesPerRun ? { batchesPerRun } : {}), ...llm, browser };
  if (o.delay && o.delay > 0) return { window: 1, batchSize: 5, concurrency: 1, delayMs: Math.round(o.delay * 1000), ...perRun };
  const concurrency = Math.min(total, 10);
  // 25 pages per slot: each batch costs a workflow task and an activity round trip through
  // Temporal, and its slots idle from the moment its budget is claimed until its last page is
  // stored and the next batch starts, so bigger batches lose less (crawl bench, 3 interleaved
  // pairs, 10 → 25 pages per slot: +2 to +7% pages/s, Temporal's CPU per page halved).
  // Two per slot when the pages wait for the model: a batch reports its pending pages when it
  // returns, and the LLM window should start on them early, not after a hundred fetches (a model
  // step costs far more than the extra round trips).
  const perSlot = llm.llm ? 2 : 25;
  return { window: Math.ceil(total / concurrency), batchSize: concurrency * perSlot, concurrency, delayMs: 0, ...perRun };
}
