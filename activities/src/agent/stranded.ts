import { liveAgentJobsOlderThan } from '@wds/db';
import { workflowIds } from '@wds/workflows/common';
import { startSweepLoop, workflowState, type StrandedSweeperOptions } from '../stranded/sweep';
import { createAgentControl } from './control';

const PER_SWEEP = 200;

/**
 * Ends agent jobs no workflow runs (the API stored the run and died before starting it, or the
 * workflow was terminated): without this they would say `processing` for ever. The end is the
 * workflow's own `finishAgent` (state `internal`, retryable; reservations released, terminal
 * events written), which only a running row accepts, so two sweepers never end a job twice.
 * Temporal unreachable: the sweep is skipped.
 */
export function startStrandedAgentSweeper(o: StrandedSweeperOptions): { stop(): Promise<void> } {
  const control = createAgentControl({ db: o.db, tools: async () => ({ search: false, browser: false }) });
  return startSweepLoop(o.everyMs, async (stopped) => {
    for (const id of await liveAgentJobsOlderThan(o.db, o.graceMs, PER_SWEEP)) {
      if (stopped()) return;
      const state = await workflowState(o.temporal, o.namespace, workflowIds.agent(id));
      if (state === 'running') continue;
      const reason = state === 'missing'
        ? 'The agent failed: its workflow was never started (the API stopped before starting it). Retry the request.'
        : 'The agent failed: its workflow ended without finishing it (terminated or timed out).';
      const end = await control.finishAgent({ runId: id, state: 'internal', message: reason, retryable: true });
      if (end.state === 'internal' || end.state === 'cancelled') o.onFailed?.(id, reason);
    }
  });
}
