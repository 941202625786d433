import type { crawlParamsWorkflow } from './workflow';
import { TaskQueues, workflowIds } from '../common';
import { type WorkflowJobSpec, ONE_RUN, pendingUntilEnded } from '../jobs';

/** Crawl options from a prompt: the API waits for it. */
export const crawlParamsJob: WorkflowJobSpec<typeof crawlParamsWorkflow> = {
  kind: 'crawl_params',
  workflowType: 'crawlParamsWorkflow',
  taskQueue: TaskQueues.control,
  workflowId: workflowIds.crawlParams,
  start: ONE_RUN,
  resultsKeptMs: null,
  publicStatus: pendingUntilEnded,
  noun: 'crawl prompt',
};
