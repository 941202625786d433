import type { agentWorkflow } from './workflow';
import { TaskQueues, workflowIds } from '../common';
import { DAY_MS, type WorkflowJobSpec, ONE_RUN, isLive } from '../jobs';

/** An agent run (a root job or a sub-agent): `processing` until it ended; every end but success reads `failed` (its outcome says which). */
export const agentJob: WorkflowJobSpec<typeof agentWorkflow> = {
  kind: 'agent',
  workflowType: 'agentWorkflow',
  taskQueue: TaskQueues.control,
  workflowId: workflowIds.agent,
  start: ONE_RUN,
  resultsKeptMs: DAY_MS,
  publicStatus: (s) => (isLive(s.status) ? 'processing' : s.status === 'completed' ? 'completed' : 'failed'),
  noun: 'agent',
};
