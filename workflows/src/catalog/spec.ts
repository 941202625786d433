import type { catalogWorkflow } from './workflow';
import { TaskQueues } from '../common';
import { type WorkflowJobSpec, pendingUntilEnded } from '../jobs';

/** A catalog-mode request, keyed by team and x-request-id (`<teamId>-<requestId>`): one open run per key; a new run after an ended one only when the API decided (a request refused for credits leaves no record). */
export const catalogJob: WorkflowJobSpec<typeof catalogWorkflow> = {
  kind: 'catalog',
  workflowType: 'catalogWorkflow',
  taskQueue: TaskQueues.control,
  workflowId: (key: string) => `catalog-${key}`,
  start: { conflict: 'FAIL', reuse: 'ALLOW_DUPLICATE' },
  resultsKeptMs: null,
  publicStatus: pendingUntilEnded,
  noun: 'catalog request',
};
