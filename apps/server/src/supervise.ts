import { stopChild, type AppProcess } from '@wds/launch';

export interface SuperviseOptions {
  /** For the log: `api`, `worker`. */
  name: string;
  /** Starts the child and resolves once it is ready (rejects if it exits or hangs first). */
  start(): Promise<AppProcess>;
  log(message: string): void;
  /** Crashes within `windowMs` at which the child is given up (a crash loop). */
  maxCrashes: number;
  windowMs: number;
  /** Called once when the child is given up; the launcher then stops everything and exits non-zero. */
  onGiveUp(): void;
  /** Drain time given to the child on stop before SIGKILL. */
  stopGraceMs: number;
  /** Delay before the first restart; doubled per crash in the window, at most `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
}

export interface Supervised {
  /** The child running now (after a restart, the new one). */
  current(): AppProcess;
  /** Stops restarting and stops the child (waiting for a restart in progress first). */
  stop(): Promise<void>;
}

/**
 * Keeps one child process running: when it exits without being asked to, it is started again
 * after a backoff that doubles with each recent crash. A child that crashes `maxCrashes` times
 * within `windowMs` is not restarted (a crash loop: a bad config or a broken dependency, which
 * restarting cannot fix) and `onGiveUp` is called. The first start is not supervised: its failure
 * is the caller's.
 */
export async function supervise(o: SuperviseOptions): Promise<Supervised> {
  const backoffMs = o.backoffMs ?? 500;
  const maxBackoffMs = o.maxBackoffMs ?? 10_000;
  const crashes: number[] = [];
  let proc = await o.start();
  let stopping = false;
  let recovering: Promise<void> = Promise.resolve();
  let cancelWait: (() => void) | null = null;

  const watch = (p: AppProcess) => {
    o.log(`${o.name} running (pid ${p.child.pid})`);
    p.child.once('exit', (code, signal) => {
      if (stopping) return;
      recovering = recover(signal ? `was killed by ${signal}` : `exited with code ${code}`);
    });
  };

  async function recover(how: string): Promise<void> {
    for (;;) {
      const now = Date.now();
      crashes.push(now);
      while (crashes[0]! <= now - o.windowMs) crashes.shift();
      if (crashes.length >= o.maxCrashes) {
        o.log(`${o.name} ${how}; ${crashes.length} crashes within ${Math.round(o.windowMs / 1000)} s: crash loop, not restarting it`);
        o.onGiveUp();
        return;
      }
      const delay = Math.min(backoffMs * 2 ** (crashes.length - 1), maxBackoffMs);
      o.log(`${o.name} ${how}; restarting it in ${delay} ms (crash ${crashes.length} of ${o.maxCrashes} allowed within ${Math.round(o.windowMs / 1000)} s)`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, delay);
        cancelWait = () => (clearTimeout(t), r());
      });
      cancelWait = null;
      if (stopping) return;
      try {
        proc = await o.start();
      } catch (e) {
        how = `did not start again (${(e as Error).message.split('\n')[0]})`;
        if (stopping) return;
        continue;
      }
      watch(proc);
      // A stop that came while it was starting: it found the old child already gone.
      if (stopping) await stopChild(proc.child, o.stopGraceMs);
      return;
    }
  }

  watch(proc);
  return {
    current: () => proc,
    async stop() {
      stopping = true;
      cancelWait?.();
      await recovering;
      await stopChild(proc.child, o.stopGraceMs);
    },
  };
}
