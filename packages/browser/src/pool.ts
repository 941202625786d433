/**
 * A pool of headless Chromium processes serving isolated renders.
 *
 * - At most `maxConcurrentPages` renders hold a page at once; the rest wait in FIFO order (the
 *   wait counts against their `timeoutMs`, and honours their abort signal).
 * - Every render gets a fresh BrowserContext (cookies, storage, cache, permissions isolated) on
 *   one of `browsers` Chromium processes, chosen by fewest renders in progress.
 * - A browser is retired after `recycleAfterPages` renders: new renders go to a fresh process
 *   and the old one is closed once its last render ends (bounds leaks in long-lived renderers).
 * - A browser that crashes, is killed, or stops answering (creating or closing a context takes
 *   longer than `contextTimeoutMs`) is killed with its whole process group; only the renders
 *   running on it fail, with a retryable BAD_GATEWAY / BROWSER_CRASHED. The next render
 *   launches a replacement.
 */
import { availableParallelism } from 'node:os';
import { chromium, type Browser } from 'playwright-core';
import { WdsError } from '@wds/errors';
import { isForbiddenAddress } from '@wds/fetch';
import { userAgents } from './emulation';
import { abortReason, BrowserCodes, browserCrashedError, playwrightMessage, poolClosedError, renderTimeoutError } from './errors';
import { resolveChromiumExecutable } from './executable';
import { LivePage } from './interact/live-page';
import type { OpenPage } from './open-page';
import { browserEnv, chromiumSandbox, isSandboxFailure } from './launch';
import { defaultResolve, type Resolve } from './network';
import { PolicyProxy, type ProxyPolicy } from './proxy';
import { preflight, RenderJob, runRender, validateRequest } from './render';
import type { BrowserPoolOptions, PoolStats, RenderRequest, RenderResult, RenderTimings } from './types';

/**
 * Switches every pool browser gets. The background-networking group keeps Chromium from
 * phoning home (component updates, safe browsing, variations…), which on a closed network turns
 * into a stream of refused connections. WebRTC is limited to proxied UDP (i.e. none): ICE would
 * otherwise probe private addresses that the SSRF proxy cannot see. `--lang` pins the default
 * language (renders for other locations override it per page).
 */
export const DEFAULT_LAUNCH_ARGS: readonly string[] = [
  // Playwright adds most of its own hardening switches too; these are the ones that matter here
  // even when an operator launches with a different Playwright version. `--no-sandbox` is added
  // only when the pool runs without the sandbox (see launch.ts).
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-domain-reliability',
  '--disable-client-side-phishing-detection',
  '--disable-breakpad',
  '--disable-dev-shm-usage',
  '--disable-blink-features=AutomationControlled',
  '--metrics-recording-only',
  '--mute-audio',
  '--lang=en-US',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/**
 * A sensible `maxConcurrentPages`: two pages per core. Renders spend much of their time waiting
 * (network, settle windows), so one per core leaves the CPU idle; more than two per core only
 * lengthens every render.
 */
export function defaultMaxConcurrentPages(): number {
  return Math.max(2, availableParallelism() * 2);
}

interface BrowserHandle {
  id: number;
  ready: Promise<Browser>;
  browser?: Browser;
  pid?: number;
  ua?: { desktop: string; mobile: string };
  /** Renders assigned to this browser since launch. */
  served: number;
  active: Set<RenderJob>;
  /** Pages kept open after their render (interact sessions): they end with this browser. */
  pages: Set<LivePage>;
  retiring: boolean;
  dead: boolean;
  /** Closed on purpose (recycle, pool close): a disconnect is not a crash. */
  closing: boolean;
}

interface Waiter {
  grant(): void;
  reject(e: unknown): void;
}

/** FIFO counting semaphore whose waiters can time out or be aborted. */
class Slots {
  inUse = 0;
  private readonly queue: Waiter[] = [];

  constructor(private readonly max: number) {}

  get queued(): number {
    return this.queue.length;
  }

  acquire(deadline: number, timeoutError: () => unknown, signal?: AbortSignal): Promise<void> {
    if (this.inUse < this.max && this.queue.length === 0) {
      this.inUse++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const i = this.queue.indexOf(w);
        if (i !== -1) this.queue.splice(i, 1);
      };
      const w: Waiter = {
        grant: () => {
          cleanup();
          this.inUse++;
          resolve();
        },
        reject: (e) => {
          cleanup();
          reject(e);
        },
      };
      const onAbort = () => w.reject(abortReason(signal!));
      timer = setTimeout(() => w.reject(timeoutError()), Math.max(0, deadline - performance.now()));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(w);
    });
  }

  release(): void {
    this.inUse--;
    const next = this.queue[0];
    if (next && this.inUse < this.max) next.grant();
  }

  rejectAll(e: unknown): void {
    for (const w of [...this.queue]) w.reject(e);
  }
}

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  // Playwright starts Chromium as a process-group leader: the group holds its zygote,
  // renderer and utility processes too.
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

export class BrowserPool {
  private readonly opts: Required<Omit<BrowserPoolOptions, 'executablePath' | 'launchArgs' | 'env' | 'sandbox'>> & Pick<BrowserPoolOptions, 'executablePath'>;
  /** Chromium's whole environment (never the worker's: see launch.ts). */
  private readonly env: Record<string, string>;
  /** Whether browsers are launched sandboxed; `auto` turns it off for good after a launch that could not sandbox. */
  private sandbox: { sandbox: boolean; fallback: boolean };
  private readonly args: string[];
  private readonly slots: Slots;
  private readonly resolve: Resolve;
  private handles: BrowserHandle[] = [];
  private executable?: string;
  private readonly proxies = new Map<string, PolicyProxy>();
  private nextId = 1;
  private served = 0;
  private closed = false;
  /** Contexts of finished renders still closing (awaited by close()). */
  private readonly closingContexts = new Set<Promise<void>>();

  constructor(options: BrowserPoolOptions) {
    if (!(options.maxConcurrentPages >= 1)) throw new RangeError('maxConcurrentPages must be >= 1');
    if (!(options.recycleAfterPages >= 1)) throw new RangeError('recycleAfterPages must be >= 1');
    this.opts = {
      executablePath: options.executablePath,
      maxConcurrentPages: Math.floor(options.maxConcurrentPages),
      recycleAfterPages: Math.floor(options.recycleAfterPages),
      browsers: Math.max(1, Math.floor(options.browsers ?? 1)),
      settleQuietMs: options.settleQuietMs ?? 250,
      settleMaxMs: options.settleMaxMs ?? 3000,
      launchTimeoutMs: options.launchTimeoutMs ?? 30_000,
      contextTimeoutMs: options.contextTimeoutMs ?? 10_000,
      resolve: options.resolve ?? defaultResolve,
      isForbidden: options.isForbidden ?? isForbiddenAddress,
    };
    this.sandbox = chromiumSandbox(options.sandbox ?? 'auto', process.getuid?.());
    this.env = options.env ?? browserEnv(process.env);
    this.args = [...DEFAULT_LAUNCH_ARGS, ...(options.launchArgs ?? [])];
    this.slots = new Slots(this.opts.maxConcurrentPages);
    this.resolve = this.opts.resolve;
  }

  stats(): PoolStats {
    return {
      inUse: this.slots.inUse,
      queued: this.slots.queued,
      browsers: this.handles.filter((h) => h.browser?.isConnected() && !h.dead).length,
      pagesServed: this.served,
      livePages: this.handles.reduce((n, h) => n + h.pages.size, 0),
    };
  }

  /** PIDs of the running browser processes (operations, tests). */
  browserPids(): number[] {
    return this.handles.filter((h) => !h.dead && h.pid).map((h) => h.pid!);
  }

  /** Whether the next browser is launched sandboxed (operations, tests). */
  sandboxed(): boolean {
    return this.sandbox.sandbox;
  }

  /** The executable this pool launches (resolved on first use). */
  executablePath(): string {
    return (this.executable ??= resolveChromiumExecutable(this.opts.executablePath));
  }

  async render(req: RenderRequest): Promise<RenderResult> {
    const start = performance.now();
    const deadline = start + req.timeoutMs;
    const timings: RenderTimings = {
      queueMs: 0, launchMs: 0, contextMs: 0, navigationMs: 0, settleMs: 0, waitForMs: 0, actionsMs: 0, captureMs: 0, totalMs: 0,
    };
    if (this.closed) throw poolClosedError();
    if (req.signal?.aborted) throw abortReason(req.signal);
    const url = validateRequest(req);
    // Fail fast (no slot, no browser) when the target itself is refused.
    await this.withinDeadline(preflight(url, req, this.resolve, this.opts.isForbidden), deadline, req, 'DNS preflight');

    await this.slots.acquire(deadline, () => renderTimeoutError(req.timeoutMs, 'queue'), req.signal);
    timings.queueMs = performance.now() - start;
    const job = new RenderJob(deadline);
    const timer = setTimeout(() => job.fail(renderTimeoutError(req.timeoutMs, job.phase)), Math.max(0, deadline - performance.now()));
    const onAbort = () => job.fail(abortReason(req.signal!));
    req.signal?.addEventListener('abort', onAbort, { once: true });
    let handle: BrowserHandle | undefined;
    try {
      if (this.closed) throw poolClosedError();
      handle = this.assign(job);
      const launchStart = performance.now();
      job.phase = 'browser launch';
      const browser = await Promise.race([handle.ready, job.failed]);
      timings.launchMs = performance.now() - launchStart;
      const h = handle;
      const result = await runRender(job, req, url, {
        browser,
        userAgents: h.ua!,
        settleQuietMs: this.opts.settleQuietMs,
        settleMaxMs: this.opts.settleMaxMs,
        contextTimeoutMs: this.opts.contextTimeoutMs,
        proxy: (policy) => this.proxyFor(policy),
        onHung: () => this.kill(h),
        browserDead: () => h.dead,
        keep: (s) => this.keepPage(h, s),
      }, timings);
      timings.totalMs = performance.now() - start;
      return result;
    } finally {
      job.done = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      if (job.closed) {
        const c = job.closed;
        this.closingContexts.add(c);
        void c.finally(() => this.closingContexts.delete(c));
      }
      if (handle) {
        handle.active.delete(job);
        this.maybeRetire(handle);
      }
      this.slots.release();
    }
  }

  /** Closes every browser; queued and running renders fail with SERVICE_UNAVAILABLE. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const err = poolClosedError();
    this.slots.rejectAll(err);
    const handles = this.handles;
    this.handles = [];
    for (const h of handles) {
      h.closing = true;
      for (const j of h.active) j.fail(err);
      for (const p of h.pages) p.markGone(err);
    }
    await Promise.all([...this.closingContexts, ...handles.flatMap((h) => [...h.pages].map((p) => p.close()))]);
    await Promise.all(handles.map((h) => this.closeBrowser(h)));
    await Promise.all([...this.proxies.values()].map((p) => p.close()));
  }

  /** A render's page handed over to the caller (`keepPage`): tracked with its browser until it is closed. */
  private keepPage(h: BrowserHandle, s: OpenPage): LivePage {
    const live = new LivePage(s, {
      contextTimeoutMs: this.opts.contextTimeoutMs,
      onHung: () => this.kill(h),
      offlineProxy: async () => (await this.proxyFor({ ssrf: true, blockAds: false, offline: true })).start(),
      release: (p) => {
        h.pages.delete(p);
        this.maybeRetire(h);
      },
    });
    h.pages.add(live);
    if (h.dead) live.markGone(browserCrashedError('the browser exited during the render'));
    return live;
  }

  private async proxyFor(policy: ProxyPolicy): Promise<PolicyProxy> {
    if (this.closed) throw poolClosedError();
    const key = `${policy.ssrf}/${policy.blockAds}/${!!policy.offline}`;
    let proxy = this.proxies.get(key);
    if (!proxy) {
      proxy = new PolicyProxy(policy, this.resolve, this.opts.isForbidden);
      this.proxies.set(key, proxy);
    }
    await proxy.start();
    return proxy;
  }

  private async withinDeadline<T>(p: Promise<T>, deadline: number, req: RenderRequest, phase: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      return await Promise.race([
        p,
        new Promise<never>((_, rej) => {
          timer = setTimeout(() => rej(renderTimeoutError(req.timeoutMs, phase)), Math.max(0, deadline - performance.now()));
          if (req.signal) {
            onAbort = () => rej(abortReason(req.signal!));
            req.signal.addEventListener('abort', onAbort, { once: true });
          }
        }),
      ]);
    } finally {
      clearTimeout(timer);
      if (onAbort) req.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Picks (or launches) the browser for a render and reserves it synchronously. */
  private assign(job: RenderJob): BrowserHandle {
    const live = this.handles.filter((h) => !h.dead && !h.retiring);
    let h: BrowserHandle;
    if (live.length < this.opts.browsers) h = this.launch();
    else h = live.reduce((a, b) => (b.active.size < a.active.size ? b : a));
    h.active.add(job);
    h.served++;
    this.served++;
    if (h.served >= this.opts.recycleAfterPages) h.retiring = true;
    return h;
  }

  /** One Chromium process, sandboxed when the pool's setting allows it (see launch.ts). */
  private async launchChromium(executablePath: string): Promise<Browser> {
    const launch = (sandbox: boolean) =>
      chromium.launch({
        executablePath,
        headless: true,
        args: sandbox ? this.args : [...this.args, '--no-sandbox'],
        env: this.env,
        chromiumSandbox: sandbox,
        timeout: this.opts.launchTimeoutMs,
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
    if (!this.sandbox.sandbox) return launch(false);
    try {
      return await launch(true);
    } catch (e) {
      if (!this.sandbox.fallback || !isSandboxFailure(playwrightMessage(e))) throw e;
      this.sandbox = { sandbox: false, fallback: false };
      return launch(false);
    }
  }

  private launch(): BrowserHandle {
    const h: BrowserHandle = {
      id: this.nextId++,
      ready: undefined as unknown as Promise<Browser>,
      served: 0,
      active: new Set(),
      pages: new Set(),
      retiring: false,
      dead: false,
      closing: false,
    };
    h.ready = (async () => {
      const executablePath = this.executablePath();
      let browser: Browser;
      try {
        browser = await this.launchChromium(executablePath);
      } catch (e) {
        throw new WdsError('BAD_GATEWAY', {
          code: BrowserCodes.LAUNCH_FAILED,
          retryable: true,
          message: `Could not launch Chromium (${executablePath}): ${playwrightMessage(e).slice(0, 300)}`,
          cause: e,
        });
      }
      h.browser = browser;
      h.ua = userAgents(browser.version());
      browser.on('disconnected', () => this.onDisconnected(h));
      try {
        const cdp = await browser.newBrowserCDPSession();
        const info = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: { type: string; id: number }[] };
        h.pid = info.processInfo.find((p) => p.type === 'browser')?.id;
        await cdp.detach().catch(() => {});
      } catch {
        // Without a pid a hung browser can still be closed through Playwright, just less surely.
      }
      if (this.closed || h.dead) {
        h.closing = true;
        await this.closeBrowser(h);
        throw h.dead ? browserCrashedError('the browser exited right after launch') : poolClosedError();
      }
      return browser;
    })();
    h.ready.catch(() => {
      h.dead = true;
      this.handles = this.handles.filter((x) => x !== h);
    });
    this.handles.push(h);
    return h;
  }

  private onDisconnected(h: BrowserHandle): void {
    const wasDead = h.dead;
    h.dead = true;
    this.handles = this.handles.filter((x) => x !== h);
    if (!h.closing) {
      const err = browserCrashedError(wasDead ? 'the browser stopped answering and was killed' : 'the browser process exited during the render');
      for (const j of h.active) j.fail(err);
      for (const p of h.pages) p.markGone(err);
    }
    killGroup(h.pid);
  }

  /** A hung browser: fail its renders and kill the process group. */
  private kill(h: BrowserHandle): void {
    if (h.dead) return;
    h.dead = true;
    const err = browserCrashedError('the browser stopped answering and was killed');
    for (const j of h.active) j.fail(err);
    for (const p of h.pages) p.markGone(err);
    this.handles = this.handles.filter((x) => x !== h);
    killGroup(h.pid);
    if (!h.pid) h.browser?.close().catch(() => {});
  }

  private maybeRetire(h: BrowserHandle): void {
    if (!h.retiring || h.dead || h.active.size > 0 || h.pages.size > 0) return;
    h.closing = true;
    h.dead = true;
    this.handles = this.handles.filter((x) => x !== h);
    void this.closeBrowser(h);
  }

  private async closeBrowser(h: BrowserHandle): Promise<void> {
    const browser = h.browser ?? (await h.ready.catch(() => undefined));
    if (!browser) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      browser.close().catch(() => {}),
      new Promise<void>((r) => {
        timer = setTimeout(() => {
          killGroup(h.pid);
          r();
        }, 5000);
      }),
    ]);
    clearTimeout(timer);
  }
}
