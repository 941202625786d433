import pg from 'pg';

/**
 * Postgres channel on which a scrape's id is announced when its document is stored
 * (completeScrapeJob). The API waiting on that scrape answers from Postgres right away instead
 * of waiting for the workflow to finish its bookkeeping and for Temporal to deliver the
 * result: that tail (a workflow task, the completion, the result long poll) was ~10 ms of a
 * ~40 ms scrape. The workflow result stays the fallback and the only path for failures.
 */
export const SCRAPE_DONE_CHANNEL = 'wds_scrape_done';

export interface ScrapeDoneWait {
  /** Resolves when the scrape's document is in Postgres; never rejects (and may never resolve). */
  stored: Promise<void>;
  cancel(): void;
}

export interface ScrapeDoneListener {
  /** Call before starting the scrape, so the announcement cannot come first. */
  wait(scrapeId: string): ScrapeDoneWait;
  close(): Promise<void>;
}

const RECONNECT_MS = 1_000;

/**
 * One dedicated connection per API process LISTENs on the channel. Every API hears every
 * completion and ignores ids it does not wait for (a 36-byte payload). A lost connection is
 * re-established in the background; meanwhile waits simply fall back to the workflow result.
 */
export function listenForScrapeDone(url: string): ScrapeDoneListener {
  const waiters = new Map<string, () => void>();
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async () => {
    const c = new pg.Client({ connectionString: url });
    c.on('notification', (n) => {
      const resolve = n.payload ? waiters.get(n.payload) : undefined;
      if (resolve) {
        waiters.delete(n.payload!);
        resolve();
      }
    });
    const lost = () => {
      if (client === c) client = null;
      c.removeAllListeners('error');
      c.on('error', () => {});
      c.end().catch(() => {});
      if (!closed && !retry) retry = setTimeout(() => ((retry = undefined), void connect()), RECONNECT_MS);
    };
    c.on('error', lost);
    c.on('end', lost);
    try {
      await c.connect();
      await c.query(`LISTEN ${SCRAPE_DONE_CHANNEL}`);
      if (closed) await c.end();
      else client = c;
    } catch {
      lost();
    }
  };
  void connect();

  return {
    wait(scrapeId) {
      let resolve!: () => void;
      const stored = new Promise<void>((r) => (resolve = r));
      waiters.set(scrapeId, resolve);
      return { stored, cancel: () => void (waiters.get(scrapeId) === resolve && waiters.delete(scrapeId)) };
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      waiters.clear();
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
