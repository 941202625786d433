import { proxyActivities } from '@temporalio/workflow';

// The shape of a scrape without its work: a workflow on one queue runs an activity on another.
const { reached } = proxyActivities<{ reached(id: string): Promise<void> }>({ taskQueue: 'floor-fetch', startToCloseTimeout: '10s' });

export async function floorWorkflow(id: string): Promise<void> {
  await reached(id);
}
