/**
 * Monitors' contract. Postgres holds every monitor's schedule, pause state, next due time and
 * running-check slot; a few shared Temporal Schedules (one per shard) tick, and each tick's
 * workflow claims the monitors that are due and starts one run for their checks. A run is a
 * frontier job (the crawl loop, ../crawl/loop.ts) over the checks' pages, fetched in batches:
 * checks that fire on the same tick share one workflow and its batch activities.
 */
import type { JobRef } from '../common';
import type { CrawlPlan, CrawlProgress, FinishJobInput, FrontierState, ProcessBatchInput, ProcessBatchResult } from '../crawl/contracts';

/** The Schedule of shard `shard` of `shards` starts this every tick. */
export interface MonitorTickInput {
  shard: number;
  shards: number;
  /** Checks one run takes at most; a tick with more due starts more runs. */
  maxChecksPerRun: number;
  /** Monitors overdue by more than this are not run late: they move on to their next due time. */
  catchupWindowMs: number;
  plan: CrawlPlan;
  /** The Schedule's interval (old checks are pruned on one tick an hour). */
  tickMs: number;
}

export interface ClaimDueInput {
  /** The run to create (a workflow-made id, so a retried claim finds its first attempt's run). */
  runId: string;
  shard: number;
  shards: number;
  limit: number;
  catchupWindowMs: number;
}

export interface ClaimDueResult {
  /** Checks the run holds (0: no run was created). */
  checks: number;
  /** Pages those checks start with. */
  pages: number;
  /** Checks recorded as skipped (overlap, no credits). */
  skipped: number;
  /** The limit was reached: more monitors may be due. */
  more: boolean;
}

export interface MonitorRunInput {
  runId: string;
  plan: CrawlPlan;
  progress?: CrawlProgress;
}

export interface MonitorTickResult {
  runs: number;
  checks: number;
  skipped: number;
}

/** wds-control: bookkeeping in Postgres, no outbound requests. */
export interface MonitorControlActivities {
  claimDueMonitors(input: ClaimDueInput): Promise<ClaimDueResult>;
  monitorRunState(input: JobRef): Promise<FrontierState>;
  finishMonitorRun(input: FinishJobInput): Promise<{ status: string }>;
  /** Deletes checks older than their monitor's retention (bounded per call). */
  pruneMonitorChecks(input: { limit: number }): Promise<{ deleted: number }>;
}

/** wds-fetch: a batch of check pages (conditional requests, hashes, documents of changed pages). */
export interface MonitorFetchActivities {
  checkMonitorPages(input: ProcessBatchInput): Promise<ProcessBatchResult>;
}

export const monitorScheduleIds = {
  tick: (shard: number) => `wds-monitor-tick-${shard}`,
};

/**
 * How a run fetches its checks' pages: a few batches in flight, each leasing up to 100 pages
 * and fetching 50 at a time. Batches are what make an unchanged check cheap: one claim, one
 * history read and two writes are shared by a batch's pages.
 */
export const MONITOR_RUN_PLAN: CrawlPlan = { window: 4, batchSize: 100, concurrency: 50, delayMs: 0 };
