/**
 * The schema threads: every compile of a user's JSON Schema and every validation against one runs
 * on a worker thread under a deadline (`SCHEMA_LIMITS`). ajv's generated code is not bounded by
 * the linear regex engine alone: `anyOf` branches over a recursive `$ref` revisit the data once per
 * branch at every level (2^depth), `uniqueItems` compares items pairwise, a huge `enum` is scanned
 * per value, formats run their own regular expressions. A thread past its deadline, or out of heap,
 * is terminated and replaced; the job fails as a 422 INVALID_SCHEMA (retrying would stall again).
 * At most `threads` run at once; more jobs wait for one (a stuck one holds its thread only until
 * its deadline).
 */
import type { Worker } from 'node:worker_threads';
import { WdsError } from '@wds/errors';
import { siblingModule, startWorker } from '@wds/threads';
import { LlmCodes, LlmError } from './errors';
import type { SchemaJob, SchemaReply, SchemaThreadMessage } from './schema-jobs';

export const SCHEMA_LIMITS = {
  /** Longest one compile or one validation may run on its thread (legitimate ones take milliseconds). */
  deadlineMs: 5_000,
  /** Threads per process. */
  threads: 2,
  /** Heap of one thread. */
  heapMb: 256,
  /** Longest a thread may take to start (loading ajv), on a loaded machine. */
  startMs: 60_000,
} as const;

type JobBody = SchemaJob extends infer J ? (J extends SchemaJob ? Omit<J, 'id'> : never) : never;

interface Thread {
  worker: Worker;
  ready: Promise<void>;
  retired?: boolean;
  /** The job in progress (one at a time). */
  current?: { id: number; settle(m: SchemaReply | Error): void };
}

let nextId = 1;

class SchemaPool {
  private idle: Thread[] = [];
  private live = 0;
  private waiting: ((t: Thread) => void)[] = [];

  private spawn(): Thread {
    this.live++;
    const worker = startWorker({
      entry: siblingModule(import.meta.url, 'schema-thread'),
      // Plain-JS dependencies load faster before tsx's hooks are registered.
      preload: ['ajv', 'ajv/dist/2019', 'ajv/dist/2020', 'ajv-formats'].map((m) => import.meta.resolve(m)),
      resourceLimits: { maxOldGenerationSizeMb: SCHEMA_LIMITS.heapMb },
    });
    let readyNow!: () => void;
    let failStart!: (e: Error) => void;
    const t: Thread = { worker, ready: new Promise<void>((res, rej) => ((readyNow = res), (failStart = rej))) };
    t.ready.catch(() => undefined);
    worker.on('message', (m: SchemaThreadMessage) => {
      if ('ready' in m) return readyNow();
      if (t.current?.id === m.id) t.current.settle(m);
    });
    const died = (e: Error) => {
      failStart(e);
      if (t.current) t.current.settle(e);
      else this.retire(t); // died idle
    };
    worker.on('error', died);
    worker.on('exit', () => died(new Error('the schema thread exited')));
    return t;
  }

  private take(): Promise<Thread> {
    const t = this.idle.pop();
    if (t) return Promise.resolve(t);
    if (this.live < SCHEMA_LIMITS.threads) return Promise.resolve(this.spawn());
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private giveBack(t: Thread): void {
    const next = this.waiting.shift();
    if (next) return next(t);
    t.worker.unref(); // an idle thread never holds the process open
    this.idle.push(t);
  }

  /** Terminates a thread (once) and starts another for the first waiting job. */
  private retire(t: Thread): void {
    if (t.retired) return;
    t.retired = true;
    this.live--;
    const i = this.idle.indexOf(t);
    if (i >= 0) this.idle.splice(i, 1);
    void t.worker.terminate().catch(() => undefined);
    const next = this.waiting.shift();
    if (next) next(this.spawn());
  }

  /** Runs a job on a thread; `what` names it in errors ("compiling the schema"). */
  async run(job: JobBody, what: string): Promise<SchemaReply> {
    const t = await this.take();
    t.worker.ref();
    const id = nextId++;
    try {
      await withTimer(t.ready, SCHEMA_LIMITS.startMs, () => new Error(`no schema thread started within ${SCHEMA_LIMITS.startMs} ms`));
    } catch (e) {
      this.retire(t);
      throw threadFailed(what, e);
    }
    const outcome = await new Promise<SchemaReply | Error | 'deadline'>((resolve) => {
      const timer = setTimeout(() => resolve('deadline'), SCHEMA_LIMITS.deadlineMs);
      t.current = {
        id,
        settle: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      t.worker.postMessage({ ...job, id } as SchemaJob);
    });
    t.current = undefined;
    if (outcome === 'deadline' || outcome instanceof Error) {
      this.retire(t);
      if (outcome === 'deadline') throw tooComplex(`${what} took longer than ${SCHEMA_LIMITS.deadlineMs} ms`);
      throw threadFailed(what, outcome);
    }
    this.giveBack(t);
    return outcome;
  }

  /** Starts a thread ahead of the first job (service start), unless one is up. */
  warm(): void {
    if (this.live === 0) this.giveBack(this.spawn());
  }

  async close(): Promise<void> {
    const all = [...this.idle];
    for (const t of all) this.retire(t);
    await Promise.all(all.map((t) => t.worker.terminate().catch(() => undefined)));
  }
}

function withTimer<T>(p: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(error()), ms)))]).finally(() => clearTimeout(timer));
}

function tooComplex(why: string): LlmError {
  return new LlmError('UNPROCESSABLE', LlmCodes.INVALID_SCHEMA, {
    message:
      `Invalid JSON Schema: the schema is too expensive to use: ${why}. Simplify it ` +
      '(alternatives over recursive $refs, very large enum or uniqueItems arrays and long patterns make validation slow).',
    retryable: false,
  });
}

function threadFailed(what: string, e: unknown): WdsError {
  if ((e as { code?: string })?.code === 'ERR_WORKER_OUT_OF_MEMORY') return tooComplex(`${what} needs more than ${SCHEMA_LIMITS.heapMb} MB`);
  return new WdsError('INTERNAL', { code: 'UNKNOWN_ERROR', message: `Internal Server Error: ${what} failed (${(e as Error)?.message ?? e}); try again`, retryable: true });
}

export const schemaPool = new SchemaPool();

/** Starts a schema thread now, so that the first request does not wait for ajv to load (API and worker start-up). */
export function warmSchemaThreads(): void {
  schemaPool.warm();
}

/** Stops the idle schema threads (tests, shutdown). */
export function closeSchemaThreads(): Promise<void> {
  return schemaPool.close();
}
