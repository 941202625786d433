import { isIP } from 'node:net';
/**
 * HTTP fetch stage: one page, with manual redirects, decoding, a body cap, a whole-request
 * time budget and the SSRF address policy.
 *
 * Redirects are followed here rather than by undici so every hop is recorded in
 * `redirectChain` and re-checked (scheme, literal IP, and — through the Agent's connector —
 * the resolved address). See net/connector.ts for where the post-DNS check happens.
 */
import { request, type Agent, type Dispatcher } from 'undici';
import { WdsError, ScrapeCodes } from '@wds/errors';
import type { FetchRequest, FetchedPage } from './types';
import { ipLiteral, isForbiddenAddress, ssrfBlockedError } from './ssrf';
import { createAgent, systemResolver, type AddressPolicy, type Resolver } from './net/connector';
import { readBody } from './net/body';
import { mapNetworkError, timeoutError } from './net/errors';
import { originGate, type OriginGate, type OriginTicket } from './politeness/gate';

export const DEFAULT_USER_AGENT = 'Mozilla/5.0 (compatible; WDS/1.0; +https://github.com/)';
const DEFAULT_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const ACCEPT_ENCODING = 'gzip, deflate, br';
const DEFAULT_MAX_REDIRECTS = 10;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Bodies of redirect responses are drained (for keep-alive) only up to this size. */
const REDIRECT_DRAIN_LIMIT = 64 * 1024;
/** setTimeout fires immediately for delays above 2^31-1 ms, so larger budgets mean "none". */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface FetcherOptions {
  /** Address policy applied when `allowPrivateNetwork` is false. Default: isForbiddenAddress. */
  isForbidden?: AddressPolicy;
  /** DNS resolution for the connector. Default: dns.lookup (getaddrinfo, honours /etc/hosts). */
  resolve?: Resolver;
  /** The politeness gate every hop takes its slot from. Default: the process's (configureOriginGate), if any. */
  gate?: () => OriginGate | null;
}

export interface Fetcher {
  (req: FetchRequest): Promise<FetchedPage>;
  /** Closes the pooled connections (graceful shutdown, tests). */
  close(): Promise<void>;
}

/**
 * Builds a fetcher with its own connection pools. `fetchPage` uses one created at module load;
 * the factory exists so tests (and unusual deployments) can swap the address policy or DNS.
 */
export function createFetcher(opts: FetcherOptions = {}): Fetcher {
  const policy = opts.isForbidden ?? isForbiddenAddress;
  // Created lazily, then kept: pools and TLS sessions are reused across the whole process.
  const agents = new Map<string, Agent>();
  const agentFor = (skipTls: boolean, allowPrivate: boolean): Agent => {
    const key = `${skipTls ? 'insecure' : 'verify'}/${allowPrivate ? 'any' : 'public'}`;
    let agent = agents.get(key);
    if (!agent) {
      agent = createAgent({
        rejectUnauthorized: !skipTls,
        isForbidden: allowPrivate ? null : policy,
        resolve: opts.resolve,
      });
      agents.set(key, agent);
    }
    return agent;
  };

  const fetcher = (req: FetchRequest): Promise<FetchedPage> => {
    const allowPrivate = req.allowPrivateNetwork === true;
    return fetchWithBudget(req, agentFor(req.skipTlsVerification === true, allowPrivate), allowPrivate ? null : policy, (opts.gate ?? originGate)());
  };
  fetcher.close = async () => {
    const all = [...agents.values()];
    agents.clear();
    await Promise.all(all.map((a) => a.close()));
  };
  return fetcher;
}

let defaultFetcher = createFetcher();

/**
 * Static name → address overrides for the process's fetches (like curl's --resolve): for
 * split-horizon networks and test sites. `*.example.test` matches every subdomain. The SSRF
 * policy still judges the overridden address.
 */
export function configureHostOverrides(overrides: Record<string, string>): void {
  if (!Object.keys(overrides).length) return;
  const previous = defaultFetcher;
  hostResolver = resolverWithOverrides(overrides);
  defaultFetcher = createFetcher({ resolve: hostResolver });
  void previous.close();
}

/** DNS with static overrides first (`*.example.test` matches every subdomain), then the system's. */
export function resolverWithOverrides(overrides: Record<string, string>): Resolver {
  const entries = Object.entries(overrides);
  const match = (host: string) => {
    const h = host.toLowerCase();
    for (const [name, ip] of entries) {
      if (name === h || (name.startsWith('*.') && h.endsWith(name.slice(1)))) return ip;
    }
    return null;
  };
  return async (hostname, opts) => {
    const ip = match(hostname);
    return ip ? [{ address: ip, family: ip.includes(':') ? 6 : 4 }] : systemResolver(hostname, opts);
  };
}

let hostResolver: Resolver = systemResolver;

/** The DNS this process's fetches use (with WDS_HOST_OVERRIDES): for other guarded connections, e.g. the media proxy. */
export function processResolver(): Resolver {
  return hostResolver;
}

/** Parses WDS_HOST_OVERRIDES: `name=ip,*.name=ip`. */
export function parseHostOverrides(spec: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (spec ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const [name, ip] = part.split('=').map((x) => x?.trim());
    if (!name || !ip || !isIP(ip)) throw new Error(`entry "${part}" must look like name=ip`);
    out[name.toLowerCase()] = ip;
  }
  return out;
}

/** Fetches one page. 4xx/5xx are returned as pages; only transport-level failures throw. */
export function fetchPage(req: FetchRequest): Promise<FetchedPage> {
  return defaultFetcher(req);
}

function parseHttpUrl(raw: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WdsError('INVALID_URL', { message: `Invalid URL: ${what} is not a valid URL`, details: { url: raw } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WdsError('INVALID_URL', {
      message: `Invalid URL: unsupported protocol "${url.protocol}" in ${what}; only http and https can be fetched`,
      details: { url: raw },
    });
  }
  return url;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Applies `timeoutMs` to the whole exchange (all hops and the body) and wires `req.signal`. */
async function fetchWithBudget(
  req: FetchRequest,
  agent: Agent,
  isForbidden: AddressPolicy | null,
  gate: OriginGate | null,
): Promise<FetchedPage> {
  const url = parseHttpUrl(req.url, 'the requested URL');
  if (req.signal?.aborted) throw abortReason(req.signal);

  const controller = new AbortController();
  let timedOut = false;
  const budget = req.timeoutMs;
  const timer =
    Number.isFinite(budget) && budget > 0 && budget <= MAX_TIMER_MS
      ? setTimeout(() => {
          timedOut = true;
          controller.abort(timeoutError(budget));
        }, budget)
      : undefined;
  const onCallerAbort = () => controller.abort(abortReason(req.signal!));
  req.signal?.addEventListener('abort', onCallerAbort, { once: true });

  const deadlineMs = timer ? Date.now() + budget : undefined;
  const hop: HopGate | null = gate ? { gate, hints: req.politeness, deadlineMs, waitedMs: 0, waiting: null } : null;
  try {
    return await followRedirects(req, url, agent, isForbidden, controller.signal, hop);
  } catch (err) {
    // Whatever undici threw on abort (RequestAbortedError, AbortError, a premature close...),
    // the cause is known here, so report that instead.
    if (timedOut && hop?.waiting) throw politenessTimeoutError(hop.waiting, budget);
    if (timedOut) throw timeoutError(budget);
    if (req.signal?.aborted) throw abortReason(req.signal);
    throw err;
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', onCallerAbort);
  }
}

/** Defaults, then the caller's headers replacing any default with the same name (any case). */
function buildHeaders(req: FetchRequest): Record<string, string> {
  const headers: Record<string, string> = {
    'User-Agent': req.userAgent || DEFAULT_USER_AGENT,
    Accept: DEFAULT_ACCEPT,
    'Accept-Encoding': ACCEPT_ENCODING,
  };
  for (const [name, value] of Object.entries(req.headers ?? {})) {
    const lower = name.toLowerCase();
    for (const existing of Object.keys(headers)) {
      if (existing.toLowerCase() === lower) delete headers[existing];
    }
    headers[name] = value;
  }
  return headers;
}

function flattenHeaders(raw: Dispatcher.ResponseData['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.has(k.toLowerCase())));
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A fetch's side of the politeness gate: each hop takes a slot of its own origin, held until its
 * body is read. `waiting` is the error to report if the budget runs out while a hop waits.
 */
interface HopGate {
  gate: OriginGate;
  hints: FetchRequest['politeness'];
  deadlineMs: number | undefined;
  waitedMs: number;
  /** The origin a hop is waiting for, while it waits. */
  waiting: string | null;
}

async function enterHop(hop: HopGate, url: URL, signal: AbortSignal): Promise<OriginTicket> {
  hop.waiting = url.origin;
  const t = await hop.gate.enter(url, { hints: hop.hints, deadlineMs: hop.deadlineMs, signal });
  hop.waiting = null;
  hop.waitedMs += t.waitedMs;
  return t;
}

function politenessTimeoutError(origin: string, timeoutMs: number): WdsError {
  return new WdsError('REQUEST_TIMEOUT', {
    code: ScrapeCodes.TIMEOUT,
    retryable: false,
    message: `Request Timeout: the request to ${origin} was still waiting for the site's politeness budget (its in-flight cap, interval or backoff) when its ${timeoutMs} ms timeout ran out`,
    details: { origin, timeoutMs },
  });
}

/** GET, following redirects by hand so that every hop goes through the address policy and the credential rule. */
async function followRedirects(
  req: FetchRequest,
  startUrl: URL,
  agent: Agent,
  isForbidden: AddressPolicy | null,
  signal: AbortSignal,
  hop: HopGate | null,
): Promise<FetchedPage> {
  let headers = buildHeaders(req);
  const maxRedirects = req.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const chain: string[] = [];
  let url = startUrl;

  for (let redirects = 0; ; redirects++) {
    chain.push(url.href);
    req.checkUrl?.(url);
    const ticket = hop ? await enterHop(hop, url, signal) : null;
    let res: Dispatcher.ResponseData;
    try {
      res = await requestOnce(url, agent, headers, isForbidden, signal);
    } catch (err) {
      await ticket?.end({ error: err });
      throw err;
    }
    const location = first(res.headers['location']);
    if (!REDIRECT_STATUSES.has(res.statusCode) || !location) {
      let page: FetchedPage;
      try {
        page = await readPage(req, url, chain, res, signal);
      } catch (err) {
        await ticket?.end({ error: err });
        throw err;
      }
      await ticket?.end({ status: page.statusCode, headers: page.headers });
      if (hop?.waitedMs) page.politenessWaitMs = hop.waitedMs;
      return page;
    }

    // Drain so the connection can be reused; a failure only costs that connection.
    await res.body.dump({ limit: REDIRECT_DRAIN_LIMIT, signal }).catch(() => {});
    await ticket?.end({ status: res.statusCode, headers: flattenHeaders(res.headers) });
    if (redirects >= maxRedirects) throw tooManyRedirectsError(maxRedirects, startUrl, chain);
    const nextUrl = redirectTarget(location, url, chain);
    // Like browsers: the caller's credentials were meant for the origin they asked for.
    if (nextUrl.origin !== url.origin) headers = withoutCredentials(headers);
    url = nextUrl;
  }
}

/** One GET of one hop. */
async function requestOnce(
  url: URL,
  agent: Agent,
  headers: Record<string, string>,
  isForbidden: AddressPolicy | null,
  signal: AbortSignal,
): Promise<Dispatcher.ResponseData> {
  // Literal IPs never reach the connector's DNS lookup, so refuse them before connecting.
  // (The connector checks them again; this just fails fast with the URL's own host.)
  const literal = ipLiteral(url.hostname);
  if (isForbidden && literal !== null && isForbidden(literal)) throw ssrfBlockedError(url.hostname, literal);
  try {
    // Always GET: this also covers the 301/302/303 "POST becomes GET" rule.
    return await request(url, { dispatcher: agent, method: 'GET', headers, signal });
  } catch (err) {
    throw mapNetworkError(err, url);
  }
}

function tooManyRedirectsError(maxRedirects: number, startUrl: URL, chain: string[]): WdsError {
  return new WdsError('BAD_GATEWAY', {
    code: ScrapeCodes.TOO_MANY_REDIRECTS,
    retryable: false,
    message: `Too many redirects: more than ${maxRedirects} starting from ${startUrl.href}`,
    details: { maxRedirects, redirectChain: chain },
  });
}

/** Where a redirect goes: relative Locations resolve against the current URL; the target must be http(s). */
function redirectTarget(location: string, url: URL, chain: string[]): URL {
  let next: URL;
  try {
    next = new URL(location, url);
  } catch {
    throw new WdsError('BAD_GATEWAY', {
      retryable: false,
      message: `Invalid redirect: ${url.href} redirected to an unparseable Location "${location}"`,
      details: { redirectChain: chain, location },
    });
  }
  return parseHttpUrl(next.href, `the redirect from ${url.href}`);
}

/** The final response: its body read (decoded, capped at maxBodyBytes) into the page. */
async function readPage(req: FetchRequest, url: URL, chain: string[], res: Dispatcher.ResponseData, signal: AbortSignal): Promise<FetchedPage> {
  const maxBytes = Number.isFinite(req.maxBodyBytes) && req.maxBodyBytes >= 0 ? req.maxBodyBytes : Infinity;
  const resHeaders = flattenHeaders(res.headers);
  let body: Buffer;
  try {
    body = await readBody(res.body, {
      contentEncoding: resHeaders['content-encoding'],
      contentLength: resHeaders['content-length'],
      maxBytes,
      signal,
      file: req.saveTo,
    });
  } catch (err) {
    throw mapNetworkError(err, url);
  }
  return {
    requestedUrl: req.url,
    finalUrl: url.href,
    redirectChain: chain,
    statusCode: res.statusCode,
    headers: resHeaders,
    contentType: (resHeaders['content-type'] ?? '').split(';')[0].trim().toLowerCase(),
    body,
  };
}
