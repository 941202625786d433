/**
 * A rendered page kept open after its render (`keepPage`): the live page of an interact session.
 * The pool still owns its browser (a browser that dies or hangs marks its live pages gone, and a
 * retiring browser waits for them), but the page holds no render slot: the worker bounds how many
 * it keeps (SessionStore). The page keeps its render's context, request policy (the SSRF proxy)
 * and PageWatch, so whatever code does with it later is guarded exactly like the render was.
 */
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { WdsError } from '@wds/errors';
import { BrowserCodes, browserCrashedError } from '../errors';
import type { PageWatch } from '../page-watch';
import { bounded } from '../deadline';
import { Sandbox } from './sandbox';

/** What the pool gives a live page: how to close its context without hanging on a dead browser. */
export interface LivePageHost {
  contextTimeoutMs: number;
  /** The browser stopped answering: the pool kills it (and with it this page). */
  onHung(): void;
  /** The URL of the pool's proxy that refuses every connection (the code sandbox's only network). */
  offlineProxy(): Promise<string>;
  /** The page is closed or gone: the pool forgets it (a retiring browser may close). */
  release(page: LivePage): void;
}

export function pageGoneError(why: string): WdsError {
  return new WdsError('BAD_GATEWAY', { code: BrowserCodes.PAGE_CLOSED, retryable: false, message: `The page is gone: ${why}` });
}

export class LivePage {
  private goneError?: WdsError;
  private closing?: Promise<void>;
  private readonly goneWaiters = new Set<(e: WdsError) => void>();
  /** The code sandbox of this page (sandbox.ts), created by the first interaction, replaced after a timeout or crash. */
  private sandbox?: Sandbox;
  private devtools?: Promise<CDPSession>;

  readonly context: BrowserContext;
  readonly page: Page;
  readonly watch: PageWatch;
  /** Device pixels per CSS pixel (screenshot sizes). */
  readonly deviceScale: number;

  constructor(
    s: { context: BrowserContext; page: Page; watch: PageWatch; deviceScale: number },
    private readonly host: LivePageHost,
  ) {
    ({ context: this.context, page: this.page, watch: this.watch, deviceScale: this.deviceScale } = s);
    const page = s.page;
    page.on('crash', () => this.markGone(browserCrashedError('the page renderer crashed')));
    page.on('close', () => this.markGone(pageGoneError('the page was closed')));
  }

  /** Why the page can no longer be used (crash, browser death, closed), or undefined while it lives. */
  get gone(): WdsError | undefined {
    return this.goneError;
  }

  /** Resolves with the reason once the page is gone (never rejects). */
  whenGone(): Promise<WdsError> {
    if (this.goneError) return Promise.resolve(this.goneError);
    return new Promise((resolve) => this.goneWaiters.add(resolve));
  }

  /** Called by the page's own events and by the pool when the browser dies. */
  markGone(e: WdsError): void {
    if (this.goneError) return;
    this.setGone(e);
    void this.close();
  }

  private setGone(e: WdsError): void {
    this.goneError = e;
    for (const w of this.goneWaiters) w(e);
    this.goneWaiters.clear();
  }

  /** The page's code sandbox (one at a time; a broken one is replaced). */
  async codeSandbox(): Promise<Sandbox> {
    if (this.goneError) throw this.goneError;
    if (!this.sandbox || this.sandbox.broken) {
      void this.sandbox?.close();
      this.sandbox = await Sandbox.open(this.context, { contextTimeoutMs: this.host.contextTimeoutMs, onHung: this.host.onHung, proxy: await this.host.offlineProxy() });
    }
    return this.sandbox;
  }

  /** A DevTools session on the page, for what Playwright does not ask the browser (layout metrics before a screenshot). */
  cdp(): Promise<CDPSession> {
    this.devtools ??= this.context.newCDPSession(this.page);
    this.devtools.catch(() => (this.devtools = undefined));
    return this.devtools;
  }

  /** Playwright storageState of the page's context (cookies, localStorage). */
  storageState(): Promise<unknown> {
    return this.context.storageState();
  }

  /** Closes the sandbox and the page's context (bounded: a hung browser is killed). Idempotent. */
  close(): Promise<void> {
    if (!this.goneError) this.setGone(pageGoneError('the session ended'));
    this.closing ??= (async () => {
      await this.sandbox?.close().catch(() => {});
      await bounded(this.context.close(), this.host.contextTimeoutMs, this.host.onHung).catch(() => {});
      this.host.release(this);
    })();
    return this.closing;
  }
}
