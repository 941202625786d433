/**
 * Per-render request policy (ad blocking, SSRF guard) and network-activity tracking.
 *
 * The guard runs as a context-wide route handler, so it sees every request Chromium lets
 * Playwright intercept: top-level and frame navigations (each redirect hop is a new request),
 * subresources, fetch/XHR, EventSource, worker scripts and their requests. WebSockets do not go
 * through routes; the render installs a `routeWebSocket` handler that applies the same check.
 */
import { lookup } from 'node:dns/promises';
import type { Request, Route } from 'playwright-core';
import { ipLiteral } from '../ssrf';
import { isAdHost } from './blocklist';

export type Resolve = (host: string) => Promise<string[]>;

export const defaultResolve: Resolve = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export type Verdict =
  | { ok: true }
  | { ok: false; reason: 'scheme' | 'ads' | 'dns'; host: string }
  | { ok: false; reason: 'ssrf'; host: string; ip: string };

export interface GuardOptions {
  blockAds: boolean;
  allowPrivateNetwork: boolean;
  resolve: Resolve;
  isForbidden: (ip: string) => boolean;
}

export class RequestGuard {
  blockedAds = 0;
  blockedSsrf = 0;
  /** Set when a main-frame navigation was refused by the SSRF guard or for its scheme. */
  mainFrameBlock: Extract<Verdict, { ok: false }> | undefined;
  private readonly dns = new Map<string, Promise<string[]>>();

  constructor(
    private readonly opts: GuardOptions,
    private readonly isMainFrameNavigation: (req: Request) => boolean,
  ) {}

  /** Whether the guard needs a route handler at all (routing costs one IPC round trip per request). */
  get active(): boolean {
    return this.opts.blockAds || !this.opts.allowPrivateNetwork;
  }

  /** Addresses of a host, looked up once per render. */
  private addresses(host: string): Promise<string[]> {
    let p = this.dns.get(host);
    if (!p) {
      p = this.opts.resolve(host);
      this.dns.set(host, p);
    }
    return p;
  }

  /** SSRF verdict for a URL (scheme + resolved addresses); no ad rules. */
  async checkAddress(url: URL): Promise<Verdict> {
    const host = url.hostname;
    if (url.protocol !== 'http:' && url.protocol !== 'https:' && url.protocol !== 'ws:' && url.protocol !== 'wss:') {
      return { ok: false, reason: 'scheme', host };
    }
    if (this.opts.allowPrivateNetwork) return { ok: true };
    const literal = ipLiteral(host);
    if (literal !== null) {
      return this.opts.isForbidden(literal) ? { ok: false, reason: 'ssrf', host, ip: literal } : { ok: true };
    }
    let addrs: string[];
    try {
      addrs = await this.addresses(host);
    } catch {
      return { ok: false, reason: 'dns', host };
    }
    if (addrs.length === 0) return { ok: false, reason: 'dns', host };
    const bad = addrs.find((a) => this.opts.isForbidden(a));
    return bad === undefined ? { ok: true } : { ok: false, reason: 'ssrf', host, ip: bad };
  }

  async verdict(request: Request): Promise<Verdict> {
    let url: URL;
    try {
      url = new URL(request.url());
    } catch {
      return { ok: false, reason: 'scheme', host: '' };
    }
    // data:/blob: never reach the network; Chromium does not route them, but be explicit.
    if (url.protocol === 'data:' || url.protocol === 'blob:') return { ok: true };
    const mainNav = this.isMainFrameNavigation(request);
    if (this.opts.blockAds && !mainNav && isAdHost(url.hostname)) return { ok: false, reason: 'ads', host: url.hostname };
    const v = await this.checkAddress(url);
    if (!v.ok && mainNav) this.mainFrameBlock ??= v;
    return v;
  }

  readonly handler = async (route: Route, request: Request): Promise<void> => {
    try {
      const v = await this.verdict(request);
      if (v.ok) return await route.continue();
      if (v.reason === 'ads') this.blockedAds++;
      else if (v.reason === 'ssrf') this.blockedSsrf++;
      await route.abort(v.reason === 'dns' ? 'namenotresolved' : 'blockedbyclient');
    } catch {
      // The context closed under us (render finished, timed out or crashed): nothing to do.
    }
  };
}

/** Requests in flight longer than this are treated as background (long polling, streaming). */
const LONG_REQUEST_MS = 2000;

/** Tracks requests in flight and the time of the last network event, for the settle step. */
export class NetActivity {
  private readonly inflight = new Map<Request, number>();
  private last = performance.now();

  readonly onStart = (r: Request): void => {
    const now = performance.now();
    this.inflight.set(r, now);
    this.last = now;
  };

  readonly onEnd = (r: Request): void => {
    this.inflight.delete(r);
    this.last = performance.now();
  };

  /** How long the network has been quiet (0 while a recent request is in flight). */
  quietFor(now = performance.now()): number {
    for (const started of this.inflight.values()) if (now - started < LONG_REQUEST_MS) return 0;
    return now - this.last;
  }
}
