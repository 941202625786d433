/**
 * Worker threads for work that must be killable (pdf.js on a hostile file can
 * spin or balloon): start them, keep a warm one for the next job, throw away
 * any that timed out, crashed or grew too big.
 *
 * Under tsx (how the repo runs) a worker's entry module is not seen by the
 * parent's loader hooks, so a tiny bootstrap registers tsx in the worker
 * before importing the .ts entry. Heavy plain-JS dependencies listed in
 * `preload` are imported before tsx is registered: its hooks would otherwise
 * slow loading pdf.js (1.4 MB) by a factor of 3.
 */
import { Worker } from 'node:worker_threads';
import type { ResourceLimits } from 'node:worker_threads';

export interface WorkerSpec {
  /** The worker module (.ts from source, .js when compiled). */
  entry: URL;
  /** Module URLs imported first, without tsx (resolved by the caller: `import.meta.resolve('pkg')`, so the dependency is the caller's). */
  preload?: string[];
  resourceLimits?: ResourceLimits;
}

export function startWorker(spec: WorkerSpec, workerData?: unknown): Worker {
  const target = JSON.stringify(spec.entry.href);
  const preload = (spec.preload ?? []).map((p) => JSON.stringify(p));
  let code = `Promise.all([${preload.map((p) => `import(${p})`).join(', ')}])`;
  if (spec.entry.pathname.endsWith('.ts')) {
    const api = JSON.stringify(import.meta.resolve('tsx/esm/api'));
    code += `.then(() => import(${api})).then((m) => { m.register(); return import(${target}); });`;
  } else {
    code += `.then(() => import(${target}));`;
  }
  return new Worker(code, { eval: true, workerData, resourceLimits: spec.resourceLimits, execArgv: [] });
}

/** The sibling module `name` of `base` (.ts when running from source, .js when compiled). */
export function siblingModule(base: string, name: string): URL {
  const ext = base.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`./${name}${ext}`, base);
}

/**
 * A small pool: `acquire` hands out an idle worker or starts one; `release`
 * keeps a healthy worker warm (unref'd, so it never holds the process open)
 * unless enough are idle or it has served `maxJobs`; `discard` terminates.
 */
export class WorkerPool {
  private idle: Worker[] = [];
  private jobs = new WeakMap<Worker, number>();

  constructor(
    private readonly spec: WorkerSpec,
    private readonly opts: { maxIdle: number; maxJobs: number },
  ) {}

  acquire(): Worker {
    let w = this.idle.pop();
    if (!w) {
      w = startWorker(this.spec);
      const self = w;
      // An idle worker that dies (OOM at rest is unlikely, but) leaves the pool.
      w.on('exit', () => {
        const i = this.idle.indexOf(self);
        if (i >= 0) this.idle.splice(i, 1);
      });
      w.on('error', () => undefined);
    }
    w.ref();
    return w;
  }

  /** An already started idle worker, or null (never starts one). */
  tryIdle(): Worker | null {
    const w = this.idle.pop();
    if (!w) return null;
    w.ref();
    return w;
  }

  release(w: Worker): void {
    const n = (this.jobs.get(w) ?? 0) + 1;
    this.jobs.set(w, n);
    if (n >= this.opts.maxJobs || this.idle.length >= this.opts.maxIdle) {
      void w.terminate().catch(() => undefined);
      return;
    }
    w.unref();
    this.idle.push(w);
  }

  discard(w: Worker): Promise<unknown> {
    const i = this.idle.indexOf(w);
    if (i >= 0) this.idle.splice(i, 1);
    return w.terminate().catch(() => undefined);
  }

  /** Start a worker and keep it idle for a later job, unless `maxIdle` are idle already. */
  spare(): void {
    if (this.idle.length >= this.opts.maxIdle) return;
    const w = this.acquire();
    w.unref();
    this.idle.push(w);
  }

  /** Start one worker ahead of the first job (optional; e.g. at service start). */
  warm(): void {
    if (!this.idle.length) this.spare();
  }

  async close(): Promise<void> {
    const all = this.idle.splice(0);
    await Promise.all(all.map((w) => w.terminate().catch(() => undefined)));
  }
}
