/**
 * A process-wide bound on work running at once (OCR child processes, DOCX conversions): `run`
 * waits for a turn (leaving the queue when `signal` aborts), runs `fn`, passes the turn on.
 */
export function limiter(max: number): <T>(signal: AbortSignal | undefined, fn: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (signal, fn) => {
    if (running >= max) {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = waiting.indexOf(go);
          if (i >= 0) waiting.splice(i, 1);
          reject(signal?.reason ?? new Error('aborted'));
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        waiting.push(go);
      });
    }
    running++;
    try {
      return await fn();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}
