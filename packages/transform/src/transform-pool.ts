/**
 * HTML → formats on worker threads. Converting a page (parse, clean, turndown) is the CPU
 * ceiling of a crawl, ~10-35 ms a page, and a worker process is otherwise one thread: the pool
 * puts that work on as many threads as configured while fetching, storing and Temporal polling
 * stay on the main thread. With no threads configured, pages are converted inline.
 *
 * Two kinds of job share the threads: `transform` (HTML → formats) and `clientRendered` (the
 * escalation test, `looksClientRendered`): every per-page CPU step on a page's HTML runs here,
 * under a deadline, never on the event loop of the process that fetched it.
 *
 * A thread that takes longer than a job's deadline (a hostile page) is terminated and replaced;
 * the jobs it held fail with a retryable error.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { WdsError, ScrapeCodes } from '@wds/errors';
import { siblingModule, startWorker } from '@wds/threads';
import { looksClientRendered } from './heuristics';
import { transformHtml } from './transform';
import type { JobInput, JobOutput, TransformJob, TransformReply } from './transform-jobs';
import type { TransformOptions, TransformResult } from './types';

interface Pending {
  resolve(r: JobOutput[keyof JobOutput]): void;
  reject(e: unknown): void;
  timer: NodeJS.Timeout;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
}

/** Heap cap of a transform thread: a page that needs more is refused, the process survives. */
const THREAD_HEAP_MB = 512;

class TransformPool {
  private threads: Thread[] = [];
  private nextId = 1;

  constructor(private readonly size: number) {
    for (let i = 0; i < size; i++) this.threads.push(this.spawn());
  }

  private spawn(): Thread {
    const worker = startWorker({
      entry: siblingModule(import.meta.url, 'transform-worker'),
      // Plain-JS dependencies load 3× faster before tsx's hooks are registered.
      preload: ['htmlparser2', 'cheerio-select', 'dom-serializer'].map((m) => import.meta.resolve(m)),
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
    });
    const t: Thread = { worker, pending: new Map() };
    worker.unref(); // idle threads never hold the process open
    worker.on('message', (m: TransformReply | { ready: true }) => {
      if (!('id' in m)) return;
      const p = t.pending.get(m.id);
      if (!p) return;
      t.pending.delete(m.id);
      clearTimeout(p.timer);
      if (!t.pending.size) worker.unref();
      if ('error' in m) p.reject(WdsError.fromJSON(m.error));
      else p.resolve(m.result);
    });
    worker.on('error', () => undefined); // reported through 'exit'
    worker.on('exit', () => this.replace(t, 'the conversion thread stopped'));
    return t;
  }

  /** Fails what the thread held and puts a fresh thread in its place. */
  private replace(t: Thread, why: string): void {
    const i = this.threads.indexOf(t);
    if (i < 0) return;
    this.threads[i] = this.spawn();
    void t.worker.terminate().catch(() => undefined);
    for (const p of t.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new WdsError('INTERNAL', { code: 'UNKNOWN_ERROR', message: `Internal Server Error: the page could not be converted (${why}); try again`, retryable: true }));
    }
    t.pending.clear();
  }

  run<J extends JobInput>(job: J, timeoutMs: number): Promise<JobOutput[J['kind']]> {
    // The least busy thread; ties go to the first.
    const t = this.threads.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const id = this.nextId++;
    return new Promise<JobOutput[J['kind']]>((resolve, reject) => {
      const timer = setTimeout(() => {
        // The thread is stuck on some page (not necessarily this one): replace it. This job
        // fails as a timeout; the others it held fail as retryable internal errors.
        t.pending.delete(id);
        this.replace(t, `a conversion took over ${timeoutMs} ms`);
        const what = job.kind === 'transform' ? 'Converting' : 'Examining';
        reject(new WdsError('REQUEST_TIMEOUT', { code: ScrapeCodes.TIMEOUT, message: `${what} the page exceeded the timeout of ${timeoutMs} ms.` }));
      }, timeoutMs);
      t.pending.set(id, { resolve: resolve as Pending['resolve'], reject, timer });
      t.worker.ref();
      t.worker.postMessage({ ...job, id } as TransformJob);
    });
  }

  async close(): Promise<void> {
    const all = this.threads.splice(0);
    await Promise.all(all.map((t) => t.worker.terminate().catch(() => undefined)));
  }
}

let pool: TransformPool | null = null;

/** WDS_TRANSFORM_THREADS as a thread count: 0 means one per core, -1 none. */
export function transformThreadsSetting(setting: number): number {
  return setting === 0 ? availableParallelism() : Math.max(0, setting);
}

/**
 * Sets how many threads convert HTML in this process (0: inline, the default). Workers and the
 * API (cache hits) call this once at start.
 */
export function configureTransformThreads(n: number): void {
  if (n < 0) n = 0;
  if (pool) void pool.close();
  pool = n > 0 ? new TransformPool(n) : null;
}

/** transformHtml, on a pool thread when there is a pool. */
export function transformHtmlAsync(html: string, baseUrl: string, opts: TransformOptions, timeoutMs: number): Promise<TransformResult> {
  if (!pool) return Promise.resolve().then(() => transformHtml(html, baseUrl, opts));
  return pool.run({ kind: 'transform', html, baseUrl, opts }, Math.max(1, timeoutMs));
}

/**
 * looksClientRendered, on a pool thread when there is a pool (inline otherwise: it is linear,
 * a few ms for a megabyte). Fails with REQUEST_TIMEOUT past the deadline.
 */
export function looksClientRenderedAsync(html: string, timeoutMs: number): Promise<boolean> {
  if (!pool) return Promise.resolve().then(() => looksClientRendered(html));
  return pool.run({ kind: 'clientRendered', html }, Math.max(1, timeoutMs));
}

export async function closeTransformThreads(): Promise<void> {
  await pool?.close();
  pool = null;
}
