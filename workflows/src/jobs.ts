/**
 * The job kernel's vocabulary, shared by every kind (DESIGN.md §3, docs/adr: one job kernel).
 * Every job is one row of the `jobs` table (packages/db schema/jobs.ts) with one of these
 * statuses; each kind declares a JobSpec (./<kind>/spec.ts, gathered in ./job-specs.ts) that says
 * which workflow runs it, how a second start behaves, how long its results are kept and how its
 * status reads in the public API. Pure: imported by workflow code, activities, the API and db.
 */
import type { Workflow } from '@temporalio/workflow';
import type { TaskQueue } from './common';

export type JobKind =
  | 'scrape'
  | 'crawl'
  | 'batch'
  | 'map'
  | 'extract'
  | 'agent'
  | 'monitor_check'
  | 'monitor_run'
  | 'interact'
  | 'parse'
  | 'catalog'
  | 'crawl_params';

/**
 * queued: stored, not picked up yet; running; cancelling: asked to stop, its workflow still
 * ending it; then one of the three terminal words, written with `finished_at`.
 */
export type JobStatus = 'queued' | 'running' | 'cancelling' | 'completed' | 'failed' | 'cancelled';
export const LIVE_STATUSES = ['queued', 'running', 'cancelling'] as const satisfies readonly JobStatus[];
export const TERMINAL_STATUSES = ['completed', 'failed', 'cancelled'] as const satisfies readonly JobStatus[];
export type LiveStatus = (typeof LIVE_STATUSES)[number];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
export const isLive = (s: JobStatus): s is LiveStatus => (LIVE_STATUSES as readonly JobStatus[]).includes(s);

/** What a status read needs of the row to say the public word. */
export interface JobState {
  status: JobStatus;
  /** The kind's finer end word, when it has one (an agent's `refused`, a check's `partial`). */
  outcome: string | null;
}

/** Firecrawl keeps a crawl's, batch scrape's, extract's and agent job's results this long after it ended. */
export const DAY_MS = 24 * 3_600_000;

/** What every kind declares: how its status reads, how long it is kept, what it is called. */
export interface JobSpec {
  kind: JobKind;
  /** How long its row and results stay after it ended (the expiry path deletes it then); null: kept. */
  resultsKeptMs: number | null;
  /** The word its status endpoint answers (unchanged from before the kernel). */
  publicStatus(s: JobState): string;
  /** What messages call it ("batch scrape"). */
  noun: string;
}

/** A kind whose jobs each run a workflow of their own (every kind but a monitor check, which its run's workflow runs). */
export interface WorkflowJobSpec<W extends Workflow = Workflow> extends JobSpec {
  /** The workflow's registered name: the one place a workflow is named by string. */
  workflowType: string;
  taskQueue: TaskQueue;
  /** Deterministic, from the job id (or the kind's own key): a retried start finds the running workflow instead of a twin. */
  workflowId(key: string): string;
  /**
   * A start of an id that is running: join it (`USE_EXISTING`) or fail (`FAIL`); of an id that
   * ended: refuse (`REJECT_DUPLICATE`: never a second run of one job) or run again.
   */
  start: { conflict: 'USE_EXISTING' | 'FAIL'; reuse: 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE' };
  /** Typing only: the workflow's argument list. */
  readonly args?: Parameters<W>;
}

/** One run per job, joined while it runs, never run twice. */
export const ONE_RUN: WorkflowJobSpec['start'] = { conflict: 'USE_EXISTING', reuse: 'REJECT_DUPLICATE' };

/** The statuses as the request-scoped kinds' rows had them: pending until ended. */
export const pendingUntilEnded = (s: JobState): string => (s.status === 'completed' || s.status === 'failed' || s.status === 'cancelled' ? s.status : 'pending');

/** Crawl and batch scrape (Firecrawl's words): `scraping` while live; a cancel reads `cancelled` at once, while the workflow still stops. */
export const crawlWords = (s: JobState): string => (s.status === 'cancelling' ? 'cancelled' : isLive(s.status) ? 'scraping' : s.status);
