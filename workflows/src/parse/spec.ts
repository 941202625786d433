import type { parseWorkflow } from './workflow';
import { TaskQueues, workflowIds } from '../common';
import { type WorkflowJobSpec, ONE_RUN, pendingUntilEnded } from '../jobs';

/** POST /v2/parse waits for it; no status endpoint. */
export const parseJob: WorkflowJobSpec<typeof parseWorkflow> = {
  kind: 'parse',
  workflowType: 'parseWorkflow',
  taskQueue: TaskQueues.control,
  workflowId: workflowIds.parse,
  start: ONE_RUN,
  resultsKeptMs: null,
  publicStatus: pendingUntilEnded,
  noun: 'parse',
};
