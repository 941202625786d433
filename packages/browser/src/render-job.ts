/**
 * A render as the pool sees it, shared by every step of the render. (The pool's side of a render,
 * RenderDeps, is in open-page.ts with the page it opens; the bounded wait in deadline.ts.)
 */
import type { BrowserContext } from 'playwright-core';
import type { LivePage } from './interact/live-page';

/** A render as the pool sees it: can be failed from outside (crash, timeout, abort, pool close). */
export class RenderJob {
  failure: unknown;
  readonly failed: Promise<never>;
  private reject!: (e: unknown) => void;
  /** Set once the render is over (result returned or error thrown). */
  done = false;
  context?: BrowserContext;
  /** The context's close, started when the render ends. */
  closed?: Promise<void>;
  /** What the render is doing now (named in timeout errors). */
  phase = 'queue';
  /** The page handed over after the render (`keepPage`): its context is not closed with the render. */
  kept?: LivePage;

  constructor(readonly deadline: number) {
    this.failed = new Promise<never>((_, rej) => {
      this.reject = rej;
    });
    this.failed.catch(() => {});
  }

  fail(e: unknown): void {
    if (this.failure !== undefined || this.done) return;
    this.failure = e;
    this.reject(e);
  }

  remaining(): number {
    return this.deadline - performance.now();
  }

  /** Sleeps, but wakes as soon as the job fails. */
  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      new Promise<void>((r) => {
        timer = setTimeout(r, ms);
      }),
      this.failed.catch(() => {}),
    ]).finally(() => clearTimeout(timer));
  }
}
