/**
 * Context setup, the first step of a render: a fresh context behind the render's request policy,
 * with the request's headers, device and locale, and the one page the render works on.
 */
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { WdsError } from '@wds/errors';
import { isAdHost } from './blocklist';
import { COOKIE_BANNER_INIT_SCRIPT } from './consent';
import { DESKTOP_VIEWPORT, MOBILE_DEVICE, localeSettings, type LocaleSettings } from './emulation';
import { BrowserCodes, browserCrashedError } from './errors';
import { PageWatch } from './page-watch';
import { contextProxy, type PolicyProxy, type ProxyPolicy } from './proxy';
import { bounded, GRACE_MS } from './deadline';
import type { LivePage } from './interact/live-page';
import type { RenderJob } from './render-job';
import { MUTATION_PROBE_INIT } from './settle';
import type { RenderRequest } from './types';

/** Headers that are connection-level or computed by the browser: never forwarded. */
const DROP_HEADERS = new Set(['host', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-connection', 'proxy-authorization']);

/** One render's open page: what every step after context setup works on. */
export interface OpenPage {
  context: BrowserContext;
  page: Page;
  watch: PageWatch;
  /** Device pixels per CSS pixel of the context (the mobile device's, else 1). */
  deviceScale: number;
}

/** The pool's side of a render: its browser, settings, proxies, and what it does with a hung browser or a kept page. */
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

export async function openPage(job: RenderJob, req: RenderRequest, url: URL, deps: RenderDeps): Promise<OpenPage> {
  const ls = localeSettings(req.location);
  const { userAgent, extra } = splitHeaders(req.headers);
  applyLanguages(ls, extra);
  const policy = await requestPolicy(req, url, deps);
  const watch = new PageWatch(url, policy.proxy, req.checkUrl);
  const ua = userAgent ?? (req.mobile ? deps.userAgents.mobile : deps.userAgents.desktop);
  const context = await createContext(job, deps, contextOptions(req, ua, ls, extra, policy.server));
  watch.watchContext(context);
  await Promise.all([
    context.addInitScript({ content: req.blockAds ? MUTATION_PROBE_INIT + COOKIE_BANNER_INIT_SCRIPT : MUTATION_PROBE_INIT }),
    ...(policy.adsByRoute ? [context.route(() => true, watch.ads.handler)] : []),
  ]);
  const page = await context.newPage();
  watch.page = page;
  await emulateLocale(context, page, ua, ls, req.mobile);
  failOnPageLoss(page, job, deps);
  page.on('response', watch.onResponse);
  page.setDefaultTimeout(Math.max(1, job.remaining()) + GRACE_MS);
  return { context, page, watch, deviceScale: req.mobile ? MOBILE_DEVICE.deviceScaleFactor : 1 };
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

/** An explicit Accept-Language header wins (navigator.languages follow it); else the location's goes out. */
function applyLanguages(ls: LocaleSettings, extra: Record<string, string>): void {
  const explicitLang = Object.entries(extra).find(([k]) => k.toLowerCase() === 'accept-language')?.[1];
  if (explicitLang) ls.languages = explicitLang.split(',').map((l) => l.split(';')[0]!.trim()).filter(Boolean);
  else extra['Accept-Language'] = ls.acceptLanguage;
}

/**
 * The request policy: through the proxy when there is one to apply. The ad list must not block
 * the page itself, so a render of an ad host's own URL blocks ads with a route instead.
 */
async function requestPolicy(req: RenderRequest, url: URL, deps: RenderDeps): Promise<{ proxy?: PolicyProxy; server?: string; adsByRoute: boolean }> {
  const targetIsAdHost = isAdHost(url.hostname);
  const adsByProxy = req.blockAds && !targetIsAdHost;
  const adsByRoute = req.blockAds && targetIsAdHost;
  if (req.allowPrivateNetwork && !adsByProxy) return { adsByRoute };
  const proxy = await deps.proxy({ ssrf: !req.allowPrivateNetwork, blockAds: adsByProxy });
  return { proxy, server: await proxy.start(), adsByRoute };
}

function contextOptions(req: RenderRequest, ua: string, ls: LocaleSettings, extra: Record<string, string>, proxyServer: string | undefined): BrowserContextOptions {
  return {
    userAgent: ua,
    viewport: req.mobile ? { ...MOBILE_DEVICE.viewport } : { ...DESKTOP_VIEWPORT },
    ...(req.mobile
      ? { screen: { ...MOBILE_DEVICE.screen }, deviceScaleFactor: MOBILE_DEVICE.deviceScaleFactor, isMobile: true, hasTouch: true }
      : {}),
    // No `locale` here: Playwright would send it as the whole Accept-Language header, losing
    // the secondary languages. The header comes from extraHTTPHeaders, navigator.language(s)
    // and Intl from the per-page override (emulateLocale).
    timezoneId: ls.timezoneId,
    extraHTTPHeaders: extra,
    ignoreHTTPSErrors: req.skipTlsVerification,
    serviceWorkers: 'block',
    acceptDownloads: false,
    ...(proxyServer !== undefined ? { proxy: contextProxy(proxyServer) } : {}),
    ...(req.storageState ? { storageState: req.storageState as BrowserContextOptions['storageState'] } : {}),
  };
}

/** newContext, bounded: a browser that does not answer in time is hung (the pool kills it). */
async function createContext(job: RenderJob, deps: RenderDeps, options: BrowserContextOptions): Promise<BrowserContext> {
  const creating = deps.browser.newContext(options);
  // If the render is abandoned while the context is being created, close it when it arrives.
  creating.then((c) => (job.done ? c.close().catch(() => {}) : undefined), () => {});
  const context = await bounded(creating, deps.contextTimeoutMs, deps.onHung);
  job.context = context;
  if (job.done) throw job.failure ?? new Error('render abandoned');
  return context;
}

/**
 * navigator.language(s) follow the UA override's language list, Intl the locale override; plain
 * US needs neither. The session stays attached: DevTools overrides end with the session that set them.
 */
async function emulateLocale(context: BrowserContext, page: Page, ua: string, ls: LocaleSettings, mobile: boolean): Promise<void> {
  if (ls.locale === 'en-US' && ls.languages.join(',') === 'en-US,en') return;
  const cdp = await context.newCDPSession(page);
  const major = /Chrome\/(\d+)/.exec(ua)?.[1];
  await Promise.all([
    cdp.send('Emulation.setUserAgentOverride', {
      userAgent: ua,
      acceptLanguage: ls.languages.join(','),
      ...(major ? { userAgentMetadata: uaMetadata(mobile, major) } : {}),
    }),
    // ICU may not know the locale (a made-up tag): keep the default then.
    cdp.send('Emulation.setLocaleOverride', { locale: ls.locale }).catch(() => {}),
  ]);
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

/** A renderer crash fails only this render; so does a page that closes itself. */
function failOnPageLoss(page: Page, job: RenderJob, deps: RenderDeps): void {
  page.on('crash', () => job.fail(browserCrashedError('the page renderer crashed')));
  page.on('close', () => {
    if (job.done) return;
    // Either the browser died (the pool reports that) or the page closed itself.
    setTimeout(() => {
      if (!deps.browserDead()) {
        job.fail(new WdsError('BAD_GATEWAY', { code: BrowserCodes.PAGE_CLOSED, retryable: false, message: 'The page closed itself during the render' }));
      }
    }, 200);
  });
}
