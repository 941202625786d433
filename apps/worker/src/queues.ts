import { createRequire } from 'node:module';
import {
  createCrawlActivities,
  createCrawlControlActivities,
  createMapActivities,
  createParseActivities,
  createScrapeActivities,
  createStoreActivities,
} from '@wds/activities';
import type { Db } from '@wds/db';
import { TaskQueues, type TaskQueue } from '@wds/workflows/contracts';
import type { WorkerOptions } from '@temporalio/worker';
import type { WorkerEnv } from './env';

const require = createRequire(import.meta.url);

/** Per queue: which workflows/activities it serves and how many slots (sized by resource profile). */
export function queueOptions(queue: TaskQueue, env: WorkerEnv, db: Db): Omit<WorkerOptions, 'connection' | 'namespace' | 'taskQueue'> | null {
  const pageDeps = { db, allowPrivateNetwork: env.WDS_ALLOW_PRIVATE_NETWORK, maxBodyBytes: env.WDS_MAX_BODY_BYTES };
  switch (queue) {
    case TaskQueues.control:
      return {
        workflowsPath: require.resolve('@wds/workflows'),
        activities: { ...createStoreActivities({ db }), ...createCrawlControlActivities({ db }) },
        maxConcurrentActivityTaskExecutions: 50,
      };
    case TaskQueues.fetch:
      return {
        activities: { ...createScrapeActivities(pageDeps), ...createCrawlActivities(pageDeps), ...createMapActivities(pageDeps), ...createParseActivities({ db }) },
        maxConcurrentActivityTaskExecutions: env.WDS_FETCH_CONCURRENCY,
      };
    default:
      // Browser and LLM queues have no activities yet; a worker asked to serve them says so.
      return null;
  }
}
