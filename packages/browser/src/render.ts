/**
 * One render: a fresh context and page on a pooled browser, the request policy, navigation,
 * automatic settle, `waitFor`, actions and capture. Lifecycle (slots, browsers, crashes) is the
 * pool's business; this module only sees a `RenderJob` that can be failed from outside.
 */
import { errors as pwErrors, type Browser, type BrowserContext, type BrowserContextOptions, type Page, type Request, type Response } from 'playwright-core';
import { ScrapeCodes, WdsError } from '@wds/errors';
import { ssrfBlockedError } from '@wds/fetch';
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
import { AdBlocker, checkAddress, NetActivity, type Resolve } from './network';
import type { Block, PolicyProxy, ProxyPolicy } from './proxy';
import { isAdHost } from './blocklist';
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
declare const document: {
  scripts: { length: number };
  readyState: string;
  doctype: unknown;
  documentElement: { outerHTML: string } | null;
};
declare const XMLSerializer: new () => { serializeToString(n: unknown): string };

const READY_STATE = (): string => document.readyState;

type Probe = { since: number; scripts: number; ready: string; html?: string };
/**
 * Time since the last DOM change, number of scripts, readyState. With `withHtml`, a document
 * that has no scripts and is fully loaded (it cannot change any more) is also serialised the way
 * page.content() does it, saving the capture a round trip.
 */
const PROBE = (withHtml: boolean): Probe => {
  const f = (window as Record<symbol, (() => number) | undefined>)[Symbol.for('wds.lastMutation')];
  const probe: Probe = { since: f ? performance.now() - f() : 1e9, scripts: document.scripts.length, ready: document.readyState };
  if (withHtml && probe.scripts === 0 && probe.ready === 'complete') {
    let html = '';
    if (document.doctype) html = new XMLSerializer().serializeToString(document.doctype);
    if (document.documentElement) html += document.documentElement.outerHTML;
    probe.html = html;
  }
  return probe;
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
  /** The context's close, started when the render ends. */
  closed?: Promise<void>;
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
  /** The pool's proxy for a request policy (started on first use). */
  proxy(policy: ProxyPolicy): Promise<PolicyProxy>;
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
  const v = await checkAddress(url, resolve, isForbidden);
  if (!v.ok) throw blockError(v);
}

function blockError(b: Pick<Block, 'reason' | 'host' | 'ip'>): WdsError {
  if (b.reason === 'ssrf') return ssrfBlockedError(b.host, b.ip ?? '?');
  if (b.reason === 'dns') return dnsError(b.host);
  if (b.reason === 'connect') {
    return new WdsError('BAD_GATEWAY', {
      code: ScrapeCodes.CONNECTION_FAILED,
      retryable: true,
      message: `Connection to ${b.host} failed`,
      details: { host: b.host },
    });
  }
  return new WdsError('URL_BLOCKED', {
    code: BrowserCodes.AD_BLOCKED,
    retryable: false,
    message: `URL blocked: the page navigated to ${b.host}, which is on the ad/tracker block list (set blockAds: false to allow it)`,
    details: { host: b.host },
  });
}

/** Client-hint metadata matching our UAs (what Playwright derives for its own UA override). */
function uaMetadata(mobile: boolean, major: string) {
  return {
    brands: [{ brand: 'Chromium', version: major }, { brand: 'Not-A.Brand', version: '24' }],
    fullVersion: `${major}.0.0.0`,
    platform: mobile ? 'Android' : 'Linux',
    platformVersion: mobile ? '10' : '',
    architecture: mobile ? 'arm' : 'x86',
    model: mobile ? 'K' : '',
    mobile,
  };
}

export async function runRender(job: RenderJob, req: RenderRequest, url: URL, deps: RenderDeps, timings: RenderTimings): Promise<RenderResult> {
  const t = (since: number) => performance.now() - since;
  job.phase = 'context setup';
  let mainResponse: Response | null = null;
  let page: Page | undefined;
  let closingOurselves = false;
  let proxy: PolicyProxy | undefined;
  /** Set when the proxy refused a main-frame navigation (a redirect hop or a later navigation). */
  let mainFrameBlock: Block | undefined;
  /** URL of the latest main-frame navigation request (redirect hops included). */
  let lastMainRequest = url.href;
  let blockedSsrf = 0;
  let blockedAdsByProxy = 0;
  const activity = new NetActivity();
  const isMainFrameNav = (r: Request): boolean => {
    try {
      return page !== undefined && r.isNavigationRequest() && r.frame() === page.mainFrame();
    } catch {
      return false;
    }
  };
  const ads = new AdBlocker(isMainFrameNav);
  /** The proxy's refusal behind a failed or 403'd request, if that is what it was. */
  const proxyBlockFor = (requestUrl: string): Block | undefined => {
    if (!proxy) return undefined;
    try {
      return proxy.lastBlock(new URL(requestUrl).hostname);
    } catch {
      return undefined;
    }
  };

  const counted = new WeakSet<Request>();
  /** Counts a request the proxy refused (403 or failed tunnel); a main-frame one fails the render. */
  const noteProxyBlock = (r: Request): void => {
    if (counted.has(r)) return;
    const b = proxyBlockFor(r.url());
    if (!b) return;
    counted.add(r);
    if (b.reason === 'ads') blockedAdsByProxy++;
    else if (b.reason !== 'connect') blockedSsrf++;
    if (isMainFrameNav(r)) mainFrameBlock ??= b;
  };

  const body = async (): Promise<RenderResult> => {
    // ---- context
    let t0 = performance.now();
    const ls = localeSettings(req.location);
    const { userAgent, extra } = splitHeaders(req.headers);
    const explicitLang = Object.entries(extra).find(([k]) => k.toLowerCase() === 'accept-language')?.[1];
    if (explicitLang) ls.languages = explicitLang.split(',').map((l) => l.split(';')[0]!.trim()).filter(Boolean);
    else extra['Accept-Language'] = ls.acceptLanguage;
    // Request policy: through the proxy when there is one to apply. The ad list must not block
    // the page itself, so a render of an ad host's own URL blocks ads with a route instead.
    const targetIsAdHost = isAdHost(url.hostname);
    const adsByProxy = req.blockAds && !targetIsAdHost;
    const adsByRoute = req.blockAds && targetIsAdHost;
    if (!req.allowPrivateNetwork || adsByProxy) proxy = await deps.proxy({ ssrf: !req.allowPrivateNetwork, blockAds: adsByProxy });
    const ua = userAgent ?? (req.mobile ? deps.userAgents.mobile : deps.userAgents.desktop);
    const options: BrowserContextOptions = {
      userAgent: ua,
      viewport: req.mobile ? { ...MOBILE_DEVICE.viewport } : { ...DESKTOP_VIEWPORT },
      ...(req.mobile
        ? { screen: { ...MOBILE_DEVICE.screen }, deviceScaleFactor: MOBILE_DEVICE.deviceScaleFactor, isMobile: true, hasTouch: true }
        : {}),
      // No `locale` here: Playwright would send it as the whole Accept-Language header, losing
      // the secondary languages. The header comes from extraHTTPHeaders, navigator.language(s)
      // and Intl from the per-page override below.
      timezoneId: ls.timezoneId,
      extraHTTPHeaders: extra,
      ignoreHTTPSErrors: req.skipTlsVerification,
      serviceWorkers: 'block',
      acceptDownloads: false,
      ...(proxy ? { proxy: { server: await proxy.start(), bypass: '<-loopback>' } } : {}),
      ...(req.storageState ? { storageState: req.storageState as BrowserContextOptions['storageState'] } : {}),
    };
    const creating = deps.browser.newContext(options);
    // If the render is abandoned while the context is being created, close it when it arrives.
    creating.then((c) => (job.done ? c.close().catch(() => {}) : undefined), () => {});
    const context = await bounded(creating, deps.contextTimeoutMs, deps.onHung);
    job.context = context;
    if (job.done) throw job.failure ?? new Error('render abandoned');

    context.on('request', (r) => {
      activity.onStart(r);
      if (isMainFrameNav(r)) lastMainRequest = r.url();
    });
    context.on('requestfinished', activity.onEnd);
    context.on('requestfailed', (r) => {
      activity.onEnd(r);
      if (proxy) noteProxyBlock(r);
    });
    // Popups are not part of the render: close them at once.
    context.on('page', (pg) => {
      if (page !== undefined && pg !== page) pg.close().catch(() => {});
    });
    const setup: Promise<unknown>[] = [
      context.addInitScript({ content: req.blockAds ? MUTATION_PROBE_INIT + COOKIE_BANNER_INIT_SCRIPT : MUTATION_PROBE_INIT }),
    ];
    if (adsByRoute) setup.push(context.route(() => true, ads.handler));
    await Promise.all(setup);
    page = await context.newPage();
    const p = page;
    if (ls.locale !== 'en-US' || ls.languages.join(',') !== 'en-US,en') {
      // navigator.language(s) follow the UA override's language list, Intl the locale override.
      // The session stays attached: DevTools overrides end with the session that set them.
      const cdp = await context.newCDPSession(p);
      const major = /Chrome\/(\d+)/.exec(ua)?.[1];
      await Promise.all([
        cdp.send('Emulation.setUserAgentOverride', {
          userAgent: ua,
          acceptLanguage: ls.languages.join(','),
          ...(major ? { userAgentMetadata: uaMetadata(req.mobile, major) } : {}),
        }),
        // ICU may not know the locale (a made-up tag): keep the default then.
        cdp.send('Emulation.setLocaleOverride', { locale: ls.locale }).catch(() => {}),
      ]);
    }
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
        if (proxy && r.status() >= 400 && r.headers()['x-wds-blocked']) noteProxyBlock(r.request());
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
    let navResponse: Response | null = null;
    // Wait for `load`, but a hanging subresource must not cost the whole render: keep a reserve
    // of the budget, and if `load` has not come by then, go on with the parsed document.
    const reserve = Math.min(2000, job.remaining() * 0.2);
    try {
      navResponse = await p.goto(url.href, { waitUntil: 'load', timeout: Math.max(1, job.remaining() - reserve) });
    } catch (e) {
      if (mainFrameBlock) throw blockError(mainFrameBlock);
      const b = proxyBlockFor(lastMainRequest);
      if (b && !(e instanceof pwErrors.TimeoutError)) throw blockError(b);
      if (!(e instanceof pwErrors.TimeoutError)) throw navigationError(e, url);
      // Not loaded yet: wait (up to the deadline) for at least a parsed document.
      for (;;) {
        const ready = p.url() === 'about:blank' || !mainResponse ? 'loading' : await p.evaluate(READY_STATE).catch(() => 'loading');
        if (ready !== 'loading') break;
        await job.sleep(100);
        if (job.failure !== undefined) throw job.failure;
      }
    }
    timings.navigationMs = t(t0);
    checkMainFrame();

    // ---- automatic settle, then the caller's waitFor
    job.phase = 'settle';
    t0 = performance.now();
    // A static document (no scripts, nothing in flight) is final: with nothing to run after
    // the settle, its HTML comes back with the settle's probe.
    const staticHtml = await settle(p, true, !req.actions?.length && !(req.waitFor > 0));
    timings.settleMs = t(t0);
    job.phase = 'waitFor';
    t0 = performance.now();
    if (req.waitFor > 0) await job.sleep(Math.min(req.waitFor, job.remaining() + GRACE_MS));
    timings.waitForMs = t(t0);

    // ---- actions
    const host: ActionHost = {
      page: p,
      remaining: () => job.remaining(),
      settle: async () => void (await settle(p, false)),
      checkMainFrame,
      screenshot: (o) => screenshot(p, o),
      sleep: (ms) => job.sleep(ms),
      onAction: (i, type) => {
        job.phase = `action ${i} (${type})`;
      },
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
    const resp: Response | null = mainResponse ?? navResponse;
    const [html, headers, storageState] = await Promise.all([
      staticHtml ?? p.content(),
      resp ? Promise.race([resp.allHeaders(), job.sleep(1000).then(() => resp.headers())]).catch(() => resp.headers()) : ({} as Record<string, string>),
      req.captureStorageState ? context.storageState() : undefined,
    ]);
    const shot = req.screenshot ? await screenshot(p, req.screenshot) : undefined;
    timings.captureMs = t(t0);
    const contentType = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const result: RenderResult = {
      finalUrl: p.url(),
      statusCode: resp?.status() ?? 0,
      headers,
      contentType,
      html,
      blocked: { ads: ads.blocked + blockedAdsByProxy, ssrf: blockedSsrf },
      timings,
    };
    if (shot) result.screenshot = shot;
    if (actions) result.actions = actions;
    if (storageState !== undefined) result.storageState = storageState;
    return result;
  };

  /** The main frame must show an http(s) (or about:) document that the SSRF proxy let through. */
  function checkMainFrame(): void {
    if (mainFrameBlock) throw blockError(mainFrameBlock);
    if (!page) return;
    const current = page.url();
    const scheme = current.slice(0, current.indexOf(':') + 1).toLowerCase();
    if (scheme !== 'http:' && scheme !== 'https:' && scheme !== 'about:') {
      if (scheme === 'chrome-error:') {
        // A later navigation failed; if the proxy refused it, say so.
        const b = proxyBlockFor(lastMainRequest);
        if (b) throw blockError(b);
        return;
      }
      throw urlNotAllowedError(current, `navigation to ${scheme} URLs is not allowed`);
    }
  }

  /**
   * Waits until no request is in flight and the DOM has not changed for `settleQuietMs`, at most
   * `settleMaxMs`. A document without scripts and without requests in flight cannot change any
   * more: it is done at once (the first check after load).
   */
  async function settle(p: Page, afterLoad: boolean, wantStaticHtml = false): Promise<string | undefined> {
    const quiet = deps.settleQuietMs;
    const start = performance.now();
    const until = Math.min(start + deps.settleMaxMs, job.deadline);
    for (let first = true; ; first = false) {
      let probe: Probe | null = null;
      try {
        probe = await p.evaluate(PROBE, afterLoad && first && wantStaticHtml);
      } catch (e) {
        if (!/Execution context was destroyed|navigat|Cannot find context/i.test(String(e))) throw e;
      }
      const now = performance.now();
      let wait = SETTLE_POLL_MS;
      if (probe) {
        const net = activity.quietFor(now);
        if (afterLoad && first && probe.scripts === 0 && net > 0 && probe.ready === 'complete') return probe.html;
        // After an action, its effects (a scroll event, a fetch) start a moment later: the quiet
        // window counts from the action, not from the last activity before it.
        if (probe.since >= quiet && net >= quiet && (afterLoad || now - start >= quiet)) return undefined;
        wait = Math.max(10, Math.min(SETTLE_POLL_MS, quiet - Math.min(probe.since, net, afterLoad ? Infinity : now - start)));
      }
      if (now + wait >= until) return undefined;
      await job.sleep(wait);
      if (job.failure !== undefined) return undefined;
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
    // Closed in the background: the result does not wait for the renderer's teardown.
    if (ctx && !deps.browserDead()) job.closed = bounded(ctx.close(), deps.contextTimeoutMs, deps.onHung).catch(() => {});
  }
}

export { parseTarget };
