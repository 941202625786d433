/**
 * Monitors' contract. Postgres holds every monitor's schedule, pause state, next due time and
 * running-check slot; a few shared Temporal Schedules (one per shard) tick, and each tick's
 * workflow claims the monitors that are due and starts one run for their checks. A run is a
 * frontier job (the crawl loop, ../crawl/loop.ts) over the checks' pages, fetched in batches:
 * checks that fire on the same tick share one workflow and its batch activities.
 */
import type { JobRef } from '../common';
import type { CrawlPlan, CrawlProgress, FinishJobInput, FrontierState, LlmBatchInput, LlmBatchResult, ProcessBatchInput, ProcessBatchResult } from '../crawl/contracts';

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
  /**
   * Runs of their own, one per check with crawl or search targets (their targets run first, and
   * a crawl must not hold the shared run's checks back). Absent in results of older workers.
   */
  targetRuns?: { runId: string; pages: number }[];
}

export interface MonitorRunInput {
  runId: string;
  plan: CrawlPlan;
  progress?: CrawlProgress;
  /** The run's check has crawl or search targets: they run first (the frontier job's seed step). */
  targets?: boolean;
}

/** A crawl or search target of one check of a run. */
export interface TargetRef {
  runId: string;
  checkId: string;
  targetId: string;
}

/** What the run's workflow does for a target: run its crawl job (a child crawl workflow) then collect it, or run its queries. */
export interface MonitorTargetTask {
  checkId: string;
  targetId: string;
  type: 'crawl' | 'search';
  /** Crawl targets: the crawl job (created by startMonitorTargets) and its plan. */
  crawl?: { jobId: string; plan: CrawlPlan };
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
  /** The run's targets not yet collected; creates the crawl jobs of crawl targets (idempotent). */
  startMonitorTargets(input: JobRef): Promise<MonitorTargetTask[]>;
}

/** wds-fetch: a batch of check pages (conditional requests, hashes, documents of changed pages). */
export interface MonitorFetchActivities {
  checkMonitorPages(input: ProcessBatchInput): Promise<ProcessBatchResult>;
  /**
   * A crawl target's crawl has ended: its pages become the check's (compared with their
   * versions), and pages known from earlier checks that the crawl did not reach join the run's
   * frontier as `hidden`.
   */
  collectCrawlTarget(input: TargetRef): Promise<{ pages: number; hidden: number }>;
  /** A search target: run its queries (the deployment's search) and add the results to the check. */
  runSearchTarget(input: TargetRef): Promise<{ results: number; toJudge: number }>;
}

/** wds-llm: the model step of check pages (json mode's extraction, the goal judge). */
export interface MonitorLlmActivities {
  checkMonitorModelPages(input: LlmBatchInput): Promise<LlmBatchResult>;
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
// No `llm` plan: the loop's default LLM window opens only when pages wait for their model step
// (fetch batches report them, the frontier state counts them), which needs an LLM configured; a
// plan with one would start LLM batches after every continue-as-new, with or without a wds-llm worker.

/**
 * A crawl target as the API resolved it (stored in monitors.crawl_specs by target id): the crawl
 * request's options parsed by the crawl schema (defaults in; `scrapeOptions` the target's, never
 * reading the cache), the page limit and the crawl plan. Each check's crawl job is made from it.
 */
export interface MonitorCrawlSpec {
  url: string;
  options: Record<string, unknown> & { limit: number };
  plan: CrawlPlan;
}
