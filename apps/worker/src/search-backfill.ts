import { backfillSearchIndex, searchBackfillFinished, type Db } from '@wds/db';
import type { Logger } from '@wds/log';

/** Pause between batches: the backfill runs beside live traffic and leaves Postgres room. */
const PAUSE_MS = 200;
/** After a failure (Postgres briefly away), try again this much later. */
const RETRY_MS = 30_000;

/**
 * Control workers index for search, in the background at start, the pages stored before the own
 * index existed (@wds/db search-backfill.ts: batched, resumable, idempotent; several workers
 * share the work source by source). Nothing to do once it has finished. `npm run search:backfill`
 * does the same in the foreground.
 */
export function startSearchBackfill(o: { db: Db; log: Logger }): { stop(): Promise<void> } {
  const stop = new AbortController();
  const run = (async () => {
    while (!stop.signal.aborted) {
      try {
        if (await searchBackfillFinished(o.db)) return;
        const r = await backfillSearchIndex(o.db, { batchSize: 200, pauseMs: PAUSE_MS, signal: stop.signal });
        if (r.rows) o.log.info(r, r.finished ? 'search backfill finished: every stored page is indexed' : 'search backfill paused');
        return;
      } catch (e) {
        o.log.warn({ err: e }, `search backfill failed; retrying in ${RETRY_MS / 1000} s`);
        await new Promise((r) => setTimeout(r, RETRY_MS).unref());
      }
    }
  })();
  return {
    async stop() {
      stop.abort();
      await run;
    },
  };
}
