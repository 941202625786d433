/**
 * What every job kind's contract shares: queue names, workflow-id builders, the failure record
 * and the non-retryable error kinds. Imported by the API, the worker, activities and workflow
 * code, so it must stay free of Node built-ins and I/O (workflow sandbox rule).
 */
export const TaskQueues = {
  control: 'wds-control',
  fetch: 'wds-fetch',
  browser: 'wds-browser',
  llm: 'wds-llm',
  /** The audio and video formats: downloads and ffmpeg (CPU- and disk-heavy), never on fetch workers. */
  media: 'wds-media',
} as const;
export type TaskQueue = (typeof TaskQueues)[keyof typeof TaskQueues];
export const ALL_QUEUES: TaskQueue[] = Object.values(TaskQueues);

/** Deterministic workflow ids: a retried start finds the running workflow instead of a twin. */
export const workflowIds = {
  scrape: (jobId: string) => `scrape-${jobId}`,
  crawl: (jobId: string) => `crawl-${jobId}`,
  batch: (jobId: string) => `batch-${jobId}`,
  map: (jobId: string) => `map-${jobId}`,
  parse: (jobId: string) => `parse-${jobId}`,
  extract: (jobId: string) => `extract-${jobId}`,
  crawlParams: (previewId: string) => `crawl-params-${previewId}`,
  agent: (runId: string) => `agent-${runId}`,
  monitorRun: (runId: string) => `monitor-run-${runId}`,
  /** One interact session of a scrape at a time (a new run once the previous one ended). */
  interact: (scrapeId: string) => `interact-${scrapeId}`,
};

export interface JobRef {
  jobId: string;
}

/** A failure as stored on the job for its status endpoint (kind = an @wds/errors kind). */
export interface FailureRecord {
  kind: string;
  message: string;
  code?: string;
  details?: unknown;
}

export interface RecordFailureInput {
  jobId: string;
  error: FailureRecord;
}

/**
 * Failure types that retrying cannot fix. They are the kinds of @wds/errors whose
 * retryability is false; repeated here as plain strings because workflow code may not
 * import that package's runtime. A test keeps the two in sync.
 */
export const NON_RETRYABLE_KINDS = [
  'BAD_REQUEST', 'INVALID_URL', 'FEATURE_NOT_AVAILABLE', 'UNAUTHORIZED', 'PAYMENT_REQUIRED', 'FORBIDDEN',
  'URL_BLOCKED', 'NOT_FOUND', 'CONFLICT', 'GONE', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'UNPROCESSABLE',
] as const;
