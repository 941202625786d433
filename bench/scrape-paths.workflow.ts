import { condition, defineUpdate, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';

// A scrape's shape without its work, in the ways Temporal can carry it (bench/scrape-paths.ts).
interface Work {
  work(id: string): Promise<void>;
}
const remote = proxyActivities<Work>({ taskQueue: 'paths-fetch', startToCloseTimeout: '10s' });
const local = proxyLocalActivities<Work>({ startToCloseTimeout: '10s' });

/** Today's queue mode: the workflow on one queue, the fetch activity on another. */
export async function viaActivity(id: string): Promise<void> {
  await remote.work(id);
}

/** WDS_SCRAPE_FETCH=local: the fetch as a local activity of the workflow's worker. */
export async function viaLocal(id: string): Promise<void> {
  await local.work(id);
}

export const scrapeUpdate = defineUpdate<void, [string]>('scrape');

/** Update-with-start: the caller's update runs the work and answers before the workflow ends. */
export async function viaUpdate(): Promise<void> {
  let done = false;
  setHandler(scrapeUpdate, async (id: string) => {
    await local.work(id);
    done = true;
  });
  await condition(() => done);
}
