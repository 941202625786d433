/**
 * Everything the API needs to talk to workflows: queue names, id builders, inputs and
 * outputs. Imported by the API, the worker and workflow code, so it must stay free of
 * Node built-ins and I/O (workflow sandbox rule).
 */
export const TaskQueues = {
  control: 'wds-control',
  fetch: 'wds-fetch',
  browser: 'wds-browser',
  llm: 'wds-llm',
} as const;
export type TaskQueue = (typeof TaskQueues)[keyof typeof TaskQueues];
export const ALL_QUEUES: TaskQueue[] = Object.values(TaskQueues);

export const workflowIds = {
  scrape: (jobId: string) => `scrape-${jobId}`,
  crawl: (jobId: string) => `crawl-${jobId}`,
  batch: (jobId: string) => `batch-${jobId}`,
  map: (jobId: string) => `map-${jobId}`,
};

/** Ids, not data: the options live in the scrape_jobs row written by the API. */
export interface ScrapeWorkflowInput {
  jobId: string;
  /** The request's timeout; bounds the activity including retries. */
  timeoutMs: number;
  /**
   * Where the HTTP fetch runs (WDS_SCRAPE_FETCH on the API): `queue` (default) as an activity
   * on wds-fetch; `local` as a local activity on the wds-control worker running the workflow,
   * which skips an activity dispatch and a workflow task (for deployments whose control
   * workers also fetch, e.g. the embedded default). Browser renders always go to wds-browser.
   */
  fetch?: 'queue' | 'local';
}

export interface ScrapeWorkflowResult {
  jobId: string;
  statusCode: number;
}

export interface ScrapePageInput {
  jobId: string;
}
export type ScrapePageResult = ScrapeWorkflowResult;

export interface RecordScrapeFailureInput {
  jobId: string;
  error: { kind: string; message: string; code?: string; details?: unknown };
}

/**
 * Failure types that retrying cannot fix. They are the kinds of @wds/errors whose
 * retryability is false; repeated here as plain strings because workflow code may not
 * import that package's runtime. A test keeps the two in sync.
 */
export const NON_RETRYABLE_KINDS = [
  'BAD_REQUEST', 'INVALID_URL', 'FEATURE_NOT_AVAILABLE', 'UNAUTHORIZED', 'PAYMENT_REQUIRED', 'FORBIDDEN',
  'URL_BLOCKED', 'NOT_FOUND', 'CONFLICT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'UNPROCESSABLE',
] as const;

// ---- crawl and batch scrape -------------------------------------------------------------

export interface JobRef {
  jobId: string;
}

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

// ---- map ---------------------------------------------------------------------------------

export interface MapWorkflowInput {
  jobId: string;
  timeoutMs: number;
}

// ---- parse (POST /v2/parse) ---------------------------------------------------------------

export const parseWorkflowId = (jobId: string) => `parse-${jobId}`;

/** Ids, not data: the upload and its options live in the parse_jobs row written by the API. */
export interface ParseWorkflowInput {
  jobId: string;
  /** The request's timeout; bounds the activity including retries. */
  timeoutMs: number;
}

export interface ParseWorkflowResult {
  jobId: string;
  creditsUsed: number;
}

export type ParseUploadInput = JobRef;
export type ParseUploadResult = ParseWorkflowResult;

// ---- scrape: cache hits that need a worker -----------------------------------------------

/**
 * Written by the API into scrape_jobs.options (as `cacheLookup`) when a cached page needs
 * work that belongs on a worker (PDF conversion): the activity reads the page cache itself,
 * with the window the API decided, instead of fetching.
 */
export interface ScrapeCacheLookup {
  /** Upper bound of the copy's age; absent = any age (minAge without maxAge). */
  maxAgeMs?: number;
  minAgeMs?: number;
  /** What a miss means when the copy is gone by then: a fresh fetch, or the spec's 404s. */
  onMiss: 'fetch' | 'lockdown' | 'minAge';
}

// ---- scrape: engine choice and the browser engine ------------------------------------------

export { planEngine, requiredBrowserNeeds, preferredBrowserNeeds, type BrowserNeed, type EnginePlan } from './scrape/engine';

/** The fetch activity of a scrape (wds-fetch). */
export interface FetchPageInput extends ScrapePageInput {
  /** 'http': never escalate (the fallback after no browser worker picked the render up). */
  engine?: 'http';
  /** Epoch ms the scrape must finish by (the fallback gets what is left of the budget). */
  deadlineMs?: number;
}

export interface FetchPageResult extends ScrapePageResult {
  /**
   * Set when the browser must (required) or should (not required) produce the page instead;
   * the job is then not completed. Flags only: the fetched HTML never travels through Temporal.
   */
  needsBrowser?: { required: boolean; reasons: import('./scrape/engine').BrowserNeed[] };
}

/** The browser activity of a scrape (wds-browser): renders, stores files, completes the job. */
export interface RenderPageInput {
  jobId: string;
  /** Epoch ms by which the scrape must be done (its start + the request's timeout); retries share it. */
  deadlineMs: number;
}
export type RenderPageResult = ScrapePageResult;
