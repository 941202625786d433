/** The parse job's contract (POST /v2/parse): the upload and its options live in the parse_jobs row; ids cross Temporal, never bytes. */
import type { JobRef, RecordFailureInput } from '../common';

export interface ParseWorkflowInput {
  jobId: string;
  /** The request's timeout; bounds the activity including retries. */
  timeoutMs: number;
}

export interface ParseWorkflowResult {
  jobId: string;
  creditsUsed: number;
}

/** wds-fetch. */
export interface ParseActivities {
  parseUpload(input: JobRef): Promise<ParseWorkflowResult>;
  recordParseFailure(input: RecordFailureInput): Promise<void>;
}
