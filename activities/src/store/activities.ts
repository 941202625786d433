import { failMapJob, failScrapeJob, type Db } from '@wds/db';
import type { RecordFailureInput } from '@wds/workflows/common';
import type { MapStoreActivities } from '@wds/workflows/map';
import type { ScrapeStoreActivities } from '@wds/workflows/scrape';

/** wds-control bookkeeping of request-scoped jobs: a failure is stored for the job's status endpoint. */
export function createStoreActivities(deps: { db: Db }): ScrapeStoreActivities & MapStoreActivities {
  return {
    async recordScrapeFailure({ jobId, error }: RecordFailureInput) {
      await failScrapeJob(deps.db, jobId, error);
    },
    async recordMapFailure({ jobId, error }: RecordFailureInput) {
      await failMapJob(deps.db, jobId, error);
    },
  };
}
