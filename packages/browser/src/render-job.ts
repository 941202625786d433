/**
 * What every step of a render shares: the job the pool can fail from outside, the pool's side of
 * the render (`RenderDeps`), and the bounded wait on browser operations.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { browserCrashedError } from './errors';
import type { LivePage } from './interact/live-page';
import type { OpenPage } from './open-page';
import type { PolicyProxy, ProxyPolicy } from './proxy';

/** Playwright calls get this much beyond the render's deadline, so the deadline always fires first. */
export const GRACE_MS = 1000;

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

export interface RenderDeps {
  browser: Browser;
  userAgents: { desktop: string; mobile: string };
  settleQuietMs: number;
  settleMaxMs: number;
  contextTimeoutMs: number;
  /** The pool's proxy for a request policy (started on first use). */
  proxy(policy: ProxyPolicy): Promise<PolicyProxy>;
  /** The browser stopped answering (context create/close hung): the pool kills it. */
  onHung(): void;
  /** Whether the browser this render runs on has died. */
  browserDead(): boolean;
  /** Hands the render's open page over to the caller (`keepPage`); the pool tracks it with its browser. */
  keep(s: OpenPage): LivePage;
}

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
