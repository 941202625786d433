/**
 * Waits on browser operations that must not outlive their render: a leaf every part of the engine
 * (renders, live pages, the interact sandbox) uses.
 */
import { browserCrashedError } from './errors';

/** Playwright calls get this much beyond the render's deadline, so the deadline always fires first. */
export const GRACE_MS = 1000;

/** A bounded wait on a browser operation; on expiry the browser is declared hung. */
export async function bounded<T>(p: Promise<T>, ms: number, onExpire: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, rej) => {
        timer = setTimeout(() => {
          onExpire();
          rej(browserCrashedError(`the browser did not answer within ${ms} ms`));
        }, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
