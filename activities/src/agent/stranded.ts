import { liveAgentJobsOlderThan, type Db } from '@wds/db';
import { workflowIds } from '@wds/workflows/common';
import type { WorkflowDescriber } from '../crawl/stranded';
import { createAgentControl } from './control';

/** WORKFLOW_EXECUTION_STATUS_RUNNING in temporal.api.enums.v1.WorkflowExecutionStatus. */
const RUNNING = 1;
/** gRPC NOT_FOUND. */
const NOT_FOUND = 5;
const PER_SWEEP = 200;

export interface StrandedAgentSweeperOptions {
  db: Db;
  temporal: WorkflowDescriber;
  namespace: string;
  /** A job younger than this is left alone: its API may still be starting it (WDS_STRANDED_JOB_GRACE_MS). */
  graceMs: number;
  everyMs: number;
  onFailed?: (jobId: string, reason: string) => void;
}

/**
 * Ends agent jobs no workflow runs (the API stored the run and died before starting it, or the
 * workflow was terminated): without this they would say `processing` for ever. The end is the
 * workflow's own `finishAgent` (state `internal`, retryable; reservations released, terminal
 * events written), which only a running row accepts, so two sweepers never end a job twice.
 * Temporal unreachable: the sweep is skipped.
 */
export function startStrandedAgentSweeper(o: StrandedAgentSweeperOptions): { stop(): Promise<void> } {
  const control = createAgentControl({ db: o.db, tools: async () => ({ search: false, browser: false }) });
  let stopped = false;
  let wake: (() => void) | null = null;

  async function workflowOf(id: string): Promise<'running' | 'missing' | 'ended'> {
    try {
      const d = await o.temporal.workflowService.describeWorkflowExecution({ namespace: o.namespace, execution: { workflowId: workflowIds.agent(id) } });
      return d.workflowExecutionInfo?.status === RUNNING ? 'running' : 'ended';
    } catch (e) {
      if ((e as { code?: number }).code === NOT_FOUND) return 'missing';
      throw e;
    }
  }

  async function sweep() {
    for (const id of await liveAgentJobsOlderThan(o.db, o.graceMs, PER_SWEEP)) {
      if (stopped) return;
      const state = await workflowOf(id);
      if (state === 'running') continue;
      const reason = state === 'missing'
        ? 'The agent failed: its workflow was never started (the API stopped before starting it). Retry the request.'
        : 'The agent failed: its workflow ended without finishing it (terminated or timed out).';
      const end = await control.finishAgent({ runId: id, state: 'internal', message: reason, retryable: true });
      if (end.state === 'internal' || end.state === 'cancelled') o.onFailed?.(id, reason);
    }
  }

  const loop = (async () => {
    while (!stopped) {
      try {
        await sweep();
      } catch {
        // Postgres or Temporal briefly unreachable: the next sweep tries again.
      }
      let timer: NodeJS.Timeout | undefined;
      if (!stopped) await new Promise<void>((r) => ((wake = r), (timer = setTimeout(r, o.everyMs))));
      clearTimeout(timer);
    }
  })();

  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
