import type { interactWorkflow } from './workflow';
import { TaskQueues, workflowIds } from '../common';
import { type WorkflowJobSpec, pendingUntilEnded } from '../jobs';

/** An interact session of a scrape, keyed by the scrape id: one at a time, a new one once the last ended. */
export const interactJob: WorkflowJobSpec<typeof interactWorkflow> = {
  kind: 'interact',
  workflowType: 'interactWorkflow',
  taskQueue: TaskQueues.control,
  workflowId: workflowIds.interact,
  start: { conflict: 'USE_EXISTING', reuse: 'ALLOW_DUPLICATE' },
  resultsKeptMs: null,
  publicStatus: pendingUntilEnded,
  noun: 'interact session',
};
