import { failMapJob, failScrapeJob, type Db } from '@wds/db';
import type { RecordScrapeFailureInput } from '@wds/workflows/contracts';
import type { StoreActivities } from '../types';

export function createStoreActivities(deps: { db: Db }): StoreActivities {
  return {
    async recordScrapeFailure({ jobId, error }: RecordScrapeFailureInput) {
      await failScrapeJob(deps.db, jobId, error);
    },
    async recordMapFailure({ jobId, error }: RecordScrapeFailureInput) {
      await failMapJob(deps.db, jobId, error);
    },
  };
}
