import { prunePageVersions, type Db, type PruneResult } from '@wds/db';
import { startSweepLoop } from '../stranded/sweep';

const DAY_MS = 86_400_000;
/** Retention is in days: once an hour is often enough, and each pass deletes in small batches. */
const EVERY_MS = 3_600_000;

export interface PageVersionPrunerOptions {
  db: Db;
  /** WDS_CHANGE_TRACKING_RETENTION_DAYS */
  retentionDays: number;
  /** WDS_CHANGE_TRACKING_FORGET_DAYS */
  forgetDays: number;
  everyMs?: number;
  onPruned?: (r: PruneResult) => void;
}

/**
 * Control workers prune change tracking's old versions and the markdown only they referenced
 * (packages/db prunePageVersions). Every control worker runs it: passes are idempotent batched
 * deletes, so two at once only share the work.
 */
export function startPageVersionPruner(o: PageVersionPrunerOptions): { stop(): Promise<void> } {
  return startSweepLoop(o.everyMs ?? EVERY_MS, async () => {
    const r = await prunePageVersions(o.db, { retentionMs: o.retentionDays * DAY_MS, forgetMs: o.forgetDays * DAY_MS });
    if (r.versions || r.contents) o.onPruned?.(r);
  });
}
