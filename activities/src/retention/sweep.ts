import { sweepRetention, type Db, type RetentionSweep, type RetentionSwept } from '@wds/db';
import { startSweepLoop } from '../stranded/sweep';

export interface RetentionSweeperOptions extends RetentionSweep {
  db: Db;
  /** Time between sweeps (WDS_STRANDED_JOB_SWEEP_MS, shared with the stranded-job sweepers). */
  everyMs: number;
  /** Called after a sweep that deleted something, for the log (counts only, never what). */
  onSwept?: (n: Omit<RetentionSwept, 'jobs'>) => void;
}

/**
 * Control workers delete what zero-data-retention requests left (packages/db retention.ts): rows
 * of scrapes and parses whose API died before deleting them, and the data of ended ZDR jobs once
 * delivered or past WDS_ZDR_RESULT_TTL_MS; and crawls, batch scrapes, extracts and agent jobs whose
 * results expired (24 hours after they ended). Idempotent: every control worker may run it at once.
 */
export function startRetentionSweeper(o: RetentionSweeperOptions): { stop(): Promise<void> } {
  return startSweepLoop(o.everyMs, async () => {
    const { jobs: _purged, ...swept } = await sweepRetention(o.db, o);
    if (swept.scrapes || swept.extracts || swept.crawls || Object.keys(swept.expired).length) o.onSwept?.(swept);
  });
}
