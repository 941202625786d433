import type { mapWorkflow } from './workflow';
import { TaskQueues, workflowIds } from '../common';
import { type WorkflowJobSpec, ONE_RUN, pendingUntilEnded } from '../jobs';

/** POST /v2/map waits for it; no status endpoint. */
export const mapJob: WorkflowJobSpec<typeof mapWorkflow> = {
  kind: 'map',
  workflowType: 'mapWorkflow',
  taskQueue: TaskQueues.control,
  workflowId: workflowIds.map,
  start: ONE_RUN,
  resultsKeptMs: null,
  publicStatus: pendingUntilEnded,
  noun: 'map',
};
