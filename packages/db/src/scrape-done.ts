import { listenOnChannel } from './listen';

/**
 * Postgres channel on which a scrape's id is announced when it ends: its document stored
 * (completeScrapeJob) or its failure recorded (failScrapeJob). The API waiting on that scrape
 * answers from Postgres right away instead of waiting for the workflow to finish its bookkeeping
 * and for Temporal to deliver the result: that tail (a workflow task, the completion, the result
 * long poll) was ~10 ms of a ~40 ms scrape. For scrapes run by a workflow, its result stays the
 * fallback; direct scrapes (scrape-queue.ts) have only this and the row itself.
 */
export const SCRAPE_DONE_CHANNEL = 'wds_scrape_done';

export interface ScrapeDoneWait {
  /** Resolves when the scrape's end (document or failure) is in Postgres; never rejects (and may never resolve). */
  stored: Promise<void>;
  cancel(): void;
}

export interface ScrapeDoneListener {
  /** Call before starting the scrape, so the announcement cannot come first. */
  wait(scrapeId: string): ScrapeDoneWait;
  close(): Promise<void>;
}

/**
 * One dedicated connection per API process LISTENs on the channel. Every API hears every
 * completion and ignores ids it does not wait for (a 36-byte payload). A lost connection is
 * re-established in the background; meanwhile waits simply fall back to the workflow result.
 */
export function listenForScrapeDone(url: string): ScrapeDoneListener {
  const waiters = new Map<string, () => void>();
  const listener = listenOnChannel(url, SCRAPE_DONE_CHANNEL, (id) => {
    const resolve = waiters.get(id);
    if (resolve) {
      waiters.delete(id);
      resolve();
    }
  });
  return {
    wait(scrapeId) {
      let resolve!: () => void;
      const stored = new Promise<void>((r) => (resolve = r));
      waiters.set(scrapeId, resolve);
      return { stored, cancel: () => void (waiters.get(scrapeId) === resolve && waiters.delete(scrapeId)) };
    },
    async close() {
      waiters.clear();
      await listener.close();
    },
  };
}
