import { finishPage, finishPages, storeCacheEntry, type BatchedPage, type Db, type EventWebhook } from '@wds/db';

/**
 * Most pages per statement: bounds a statement's size (documents travel in it) and what one
 * failed statement sends back to the page-by-page path.
 */
const MAX_PAGES = 32;
/**
 * A page that finds no statement running waits this long for siblings (or until LINGER_UNTIL
 * pages wait) before its statement starts: on a busy worker, groups grow and the statement's
 * fixed cost (planning, the job's head rows) is paid less often; alone, a page is stored 4 ms
 * later. Crawl bench, 7 interleaved pairs: Postgres 0.1–0.15 ms less CPU per page in 6.
 */
const LINGER_MS = 4;
const LINGER_UNTIL = 8;

export interface PageWriter {
  /** Stores the page (finishPage's guarantees); true when this call stored its document. */
  store(page: BatchedPage): Promise<boolean>;
}

interface Waiting {
  page: BatchedPage;
  resolve(stored: boolean): void;
  reject(e: unknown): void;
}

/**
 * A page writer (one per job and worker process: jobPageWriter): group commit. A page that
 * finishes while no statement of this writer is running is stored after LINGER_MS, with what
 * joined it meanwhile; pages that finish while one is running wait for it and go together in the
 * next (finishPages). So a lightly loaded job adds 4 ms per page, and a busy one pays Postgres's
 * parse, plan and event-head lock once per group instead of per page, from one round trip. Each
 * page's promise settles only after its statement committed (asynchronously, as finishPage), and
 * nothing is written before that: a killed worker leaves the waiting pages leased, to be claimed
 * and stored again, exactly as before.
 *
 * A statement that fails (one unstorable page, a deadlock or unique violation against another
 * writer) is redone page by page with finishPage (and the page's cache row, if it carries one,
 * with storeCacheEntry), so a page fails only for its own reasons.
 */
export function createPageWriter(db: Db, jobId: string, webhook: EventWebhook | null, onIdle?: () => void): PageWriter {
  const queue: Waiting[] = [];
  let running = false;

  /** The next group: up to MAX_PAGES, keys distinct (finishPages requires it; a repeat waits for the next group). */
  const nextGroup = (): Waiting[] => {
    const group: Waiting[] = [];
    const keys = new Set<string>();
    for (let i = 0; i < queue.length && group.length < MAX_PAGES; ) {
      const w = queue[i]!;
      if (keys.has(w.page.key)) {
        i++;
        continue;
      }
      keys.add(w.page.key);
      group.push(w);
      queue.splice(i, 1);
    }
    return group;
  };

  const write = async (group: Waiting[]): Promise<void> => {
    try {
      const stored = await finishPages(db, jobId, group.map((w) => w.page), webhook);
      for (const w of group) w.resolve(stored.has(w.page.key));
    } catch {
      await Promise.all(
        group.map(async (w) => {
          try {
            if (w.page.cache) await storeCacheEntry(db, w.page.cache);
            w.resolve(await finishPage(db, jobId, w.page.key, { links: w.page.links, document: w.page.document && { ...w.page.document, webhook } }));
          } catch (e) {
            w.reject(e);
          }
        }),
      );
    }
  };

  const drain = async (): Promise<void> => {
    running = true;
    try {
      while (queue.length) await write(nextGroup());
    } finally {
      running = false;
      onIdle?.();
    }
  };

  let lingering: NodeJS.Timeout | undefined;
  return {
    store(page) {
      return new Promise<boolean>((resolve, reject) => {
        queue.push({ page, resolve, reject });
        if (running) return;
        if (queue.length >= LINGER_UNTIL) {
          clearTimeout(lingering);
          lingering = undefined;
          void drain();
        } else {
          lingering ??= setTimeout(() => {
            lingering = undefined;
            void drain();
          }, LINGER_MS);
        }
      });
    },
  };
}

/** The writers of this process's jobs that have a statement running or pages waiting. */
const jobWriters = new Map<string, PageWriter>();

/** How many jobs' writers this process holds (tests: a writer is dropped once idle). */
export const jobWritersHeld = (): number => jobWriters.size;

/**
 * The page writer of a job in this worker process, shared by all of its fetch batches running
 * here: one group statement of the job at a time instead of one per batch. Per batch, a crawl's
 * window of batches wrote small groups (~2.3 pages) side by side, each paying the statement's
 * planning and waiting on the others for the job's event-head and balance rows; shared, the
 * pages of all its batches go together. A writer lives while it has work (`onIdle` drops it), so
 * nothing is kept per finished job. What a page's promise means is unchanged (createPageWriter).
 */
export function jobPageWriter(db: Db, jobId: string, webhook: EventWebhook | null): PageWriter {
  return {
    store(page) {
      let w = jobWriters.get(jobId);
      if (!w) {
        const created = createPageWriter(db, jobId, webhook, () => {
          if (jobWriters.get(jobId) === created) jobWriters.delete(jobId);
        });
        jobWriters.set(jobId, (w = created));
      }
      return w.store(page);
    },
  };
}
