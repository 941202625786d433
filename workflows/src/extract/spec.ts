import type { extractWorkflow } from './workflow';
import { TaskQueues, workflowIds } from '../common';
import { DAY_MS, type WorkflowJobSpec, ONE_RUN, isLive } from '../jobs';

/** An extract: `processing` until it ended (its frontier is a second extension of the same job). */
export const extractJob: WorkflowJobSpec<typeof extractWorkflow> = {
  kind: 'extract',
  workflowType: 'extractWorkflow',
  taskQueue: TaskQueues.control,
  workflowId: workflowIds.extract,
  start: ONE_RUN,
  resultsKeptMs: DAY_MS,
  publicStatus: (s) => (isLive(s.status) ? 'processing' : s.status),
  noun: 'extract',
};
