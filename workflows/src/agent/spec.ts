import type { AgentState } from '@wds/contracts';
import type { agentWorkflow } from './workflow';
import { TaskQueues, workflowIds } from '../common';
import { DAY_MS, type JobState, type TerminalStatus, type WorkflowJobSpec, ONE_RUN, isLive } from '../jobs';

/**
 * An agent run (a root job or a sub-agent): `processing` until it ended; every end but success
 * reads `failed` (its outcome says which). Kept 24 hours after its thread's last turn ended (a
 * root's `expires_at`, held NULL while a turn of its thread runs); a sub-agent has no expiry of its
 * own: its job row's parent is its root, and it goes with it.
 */
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

/** How a run ended (AGENT_STATES of @wds/contracts but the two live ones). */
export type AgentEndState = Exclude<AgentState, 'running' | 'cancelling'>;

/**
 * A run's state word (@wds/contracts AGENT_STATES) from its job row: `succeeded` is a completed
 * job, `cancelled` a cancelled one, every other end a failed job whose outcome is the word.
 */
export function agentState(s: JobState): AgentState {
  switch (s.status) {
    case 'queued':
    case 'running':
      return 'running';
    case 'cancelling':
      return 'cancelling';
    case 'completed':
      return 'succeeded';
    case 'cancelled':
      return 'cancelled';
    case 'failed':
      return (s.outcome ?? 'internal') as AgentEndState;
  }
}

/** The job status (and outcome) a run's end is written as: the inverse of agentState. */
export function agentJobEnd(state: AgentEndState): { status: TerminalStatus; outcome: string | null } {
  if (state === 'succeeded') return { status: 'completed', outcome: null };
  if (state === 'cancelled') return { status: 'cancelled', outcome: null };
  return { status: 'failed', outcome: state };
}
