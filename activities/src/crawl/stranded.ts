import { failStrandedJob, runningJobsOlderThan, type Db } from '@wds/db';
import { workflowIds } from '@wds/workflows/common';
import { recordJobEvent } from '../webhooks/emit';
import { loadJobOptions } from './job-options';

/** The slice of a Temporal connection this needs (NativeConnection and Connection both have it). */
export interface WorkflowDescriber {
  workflowService: {
    describeWorkflowExecution(req: { namespace: string; execution: { workflowId: string } }): Promise<{
      workflowExecutionInfo?: { status?: number | null } | null;
    }>;
  };
}

export interface StrandedJobSweeperOptions {
  db: Db;
  temporal: WorkflowDescriber;
  namespace: string;
  /** A job younger than this is left alone: its API may still be starting it (WDS_STRANDED_JOB_GRACE_MS). */
  graceMs: number;
  /** Time between sweeps. */
  everyMs: number;
  /** Called with each job failed, for the log. */
  onFailed?: (jobId: string, reason: string) => void;
}

/** WORKFLOW_EXECUTION_STATUS_RUNNING in temporal.api.enums.v1.WorkflowExecutionStatus. */
const RUNNING = 1;
/** gRPC NOT_FOUND. */
const NOT_FOUND = 5;
/** A job seen running under its workflow is looked at again only after this long. */
const RECHECK_MS = 5 * 60_000;
const PER_SWEEP = 500;

/**
 * Fails crawl and batch jobs that no workflow is running: the API stored the job and died before
 * starting its workflow, or the workflow was terminated (or timed out) before ending the job.
 * Without this such a job says `scraping` forever. Every control worker runs it; failing is
 * conditional on the job still running, so two sweepers never fail a job twice. Temporal being
 * unreachable is not evidence of anything: that sweep is skipped.
 */
export function startStrandedJobSweeper(o: StrandedJobSweeperOptions): { stop(): Promise<void> } {
  const seenRunning = new Map<string, number>();
  let stopped = false;
  let wake: (() => void) | null = null;

  /** 'running', 'missing' (never started or long gone) or 'ended' (closed without ending the job). */
  async function workflowOf(job: { id: string; kind: 'crawl' | 'batch' }): Promise<'running' | 'missing' | 'ended'> {
    const workflowId = job.kind === 'crawl' ? workflowIds.crawl(job.id) : workflowIds.batch(job.id);
    try {
      const d = await o.temporal.workflowService.describeWorkflowExecution({ namespace: o.namespace, execution: { workflowId } });
      return d.workflowExecutionInfo?.status === RUNNING ? 'running' : 'ended';
    } catch (e) {
      if ((e as { code?: number }).code === NOT_FOUND) return 'missing';
      throw e;
    }
  }

  async function sweep() {
    const now = Date.now();
    for (const [id, at] of seenRunning) if (now - at > RECHECK_MS) seenRunning.delete(id);
    const jobs = await runningJobsOlderThan(o.db, o.graceMs, PER_SWEEP + seenRunning.size);
    const live = new Set(jobs.map((j) => j.id));
    for (const id of seenRunning.keys()) if (!live.has(id)) seenRunning.delete(id);
    for (const job of jobs.filter((j) => !seenRunning.has(j.id)).slice(0, PER_SWEEP)) {
      if (stopped) return;
      const state = await workflowOf(job);
      if (state === 'running') {
        seenRunning.set(job.id, now);
        continue;
      }
      // A workflow ends its job before it closes, so a closed one with the job still running was cut short.
      const reason =
        state === 'missing'
          ? 'The job failed: its workflow was never started (the API stopped before starting it). Retry the request.'
          : 'The job failed: its workflow ended without finishing it (terminated or timed out).';
      if (await failStrandedJob(o.db, job.id, reason)) {
        o.onFailed?.(job.id, reason);
        const loaded = await loadJobOptions(o.db, job.id).catch(() => null);
        if (loaded) await recordJobEvent(o.db, loaded, 'failed', { error: reason });
      }
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
