import { sweepRetention, type Db, type RetentionSweep } from '@wds/db';
import { startSweepLoop } from '../stranded/sweep';

export interface RetentionSweeperOptions extends RetentionSweep {
  db: Db;
  /** Time between sweeps (WDS_STRANDED_JOB_SWEEP_MS, shared with the stranded-job sweepers). */
  everyMs: number;
  /** Called after a sweep that deleted something, for the log (counts only, never what). */
  onSwept?: (n: { scrapes: number; parses: number; extracts: number }) => void;
}

/**
 * Control workers delete what zero-data-retention requests left (packages/db retention.ts): rows
 * of scrapes and parses whose API died before deleting them, and the data of ended ZDR jobs once
 * delivered or past WDS_ZDR_RESULT_TTL_MS; and extracts whose results expired (24 hours after they
 * ended). Idempotent: every control worker may run it.
 */
export function startRetentionSweeper(o: RetentionSweeperOptions): { stop(): Promise<void> } {
  return startSweepLoop(o.everyMs, async () => {
    const n = await sweepRetention(o.db, o);
    if (n.scrapes || n.parses || n.extracts) o.onSwept?.({ scrapes: n.scrapes, parses: n.parses, extracts: n.extracts });
  });
}
