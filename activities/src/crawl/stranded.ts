import { extractsPastFetchOlderThan, failStrandedJob, runningJobsOlderThan } from '@wds/db';
import { workflowIds } from '@wds/workflows/common';
import { endExtract } from '../extract/finish';
import { recordJobEvent } from '../webhooks/emit';
import { startSweepLoop, workflowState, type StrandedSweeperOptions } from '../stranded/sweep';
import { loadJobOptions } from './job-options';

/** A job seen running under its workflow is looked at again only after this long. */
const RECHECK_MS = 5 * 60_000;
const PER_SWEEP = 500;

/**
 * Fails crawl, batch and extract jobs that no workflow is running: the API stored the job and died before
 * starting its workflow, or the workflow was terminated (or timed out) before ending the job.
 * Without this such a job says `scraping` forever. Every control worker runs it; failing is
 * conditional on the job still running, so two sweepers never fail a job twice. Temporal being
 * unreachable is not evidence of anything: that sweep is skipped.
 */
export function startStrandedJobSweeper(o: StrandedSweeperOptions): { stop(): Promise<void> } {
  const seenRunning = new Map<string, number>();
  return startSweepLoop(o.everyMs, async (stopped) => {
    const now = Date.now();
    for (const [id, at] of seenRunning) if (now - at > RECHECK_MS) seenRunning.delete(id);
    const jobs = [
      ...(await runningJobsOlderThan(o.db, o.graceMs, PER_SWEEP + seenRunning.size)),
      // Extracts past their fetch phase have no running frontier row, but still a workflow.
      ...(await extractsPastFetchOlderThan(o.db, o.graceMs, PER_SWEEP + seenRunning.size)),
    ];
    const live = new Set(jobs.map((j) => j.id));
    for (const id of seenRunning.keys()) if (!live.has(id)) seenRunning.delete(id);
    for (const job of jobs.filter((j) => !seenRunning.has(j.id)).slice(0, PER_SWEEP)) {
      if (stopped()) return;
      const state = await workflowState(o.temporal, o.namespace, workflowIds[job.kind](job.id));
      if (state === 'running') {
        seenRunning.set(job.id, now);
        continue;
      }
      const reason =
        state === 'missing'
          ? 'The job failed: its workflow was never started (the API stopped before starting it). Retry the request.'
          : 'The job failed: its workflow ended without finishing it (terminated or timed out).';
      if (job.kind === 'extract') {
        // The extract job and its frontier row end together (extract jobs have no webhook events).
        if (await endExtract(o.db, job.id, 'failed', reason)) o.onFailed?.(job.id, reason);
        continue;
      }
      if (await failStrandedJob(o.db, job.id, reason)) {
        o.onFailed?.(job.id, reason);
        const loaded = await loadJobOptions(o.db, job.id).catch(() => null);
        if (loaded) await recordJobEvent(o.db, loaded, 'failed', { error: reason });
      }
    }
  });
}
