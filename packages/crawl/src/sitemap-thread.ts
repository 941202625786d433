/**
 * Sitemaps are parsed on a worker thread: a hostile file (gigabytes after decompression,
 * millions of tiny text nodes) costs that thread, which is killed past its deadline or heap cap,
 * never the event loop or the heap of the process that fetched it.
 */
import type { Worker } from 'node:worker_threads';
import { siblingModule, WorkerPool } from '@wds/threads';
import { SITEMAP_LIMITS, type SitemapEntries, type SitemapLimits } from './sitemap';

export interface SitemapJob {
  id: number;
  body: Uint8Array;
  limits: Partial<SitemapLimits>;
}
export type SitemapReply = { id: number; entries: SitemapEntries } | { id: number; error: string };

/** Heap of a parser thread: the decompressed XML (≤ 50 MB) and saxes' strings, with room to spare. */
const THREAD_HEAP_MB = 384;
/** A thread that has not answered this long after its own time budget (which it checks between slices) is killed; covers a thread's start-up too. */
const GRACE_MS = 10_000;

const pool = new WorkerPool(
  { entry: siblingModule(import.meta.url, 'sitemap-worker'), preload: [import.meta.resolve('saxes')], resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } },
  { maxIdle: 1, maxJobs: 100 },
);
let nextId = 1;

/** parseSitemap on a pooled thread; rejects when the thread crashes, runs out of heap or overruns its deadline. */
export function parseSitemapOnThread(body: Buffer, limits: Partial<SitemapLimits> = {}): Promise<SitemapEntries> {
  const w: Worker = pool.acquire();
  const id = nextId++;
  const deadlineMs = (limits.maxMs ?? SITEMAP_LIMITS.maxMs) + GRACE_MS;
  return new Promise<SitemapEntries>((resolve, reject) => {
    const done = (reuse: boolean) => {
      clearTimeout(timer);
      w.off('message', onMessage);
      w.off('error', onError);
      w.off('exit', onExit);
      if (reuse) pool.release(w);
      else void pool.discard(w);
    };
    const onMessage = (m: SitemapReply) => {
      if (m.id !== id) return;
      done(true);
      if ('entries' in m) resolve(m.entries);
      else reject(new Error(`sitemap parser: ${m.error}`));
    };
    const onError = (e: Error & { code?: string }) => {
      done(false);
      reject(new Error(e?.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `sitemap parser: the file needs more than ${THREAD_HEAP_MB} MB` : `sitemap parser crashed: ${e?.message}`));
    };
    const onExit = () => {
      done(false);
      reject(new Error('sitemap parser: the thread exited'));
    };
    const timer = setTimeout(() => {
      done(false);
      reject(new Error(`sitemap parser: no answer within ${deadlineMs} ms`));
    }, deadlineMs);
    w.on('message', onMessage);
    w.on('error', onError);
    w.on('exit', onExit);
    w.postMessage({ id, body, limits } satisfies SitemapJob);
  });
}

/** Stops the idle parser thread (tests, shutdown). */
export function closeSitemapThreads(): Promise<void> {
  return pool.close();
}
