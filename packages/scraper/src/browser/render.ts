/**
 * One render: a fresh context and page on a pooled browser, the request policy, navigation,
 * automatic settle, `waitFor`, actions and capture. Lifecycle (slots, browsers, crashes) is the
 * pool's business; this module only sees a `RenderJob` that can be failed from outside.
 */
import type { Browser, BrowserContext, BrowserContextOptions, Page, Request, Response } from 'playwright-core';
import { WdsError } from '@wds/errors';
import { ssrfBlockedError } from '../ssrf';
import { runActions, type ActionHost } from './actions';
import { COOKIE_BANNER_INIT_SCRIPT } from './consent';
import { DESKTOP_VIEWPORT, MOBILE_DEVICE, localeSettings } from './emulation';
import {
  BrowserCodes,
  browserCrashedError,
  dnsError,
  isClosedError,
  navigationError,
  playwrightMessage,
  renderTimeoutError,
  urlNotAllowedError,
} from './errors';
import { NetActivity, RequestGuard, type Resolve, type Verdict } from './network';
import type { Capture, RenderRequest, RenderResult, RenderTimings, ScreenshotOptions } from './types';

/** Playwright calls get this much beyond the render's deadline, so the deadline always fires first. */
const GRACE_MS = 1000;
const SETTLE_POLL_MS = 50;

/** Records the time of the last DOM change (childList/characterData) of each document. */
const MUTATION_PROBE_INIT = `(() => {
  const K = Symbol.for('wds.lastMutation');
  if (window[K]) return;
  let last = performance.now();
  try {
    new MutationObserver(() => { last = performance.now(); })
      .observe(document, { childList: true, subtree: true, characterData: true });
  } catch (e) {}
  Object.defineProperty(window, K, { value: () => last, enumerable: false });
})();`;

// Page-side code runs in the browser; the repo compiles without the DOM lib.
declare const window: unknown;
declare const document: { scripts: { length: number }; readyState: string };

type Probe = { since: number; scripts: number; ready: string };
const PROBE = (): Probe => {
  const f = (window as unknown as Record<symbol, (() => number) | undefined>)[Symbol.for('wds.lastMutation')];
  return { since: f ? performance.now() - f() : 1e9, scripts: document.scripts.length, ready: document.readyState };
};

/** Headers that are connection-level or computed by the browser: never forwarded. */
const DROP_HEADERS = new Set(['host', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-connection', 'proxy-authorization']);

/** A render as the pool sees it: can be failed from outside (crash, timeout, abort, pool close). */
export class RenderJob {
  failure: unknown;
  readonly failed: Promise<never>;
  private reject!: (e: unknown) => void;
  /** Set once the render is over (result returned or error thrown). */
  done = false;
  context?: BrowserContext;
  /** What the render is doing now (named in timeout errors). */
  phase = 'queue';

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
  resolve: Resolve;
  isForbidden: (ip: string) => boolean;
  /** The browser stopped answering (context create/close hung): the pool kills it. */
  onHung(): void;
  /** Whether the browser this render runs on has died. */
  browserDead(): boolean;
}

function splitHeaders(headers: Record<string, string> | undefined): { userAgent?: string; extra: Record<string, string> } {
  const extra: Record<string, string> = {};
  let userAgent: string | undefined;
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (typeof v !== 'string') continue;
    const lk = k.toLowerCase();
    if (lk === 'user-agent') userAgent = v;
    else if (!DROP_HEADERS.has(lk)) extra[k] = v;
  }
  return { userAgent, extra };
}

function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WdsError('INVALID_URL', { message: 'Invalid URL: must be an absolute http(s) URL' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WdsError('INVALID_URL', { message: `Invalid URL: unsupported scheme ${url.protocol} (must be http or https)` });
  }
  return url;
}

/** A bounded wait on a browser operation; on expiry the browser is declared hung. */
async function bounded<T>(p: Promise<T>, ms: number, onExpire: () => void): Promise<T> {
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

export function validateRequest(req: RenderRequest): URL {
  return parseTarget(req.url);
}

/** SSRF preflight of the top-level URL, before a browser slot is spent on it. */
export async function preflight(url: URL, req: RenderRequest, resolve: Resolve, isForbidden: (ip: string) => boolean): Promise<void> {
  if (req.allowPrivateNetwork) return;
  const guard = new RequestGuard({ blockAds: false, allowPrivateNetwork: false, resolve, isForbidden }, () => false);
  const v = await guard.checkAddress(url);
  if (!v.ok) throw verdictError(v, url);
}

function verdictError(v: Extract<Verdict, { ok: false }>, url: URL): WdsError {
  if (v.reason === 'ssrf') return ssrfBlockedError(v.host, v.ip);
  if (v.reason === 'dns') return dnsError(v.host);
  return urlNotAllowedError(url.href, `navigation to ${url.protocol} URLs is not allowed`);
}

export async function runRender(job: RenderJob, req: RenderRequest, url: URL, deps: RenderDeps, timings: RenderTimings): Promise<RenderResult> {
  const t = (since: number) => performance.now() - since;
  job.phase = 'context setup';
  let mainResponse: Response | null = null;
  let page: Page | undefined;
  let closingOurselves = false;
  const activity = new NetActivity();
  const isMainFrameNav = (r: Request): boolean => {
    try {
      return page !== undefined && r.isNavigationRequest() && r.frame() === page.mainFrame();
    } catch {
      return false;
    }
  };
  const guard = new RequestGuard(
    { blockAds: req.blockAds, allowPrivateNetwork: req.allowPrivateNetwork, resolve: deps.resolve, isForbidden: deps.isForbidden },
    isMainFrameNav,
  );

  const body = async (): Promise<RenderResult> => {
    // ---- context
    let t0 = performance.now();
    const ls = localeSettings(req.location);
    const { userAgent, extra } = splitHeaders(req.headers);
    if (!Object.keys(extra).some((k) => k.toLowerCase() === 'accept-language')) extra['Accept-Language'] = ls.acceptLanguage;
    const options: BrowserContextOptions = {
      userAgent: userAgent ?? (req.mobile ? deps.userAgents.mobile : deps.userAgents.desktop),
      viewport: req.mobile ? { ...MOBILE_DEVICE.viewport } : { ...DESKTOP_VIEWPORT },
      ...(req.mobile
        ? { screen: { ...MOBILE_DEVICE.screen }, deviceScaleFactor: MOBILE_DEVICE.deviceScaleFactor, isMobile: true, hasTouch: true }
        : {}),
      locale: ls.locale,
      timezoneId: ls.timezoneId,
      extraHTTPHeaders: extra,
      ignoreHTTPSErrors: req.skipTlsVerification,
      serviceWorkers: 'block',
      acceptDownloads: false,
      ...(req.storageState ? { storageState: req.storageState as BrowserContextOptions['storageState'] } : {}),
    };
    const creating = deps.browser.newContext(options);
    // If the render is abandoned while the context is being created, close it when it arrives.
    creating.then((c) => (job.done ? c.close().catch(() => {}) : undefined), () => {});
    const context = await bounded(creating, deps.contextTimeoutMs, deps.onHung);
    job.context = context;
    if (job.done) throw job.failure ?? new Error('render abandoned');

    context.on('request', activity.onStart);
    context.on('requestfinished', activity.onEnd);
    context.on('requestfailed', activity.onEnd);
    // Popups are not part of the render: close them at once.
    context.on('page', (p) => {
      if (page !== undefined && p !== page) p.close().catch(() => {});
    });
    const setup: Promise<unknown>[] = [
      context.addInitScript({ content: req.blockAds ? MUTATION_PROBE_INIT + COOKIE_BANNER_INIT_SCRIPT : MUTATION_PROBE_INIT }),
    ];
    if (guard.active) setup.push(context.route(() => true, guard.handler));
    if (!req.allowPrivateNetwork) {
      // WebSockets bypass routes; check them too (no CORS protects a private WebSocket server).
      setup.push(
        context.routeWebSocket(
          () => true,
          async (ws) => {
            let ok = false;
            try {
              ok = (await guard.checkAddress(new URL(ws.url()))).ok;
            } catch {
              ok = false;
            }
            if (ok) ws.connectToServer();
            else {
              guard.blockedSsrf++;
              await ws.close({ code: 1008, reason: 'blocked' }).catch(() => {});
            }
          },
        ),
      );
    }
    await Promise.all(setup);
    page = await context.newPage();
    const p = page;
    p.on('crash', () => job.fail(browserCrashedError('the page renderer crashed')));
    p.on('close', () => {
      if (closingOurselves || job.done) return;
      // Either the browser died (the pool reports that) or the page closed itself.
      setTimeout(() => {
        if (!deps.browserDead()) {
          job.fail(new WdsError('BAD_GATEWAY', { code: BrowserCodes.PAGE_CLOSED, retryable: false, message: 'The page closed itself during the render' }));
        }
      }, 200);
    });
    p.on('response', (r) => {
      try {
        if (r.request().isNavigationRequest() && r.frame() === p.mainFrame()) mainResponse = r;
      } catch {
        // Service-worker responses have no frame.
      }
    });
    p.setDefaultTimeout(Math.max(1, job.remaining()) + GRACE_MS);
    timings.contextMs = t(t0);

    // ---- navigation
    job.phase = 'navigation';
    t0 = performance.now();
    let navResponse: Response | null;
    try {
      navResponse = await p.goto(url.href, { waitUntil: 'domcontentloaded', timeout: job.remaining() + GRACE_MS });
    } catch (e) {
      if (guard.mainFrameBlock) throw verdictError(guard.mainFrameBlock, url);
      throw navigationError(e, url);
    }
    // Wait for `load`, but a hanging subresource must not cost the whole render: the DOM is
    // complete at DOMContentLoaded, so keep a reserve of the budget for capture.
    const reserve = Math.min(2000, job.remaining() * 0.2);
    await p.waitForLoadState('load', { timeout: Math.max(1, job.remaining() - reserve) }).catch(() => {});
    timings.navigationMs = t(t0);
    checkMainFrame();

    // ---- automatic settle, then the caller's waitFor
    job.phase = 'settle';
    t0 = performance.now();
    await settle(p, true);
    timings.settleMs = t(t0);
    job.phase = 'waitFor';
    t0 = performance.now();
    if (req.waitFor > 0) await job.sleep(Math.min(req.waitFor, job.remaining() + GRACE_MS));
    timings.waitForMs = t(t0);

    // ---- actions
    const host: ActionHost = {
      page: p,
      remaining: () => job.remaining(),
      settle: () => settle(p, false),
      checkMainFrame,
      screenshot: (o) => screenshot(p, o),
      sleep: (ms) => job.sleep(ms),
    };
    let actions: RenderResult['actions'];
    if (req.actions) {
      job.phase = 'actions';
      t0 = performance.now();
      actions = await runActions(host, req.actions);
      timings.actionsMs = t(t0);
    }

    // ---- capture
    job.phase = 'capture';
    t0 = performance.now();
    checkMainFrame();
    const html = await p.content();
    const shot = req.screenshot ? await screenshot(p, req.screenshot) : undefined;
    const storageState = req.captureStorageState ? await context.storageState() : undefined;
    const resp = mainResponse ?? navResponse;
    let headers: Record<string, string> = {};
    if (resp) {
      headers = await Promise.race([resp.allHeaders(), job.sleep(1000).then(() => resp.headers())]).catch(() => resp.headers());
    }
    timings.captureMs = t(t0);
    const contentType = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const result: RenderResult = {
      finalUrl: p.url(),
      statusCode: resp?.status() ?? 0,
      headers,
      contentType,
      html,
      blocked: { ads: guard.blockedAds, ssrf: guard.blockedSsrf },
      timings,
    };
    if (shot) result.screenshot = shot;
    if (actions) result.actions = actions;
    if (storageState !== undefined) result.storageState = storageState;
    return result;
  };

  /** The main frame must show an http(s) (or about:) document that the guard let through. */
  function checkMainFrame(): void {
    if (guard.mainFrameBlock) throw verdictError(guard.mainFrameBlock, url);
    if (!page) return;
    const current = page.url();
    const scheme = current.slice(0, current.indexOf(':') + 1).toLowerCase();
    if (scheme !== 'http:' && scheme !== 'https:' && scheme !== 'about:' && scheme !== 'chrome-error:') {
      throw urlNotAllowedError(current, `navigation to ${scheme} URLs is not allowed`);
    }
  }

  /**
   * Waits until no request is in flight and the DOM has not changed for `settleQuietMs`, at most
   * `settleMaxMs`. A document without scripts and without requests in flight cannot change any
   * more: it is done at once (the first check after load).
   */
  async function settle(p: Page, afterLoad: boolean): Promise<void> {
    const quiet = deps.settleQuietMs;
    const until = Math.min(performance.now() + deps.settleMaxMs, job.deadline);
    for (let first = true; ; first = false) {
      let probe: Probe | null = null;
      try {
        probe = await p.evaluate(PROBE);
      } catch (e) {
        if (!/Execution context was destroyed|navigat|Cannot find context/i.test(String(e))) throw e;
      }
      const now = performance.now();
      let wait = SETTLE_POLL_MS;
      if (probe) {
        const net = activity.quietFor(now);
        if (afterLoad && first && probe.scripts === 0 && net > 0 && probe.ready === 'complete') return;
        if (probe.since >= quiet && net >= quiet) return;
        wait = Math.max(10, Math.min(SETTLE_POLL_MS, quiet - Math.min(probe.since, net)));
      }
      if (now + wait >= until) return;
      await job.sleep(wait);
      if (job.failure !== undefined) return;
    }
  }

  async function screenshot(p: Page, o: ScreenshotOptions): Promise<Capture> {
    if (o.viewport) await p.setViewportSize({ width: o.viewport.width, height: o.viewport.height });
    const jpeg = o.quality !== undefined;
    const bytes = await p.screenshot({
      fullPage: o.fullPage,
      type: jpeg ? 'jpeg' : 'png',
      ...(jpeg ? { quality: o.quality } : {}),
      timeout: job.remaining() + GRACE_MS,
    });
    return { bytes, mime: jpeg ? 'image/jpeg' : 'image/png' };
  }

  try {
    return await Promise.race([body(), job.failed]);
  } catch (e) {
    if (job.failure !== undefined) throw job.failure;
    if (e instanceof WdsError && e.code !== BrowserCodes.ACTION_ERROR) throw e;
    if (job.remaining() <= 5) throw renderTimeoutError(req.timeoutMs, job.phase);
    if (deps.browserDead() || isClosedError(e)) {
      // The crash may be reported a moment after the failed call: give the pool that moment.
      await job.sleep(150);
      if (job.failure !== undefined) throw job.failure;
      if (deps.browserDead() || !deps.browser.isConnected()) throw browserCrashedError('the browser disconnected during the render', e);
    }
    if (e instanceof WdsError) throw e;
    throw new WdsError('BAD_GATEWAY', {
      code: BrowserCodes.NAVIGATION_FAILED,
      retryable: true,
      message: `Browser render failed during ${job.phase}: ${playwrightMessage(e).slice(0, 300)}`,
      cause: e,
    });
  } finally {
    job.done = true;
    closingOurselves = true;
    const ctx = job.context;
    if (ctx && !deps.browserDead()) {
      await bounded(ctx.close(), deps.contextTimeoutMs, deps.onHung).catch(() => {});
    }
  }
}

export { parseTarget };
