import type { Db } from '@wds/db';

/**
 * What the control workers' stranded-job sweeper (`jobs/stranded.ts`) is made of: asking Temporal whether a job's workflow
 * still runs, and the sweep loop itself. Not activities: loops like the webhook dispatcher.
 */

/** The slice of a Temporal connection this needs (NativeConnection and Connection both have it). */
export interface WorkflowDescriber {
  workflowService: {
    describeWorkflowExecution(req: { namespace: string; execution: { workflowId: string } }): Promise<{
      workflowExecutionInfo?: { status?: number | null } | null;
    }>;
  };
}

/** How the worker starts a sweeper (both sweepers take the same). */
export interface StrandedSweeperOptions {
  db: Db;
  temporal: WorkflowDescriber;
  namespace: string;
  /** A job younger than this is left alone: its API may still be starting it (WDS_STRANDED_JOB_GRACE_MS). */
  graceMs: number;
  /** Time between sweeps (WDS_STRANDED_JOB_SWEEP_MS). */
  everyMs: number;
  /** Called with each job ended, for the log. */
  onFailed?: (jobId: string, reason: string) => void;
}

/** WORKFLOW_EXECUTION_STATUS_RUNNING in temporal.api.enums.v1.WorkflowExecutionStatus. */
const RUNNING = 1;
/** gRPC NOT_FOUND. */
const NOT_FOUND = 5;

/**
 * 'running', 'missing' (never started, or long gone) or 'ended' (closed: a workflow ends its job
 * before it closes, so a closed one whose job still runs was cut short). Temporal being
 * unreachable throws: that is evidence of nothing, and the caller's sweep is skipped.
 */
export async function workflowState(temporal: WorkflowDescriber, namespace: string, workflowId: string): Promise<'running' | 'missing' | 'ended'> {
  try {
    const d = await temporal.workflowService.describeWorkflowExecution({ namespace, execution: { workflowId } });
    return d.workflowExecutionInfo?.status === RUNNING ? 'running' : 'ended';
  } catch (e) {
    if ((e as { code?: number }).code === NOT_FOUND) return 'missing';
    throw e;
  }
}

/**
 * Runs `sweep` now and every `everyMs` until stopped; a sweep that throws (Postgres or Temporal
 * briefly unreachable) is retried at the next turn. `sweep` checks `stopped()` between jobs.
 */
export function startSweepLoop(everyMs: number, sweep: (stopped: () => boolean) => Promise<void>): { stop(): Promise<void> } {
  let stopped = false;
  let wake: (() => void) | null = null;
  const loop = (async () => {
    while (!stopped) {
      try {
        await sweep(() => stopped);
      } catch {
        // The next sweep tries again.
      }
      let timer: NodeJS.Timeout | undefined;
      if (!stopped) await new Promise<void>((r) => ((wake = r), (timer = setTimeout(r, everyMs))));
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
