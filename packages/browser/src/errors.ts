/** WdsErrors raised by the browser engine, named once. */
import { WdsError, ScrapeCodes } from '@wds/errors';
import { ssrfBlockedError } from '@wds/fetch';
import type { Block } from './proxy';

export const BrowserCodes = {
  CRASHED: 'BROWSER_CRASHED',
  NOT_FOUND: 'BROWSER_NOT_FOUND',
  LAUNCH_FAILED: 'BROWSER_LAUNCH_FAILED',
  POOL_CLOSED: 'BROWSER_POOL_CLOSED',
  ACTION_ERROR: 'SCRAPE_ACTION_ERROR',
  AD_BLOCKED: 'SCRAPE_AD_BLOCKED',
  PAGE_CLOSED: 'SCRAPE_PAGE_CLOSED',
  DOWNLOAD: 'SCRAPE_BROWSER_DOWNLOAD',
  NAVIGATION_FAILED: 'SCRAPE_NAVIGATION_FAILED',
} as const;

export function renderTimeoutError(timeoutMs: number, phase: string): WdsError {
  return new WdsError('REQUEST_TIMEOUT', {
    code: ScrapeCodes.TIMEOUT,
    retryable: false,
    message: `Request Timeout: the page did not finish rendering within ${timeoutMs} ms (during ${phase})`,
    details: { timeoutMs, phase },
  });
}

export function browserCrashedError(what: string, cause?: unknown): WdsError {
  return new WdsError('BAD_GATEWAY', {
    code: BrowserCodes.CRASHED,
    retryable: true,
    message: `Browser crashed: ${what}`,
    cause,
  });
}

export function poolClosedError(): WdsError {
  return new WdsError('SERVICE_UNAVAILABLE', { code: BrowserCodes.POOL_CLOSED, retryable: true, message: 'The browser pool is closed' });
}

export function actionError(index: number, type: string, detail: string, cause?: unknown): WdsError {
  return new WdsError('BAD_REQUEST', {
    code: BrowserCodes.ACTION_ERROR,
    message: `Action ${index} (${type}) failed: ${detail}`,
    details: { index, type },
    cause,
  });
}

export function urlNotAllowedError(url: string, why: string): WdsError {
  return new WdsError('URL_BLOCKED', {
    code: ScrapeCodes.SSRF_BLOCKED,
    retryable: false,
    message: `URL blocked: ${why} (${url.slice(0, 200)})`,
    details: { url: url.slice(0, 2000) },
  });
}

export function dnsError(host: string, cause?: unknown): WdsError {
  return new WdsError('BAD_GATEWAY', {
    code: ScrapeCodes.DNS_RESOLUTION_ERROR,
    retryable: false,
    message: `DNS resolution failed for ${host}`,
    details: { host },
    cause,
  });
}

/** A request the policy refused (or could not connect), as the render's error: the preflight's and the proxy's verdicts. */
export function blockError(b: Pick<Block, 'reason' | 'host' | 'ip'>): WdsError {
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

/** What a caller's abort turns into (the signal's reason, like fetch.ts). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** A Playwright error message without the `page.goto: ` prefix, the call log and the stack. */
export function playwrightMessage(e: unknown): string {
  let m = e instanceof Error ? e.message : String(e);
  m = m.split(/\n\s*Call log:/)[0]!;
  m = m.replace(/^(?:[a-zA-Z]+\.)?[a-zA-Z]+: /, '');
  const stack = m.search(/\n\s+at /);
  if (stack !== -1) m = m.slice(0, stack);
  return m.replace(/\s+/g, ' ').trim();
}

/** "Target page, context or browser has been closed" and friends. */
export function isClosedError(e: unknown): boolean {
  const m = e instanceof Error ? e.message : String(e);
  return /Target (page, context or browser )?(has been )?closed|Browser has been closed|browser has disconnected|Target crashed|Page crashed|Connection closed/i.test(m);
}

/** Maps a failed main-frame navigation (`net::ERR_*`) to a WdsError. */
export function navigationError(e: unknown, url: URL): WdsError {
  const msg = playwrightMessage(e);
  const host = url.hostname;
  const net = /net::(ERR_[A-Z0-9_]+)/.exec(msg)?.[1];
  if (/Download is starting/i.test(msg)) {
    return new WdsError('UNSUPPORTED_MEDIA_TYPE', {
      code: BrowserCodes.DOWNLOAD,
      retryable: false,
      message: 'The URL returned a file download, not a page; fetch it with the HTTP engine',
      cause: e,
    });
  }
  if (net === 'ERR_NAME_NOT_RESOLVED' || net === 'ERR_NAME_RESOLUTION_FAILED') return dnsError(host, e);
  if (net && (net.startsWith('ERR_CERT_') || net.startsWith('ERR_SSL_') || net === 'ERR_BAD_SSL_CLIENT_AUTH_CERT')) {
    return new WdsError('BAD_GATEWAY', {
      code: ScrapeCodes.TLS_ERROR,
      retryable: false,
      message: `TLS error while connecting to ${host}: ${net}`,
      details: { host, cause: net },
      cause: e,
    });
  }
  if (net === 'ERR_TOO_MANY_REDIRECTS') {
    return new WdsError('BAD_GATEWAY', { code: ScrapeCodes.TOO_MANY_REDIRECTS, retryable: false, message: `Too many redirects for ${host}`, cause: e });
  }
  if (net && /^ERR_(CONNECTION_|ADDRESS_|EMPTY_RESPONSE|NETWORK_|INTERNET_DISCONNECTED|TIMED_OUT|SOCKET_|TUNNEL_CONNECTION_FAILED)/.test(net)) {
    return new WdsError('BAD_GATEWAY', {
      code: ScrapeCodes.CONNECTION_FAILED,
      retryable: true,
      message: `Connection to ${host} failed (${net})`,
      details: { host, cause: net },
      cause: e,
    });
  }
  return new WdsError('BAD_GATEWAY', {
    code: BrowserCodes.NAVIGATION_FAILED,
    retryable: false,
    message: `Navigation to ${host} failed: ${msg.slice(0, 300)}`,
    details: { host, cause: net },
    cause: e,
  });
}
