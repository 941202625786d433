/**
 * The crawl and batch-scrape jobs' contract: the frontier and documents live in Postgres; the
 * workflow carries ids, the plan and counters, and calls these activities.
 */
import type { JobRef } from '../common';

/** How a crawl runs, decided by the API from the request; fixed for the job's life. */
export interface CrawlPlan {
  /** Batch activities in flight at once. */
  window: number;
  /** URLs one batch activity leases. */
  batchSize: number;
  /** Pages fetched at once inside one batch. */
  concurrency: number;
  /** Politeness delay between fetches of one batch (ms); the plan forces concurrency 1 with it. */
  delayMs: number;
  /** Batches one workflow run may start before it continues as new (bounds its history). */
  batchesPerRun?: number;
  /**
   * Set when the job's pages need model-made formats (json, summary, question, highlights,
   * onlyCleanContent): the page handler stores each page as pending LLM work, and the loop keeps
   * a second window of LLM batches (wds-llm) enriching them.
   */
  llm?: LlmPlan;
  /**
   * The browser window: page activities on wds-browser in flight at once for this job, one page
   * each (pages whose options need the browser, or whose HTML looks script-rendered, are handed
   * to it by the fetch batches). Absent in jobs started before it existed: a default applies.
   */
  browser?: BrowserPlan;
}

export interface BrowserPlan {
  window: number;
}

export interface LlmPlan {
  /** LLM batch activities in flight at once: the job's model steps at a time (each batch runs one page at a time). */
  window: number;
  /** Pages one LLM batch enriches (one after another) before it returns. */
  batchSize: number;
}

export interface CrawlProgress {
  seeded: boolean;
  batches: number;
  runs: number;
  /** Browser pages claimable when the last run handed over: the next run starts its browser window on them. */
  browserReady?: number;
}

/** Ids and small numbers only: the frontier and documents live in Postgres. */
export interface CrawlWorkflowInput {
  jobId: string;
  kind: 'crawl' | 'batch';
  plan: CrawlPlan;
  progress?: CrawlProgress;
}

export interface CrawlWorkflowResult {
  status: string;
  batches: number;
}

export interface ProcessBatchInput {
  jobId: string;
  batchSize: number;
  concurrency: number;
  delayMs: number;
}

export interface ProcessBatchResult {
  claimed: number;
  succeeded: number;
  failed: number;
  /** The job is no longer running (cancelled or ended): claim nothing more. */
  stopped: boolean;
  /** Pages this batch stored as pending LLM work (absent: none). */
  llmQueued?: number;
  /** Pages this batch handed to the browser engine (absent: none). */
  browserQueued?: number;
  /** URLs its pages added to the frontier (browser pages report it: the fetch window may have work again). */
  linksAdded?: number;
  /** A browser page's report that more pages wait for the browser. */
  moreBrowserPages?: boolean;
}

export interface FrontierState {
  queued: number;
  leased: number;
  nextLeaseExpiryMs: number | null;
  status: string;
  /** Pending LLM work (absent in histories of jobs without it). */
  llm?: { pending: number; ready: number; nextReadyMs: number | null };
  /** Pages with the browser engine, waiting or rendering (absent when there are none). */
  browser?: { pending: number; ready: number; nextReadyMs: number | null };
}

/** One browser page (wds-browser): render one page the fetch batches handed over, and store it. */
export interface BrowserPageInput {
  jobId: string;
  /** The job's politeness delay (ms), waited before the render. */
  delayMs: number;
}

/** One LLM batch (wds-llm): enrich up to `batchSize` pending pages of the job, one at a time. */
export interface LlmBatchInput {
  jobId: string;
  batchSize: number;
}

export interface LlmBatchResult {
  claimed: number;
  /** Enriched documents stored. */
  stored: number;
  /** Pages whose model step failed for good (now failed pages with their error). */
  failed: number;
  /** Pages given back after a retryable failure or for the token limit, to be tried again later. */
  deferred: number;
  /** The batch ended because nothing was ready to claim (everything is taken, backing off, or done). */
  drained: boolean;
  /** The provider failed or the token window is full: start no LLM batch of this job for this long. */
  waitMs?: number;
  stopped: boolean;
}

export interface FinishJobInput {
  jobId: string;
  outcome: 'completed' | 'failed' | 'cancelled';
  error?: string;
}

/** wds-fetch: these make outbound requests. */
export interface CrawlActivities {
  seedJob(input: JobRef): Promise<number>;
  processBatch(input: ProcessBatchInput): Promise<ProcessBatchResult>;
}

/** wds-llm: model calls, with their slots and rate limits, never on the fetch queue. */
export interface CrawlLlmActivities {
  runLlmBatch(input: LlmBatchInput): Promise<LlmBatchResult>;
}

/**
 * wds-browser: one page per activity, so a worker's activity slots bound its renders (its pool's
 * pages, plus a few waiting for one), and a job's JavaScript pages never hold the fetch slots
 * other jobs' pages need. The result has a
 * batch's shape (claimed 0 or 1).
 */
export interface CrawlBrowserActivities {
  renderCrawlPage(input: BrowserPageInput): Promise<ProcessBatchResult>;
}

/** wds-control: bookkeeping only, no outbound requests. */
export interface CrawlControlActivities {
  frontierState(input: JobRef): Promise<FrontierState>;
  finishJob(input: FinishJobInput): Promise<{ status: string }>;
}
