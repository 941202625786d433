import { processingExtractsOlderThan } from '@wds/db';
import { extractJob } from '@wds/workflows/job-specs';
import { endExtract } from './finish';
import { startSweepLoop, workflowState, type StrandedSweeperOptions } from '../stranded/sweep';

/** A job seen running under its workflow is looked at again only after this long. */
const RECHECK_MS = 5 * 60_000;
const PER_SWEEP = 500;

/**
 * Fails extract jobs that no workflow is running: the API stored the job and died before starting
 * its workflow, or the workflow was terminated (or timed out) before ending it. Without this such a
 * job says `processing` forever. Until extract is on the job kernel (its jobs row is only its fetch
 * phase so far) this is its own sweep; crawls and batch scrapes are the kernel sweeper's
 * (jobs/stranded.ts). Every control worker runs it; failing is conditional on the job still
 * running, so two sweepers never fail a job twice. Temporal being unreachable: the sweep is skipped.
 */
export function startStrandedExtractSweeper(o: StrandedSweeperOptions): { stop(): Promise<void> } {
  const seenRunning = new Map<string, number>();
  return startSweepLoop(o.everyMs, async (stopped) => {
    const now = Date.now();
    for (const [id, at] of seenRunning) if (now - at > RECHECK_MS) seenRunning.delete(id);
    const ids = await processingExtractsOlderThan(o.db, o.graceMs, PER_SWEEP + seenRunning.size);
    const live = new Set(ids);
    for (const id of seenRunning.keys()) if (!live.has(id)) seenRunning.delete(id);
    for (const id of ids.filter((j) => !seenRunning.has(j)).slice(0, PER_SWEEP)) {
      if (stopped()) return;
      const state = await workflowState(o.temporal, o.namespace, extractJob.workflowId(id));
      if (state === 'running') {
        seenRunning.set(id, now);
        continue;
      }
      const reason =
        state === 'missing'
          ? 'The job failed: its workflow was never started (the API stopped before starting it). Retry the request.'
          : 'The job failed: its workflow ended without finishing it (terminated or timed out).';
      // The extract job and its frontier job end together (extract jobs have no webhook events).
      if (await endExtract(o.db, id, 'failed', reason)) o.onFailed?.(id, reason);
    }
  });
}
