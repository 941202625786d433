import type { ChildProcess } from 'node:child_process';

/**
 * Polling instead of fixed sleeps: tests share two cores with the whole suite, so how long
 * anything takes varies tenfold; only the condition is fixed.
 */
export async function until<T>(check: () => T | Promise<T>, what: string, opts: { timeoutMs?: number; everyMs?: number } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${opts.timeoutMs ?? 60_000} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 50));
  }
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when the exit was seen. */
  at: number;
}

/** Resolves when the process exits (at once if it already has). */
export function exitOf(child: ChildProcess): Promise<Exit> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode, at: Date.now() });
  return new Promise((r) => child.once('exit', (code, signal) => r({ code, signal, at: Date.now() })));
}
