import { finishJob, type Db, type LiveJob } from '@wds/db';
import { recordJobEvent } from '../webhooks/emit';
import { loadJobOptions } from './job-options';

/**
 * How the stranded-job sweeper (jobs/stranded.ts) ends a crawl or batch scrape no workflow runs:
 * as the workflow's own end would (final counters, pages waiting for their model step dropped; a
 * job being cancelled ends `cancelled`), its idempotency key released (a retry starts afresh), and
 * a failure announced to its webhook (the event is keyed by its type: a retried sweep records it once).
 */
export async function endStrandedCrawl(db: Db, job: LiveJob, reason: string): Promise<boolean> {
  const { status, ended } = await finishJob(db, job.id, { outcome: 'failed', error: reason, releaseKey: true });
  if (!ended) return false;
  if (status === 'failed') {
    const loaded = await loadJobOptions(db, job.id).catch(() => null);
    if (loaded) await recordJobEvent(db, loaded, 'failed', { error: reason });
  }
  return true;
}
