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
}

export interface CrawlProgress {
  seeded: boolean;
  batches: number;
  runs: number;
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
}

export interface FrontierState {
  queued: number;
  leased: number;
  nextLeaseExpiryMs: number | null;
  status: string;
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

/** wds-control: bookkeeping only, no outbound requests. */
export interface CrawlControlActivities {
  frontierState(input: JobRef): Promise<FrontierState>;
  finishJob(input: FinishJobInput): Promise<{ status: string }>;
}
