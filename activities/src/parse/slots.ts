import { availableParallelism } from 'node:os';
import { WdsError, ScrapeCodes } from '@wds/errors';

/**
 * Document conversions (PDF, DOCX, image OCR) running at once in this worker process. Each
 * takes a worker thread (heap capped at 768 MB for PDFs) and a core; the fetch queue has
 * many more slots than that, so without this bound a burst of PDFs could exhaust memory.
 * Waiting counts against the request's own timeout.
 */
export const DOCUMENT_SLOTS = Math.max(2, availableParallelism());

class Slots {
  private busy = 0;
  private waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  /** Resolves with a release function once a slot is held; rejects at the deadline or on abort. */
  async acquire(timeoutMs: number, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw signal.reason;
    if (this.busy < this.size) {
      this.busy++;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => drop(signal!.reason);
      const timer = setTimeout(
        () => drop(new WdsError('REQUEST_TIMEOUT', { code: ScrapeCodes.TIMEOUT, retryable: false, message: 'No document converter became free within the timeout of the request.' })),
        Math.max(1, timeoutMs),
      );
      // A release hands its slot straight to the first waiter (busy stays as it is).
      const wake = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const drop = (e: unknown) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const i = this.waiting.indexOf(wake);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(e);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(wake);
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.busy--;
    };
  }
}

const documentSlots = new Slots(DOCUMENT_SLOTS);

/** Runs `fn` holding a document slot; `fn` gets the part of `timeoutMs` left after waiting. */
export async function withDocumentSlot<T>(timeoutMs: number, signal: AbortSignal | undefined, fn: (remainingMs: number) => Promise<T>): Promise<T> {
  const t0 = Date.now();
  const release = await documentSlots.acquire(timeoutMs, signal);
  try {
    return await fn(Math.max(1, timeoutMs - (Date.now() - t0)));
  } finally {
    release();
  }
}
