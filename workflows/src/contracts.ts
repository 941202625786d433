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
};

/** Ids, not data: the options live in the scrape_jobs row written by the API. */
export interface ScrapeWorkflowInput {
  jobId: string;
  /** The request's timeout; bounds the activity including retries. */
  timeoutMs: number;
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
