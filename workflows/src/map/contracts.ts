/** The map job's contract (POST /v2/map): one discovery activity stores the link list in Postgres. */
import type { JobRef, RecordFailureInput } from '../common';

export interface MapWorkflowInput {
  jobId: string;
  timeoutMs: number;
}

export interface MapWorkflowResult {
  count: number;
}

/** wds-fetch. */
export interface MapActivities {
  mapSite(input: JobRef): Promise<MapWorkflowResult>;
}

/** wds-control. */
export interface MapStoreActivities {
  recordMapFailure(input: RecordFailureInput): Promise<void>;
}
