/**
 * What one render's page does on the network, as far as the render's verdict needs it: requests
 * in flight (for the settle), the main frame's latest navigation request and response, and the
 * requests the policy proxy or the ad route refused. Refusals are counted (`result.blocked`); a
 * refused main-frame navigation fails the render (`checkMainFrame`, `navigationFailure`).
 */
import { errors as pwErrors, type BrowserContext, type Page, type Request, type Response } from 'playwright-core';
import { toWdsError, type WdsError } from '@wds/errors';
import { blockError, navigationError, urlNotAllowedError } from './errors';
import { AdBlocker, NetActivity } from './network';
import type { Block, PolicyProxy } from './proxy';

export class PageWatch {
  readonly activity = new NetActivity();
  /** The route used when the target is itself an ad host (the proxy would refuse the page). */
  readonly ads = new AdBlocker((r) => this.isMainFrameNav(r));
  /** The render's page, once created; other pages (popups) are closed. */
  page?: Page;
  /** The main frame's latest navigation response (redirects followed). */
  mainResponse: Response | null = null;
  /** Set when the proxy refused a main-frame navigation (a redirect hop or a later navigation). */
  private mainFrameBlock: Block | undefined;
  /** URL of the latest main-frame navigation request (redirect hops included). */
  private lastMainRequest: string;
  private blockedSsrf = 0;
  private blockedAdsByProxy = 0;
  /** Requests already counted: a refusal can show both as a 403 and as a failed request. */
  private readonly counted = new WeakSet<Request>();

  /** The first main-frame navigation `checkUrl` refused (threat protection): fails the render like a proxy refusal. */
  private refusal: WdsError | undefined;

  constructor(url: URL, private readonly proxy: PolicyProxy | undefined, private readonly checkUrl?: (url: URL) => void) {
    this.lastMainRequest = url.href;
  }

  /** Follows the context's requests; closes popups, which are not part of the render. */
  watchContext(context: BrowserContext): void {
    context.on('request', (r) => {
      this.activity.onStart(r);
      if (!this.isMainFrameNav(r)) return;
      this.lastMainRequest = r.url();
      // Every hop of a redirect chain is a request of its own here (a route would see only the first).
      if (this.checkUrl && !this.refusal) this.refusal = refusalOf(this.checkUrl, r.url());
    });
    context.on('requestfinished', this.activity.onEnd);
    context.on('requestfailed', (r) => {
      this.activity.onEnd(r);
      if (this.proxy) this.noteProxyBlock(r);
    });
    context.on('page', (pg) => {
      if (this.page !== undefined && pg !== this.page) pg.close().catch(() => {});
    });
  }

  /** Page 'response' listener: the proxy's 403 refusals, and the main frame's document. */
  readonly onResponse = (r: Response): void => {
    try {
      if (this.proxy && r.status() >= 400 && r.headers()['x-wds-blocked']) this.noteProxyBlock(r.request());
      if (r.request().isNavigationRequest() && r.frame() === this.page?.mainFrame()) this.mainResponse = r;
    } catch {
      // Service-worker responses have no frame.
    }
  };

  /** Requests refused by the ad list (route or proxy) and by the SSRF guard. */
  blocked(): { ads: number; ssrf: number } {
    return { ads: this.ads.blocked + this.blockedAdsByProxy, ssrf: this.blockedSsrf };
  }

  /**
   * The error for a failed `goto`: the policy's refusal if that is what it was, else the mapped
   * navigation error. Undefined for a timeout waiting for `load` (the caller goes on without it).
   */
  navigationFailure(e: unknown, url: URL): WdsError | undefined {
    if (this.refusal) return this.refusal;
    if (this.mainFrameBlock) return blockError(this.mainFrameBlock);
    const timedOut = e instanceof pwErrors.TimeoutError;
    const b = this.proxyBlockFor(this.lastMainRequest);
    if (b && !timedOut) return blockError(b);
    if (!timedOut) return navigationError(e, url);
    return undefined;
  }

  /**
   * Forgets a refused main-frame navigation, before a live page navigates again (interact): a
   * render fails on the first one, a session goes on after it.
   */
  resetMainFrameBlock(): void {
    this.mainFrameBlock = undefined;
    this.refusal = undefined;
  }

  /** The main frame must show an http(s) (or about:) document that the SSRF proxy and `checkUrl` let through. */
  checkMainFrame(): void {
    if (this.refusal) throw this.refusal;
    if (this.mainFrameBlock) throw blockError(this.mainFrameBlock);
    if (!this.page) return;
    const current = this.page.url();
    const scheme = current.slice(0, current.indexOf(':') + 1).toLowerCase();
    if (scheme !== 'http:' && scheme !== 'https:' && scheme !== 'about:') {
      if (scheme === 'chrome-error:') {
        // A later navigation failed; if the proxy refused it, say so.
        const b = this.proxyBlockFor(this.lastMainRequest);
        if (b) throw blockError(b);
        return;
      }
      throw urlNotAllowedError(current, `navigation to ${scheme} URLs is not allowed`);
    }
  }

  private isMainFrameNav(r: Request): boolean {
    try {
      return this.page !== undefined && r.isNavigationRequest() && r.frame() === this.page.mainFrame();
    } catch {
      return false;
    }
  }

  /** The proxy's refusal behind a failed or 403'd request, if that is what it was. */
  private proxyBlockFor(requestUrl: string): Block | undefined {
    if (!this.proxy) return undefined;
    try {
      return this.proxy.lastBlock(new URL(requestUrl).hostname);
    } catch {
      return undefined;
    }
  }

  /** Counts a request the proxy refused (403 or failed tunnel); a main-frame one fails the render. */
  private noteProxyBlock(r: Request): void {
    if (this.counted.has(r)) return;
    const b = this.proxyBlockFor(r.url());
    if (!b) return;
    this.counted.add(r);
    if (b.reason === 'ads') this.blockedAdsByProxy++;
    else if (b.reason !== 'connect') this.blockedSsrf++;
    if (this.isMainFrameNav(r)) this.mainFrameBlock ??= b;
  }
}

/** What `checkUrl` threw for a URL (a WdsError such as 403 unsafe_domain_blocked), or undefined when it passed. */
function refusalOf(checkUrl: (url: URL) => void, href: string): WdsError | undefined {
  try {
    checkUrl(new URL(href));
    return undefined;
  } catch (e) {
    return toWdsError(e);
  }
}
