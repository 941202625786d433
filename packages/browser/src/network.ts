/**
 * Per-render request helpers: the SSRF verdict for one URL (used before a render starts), the
 * ad-blocking route handler, and network-activity tracking for the settle step. The SSRF guard
 * for the page's own traffic is the proxy in proxy.ts.
 */
import { lookup } from 'node:dns/promises';
import type { Request, Route } from 'playwright-core';
import { ipLiteral } from '@wds/fetch';
import { isAdHost } from './blocklist';

export type Resolve = (host: string) => Promise<string[]>;

export const defaultResolve: Resolve = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export type Verdict = { ok: true } | { ok: false; reason: 'dns'; host: string } | { ok: false; reason: 'ssrf'; host: string; ip: string };

/** SSRF verdict for a URL: every address of its host must be allowed. */
export async function checkAddress(url: URL, resolve: Resolve, isForbidden: (ip: string) => boolean): Promise<Verdict> {
  const host = url.hostname;
  const literal = ipLiteral(host);
  if (literal !== null) return isForbidden(literal) ? { ok: false, reason: 'ssrf', host, ip: literal } : { ok: true };
  let addrs: string[];
  try {
    addrs = await resolve(host);
  } catch {
    return { ok: false, reason: 'dns', host };
  }
  if (addrs.length === 0) return { ok: false, reason: 'dns', host };
  const bad = addrs.find((a) => isForbidden(a));
  return bad === undefined ? { ok: true } : { ok: false, reason: 'ssrf', host, ip: bad };
}

/**
 * Route handler aborting requests to ad/tracker hosts. Top-level navigations are never blocked
 * (scraping an ad network's own page is a deliberate request).
 */
export class AdBlocker {
  blocked = 0;

  constructor(private readonly isMainFrameNavigation: (req: Request) => boolean) {}

  readonly handler = async (route: Route, request: Request): Promise<void> => {
    try {
      let host = '';
      try {
        host = new URL(request.url()).hostname;
      } catch {
        // unparsable: let Chromium deal with it
      }
      if (host && isAdHost(host) && !this.isMainFrameNavigation(request)) {
        this.blocked++;
        await route.abort('blockedbyclient');
      } else {
        await route.continue();
      }
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
