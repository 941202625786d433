/**
 * undici Agents whose connector enforces the SSRF address policy at connect time.
 *
 * Why at connect time: checking the hostname (or resolving it ourselves) before calling undici
 * leaves a window in which DNS can answer differently for the real connection (DNS rebinding),
 * and it says nothing about connections undici opens later for redirects. Instead, the vetting
 * happens in the `lookup` function that Node's net/tls `connect` calls, so the addresses that
 * are checked are exactly the addresses the socket connects to. IP literals skip `lookup`
 * inside Node, so they are checked in a thin wrapper around undici's connector.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { ipLiteral, ssrfBlockedError } from '../ssrf';

/** Returns true when the address must not be connected to. */
export type AddressPolicy = (ip: string) => boolean;

/** DNS resolution used by the connector; injectable so tests can map names to chosen IPs. */
export type Resolver = (
  hostname: string,
  opts: { family: number; hints: number },
) => Promise<dns.LookupAddress[]>;

export const systemResolver: Resolver = (hostname, { family, hints }) =>
  dns.promises.lookup(hostname, { all: true, family, hints });

function notFound(hostname: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
  err.code = 'ENOTFOUND';
  err.syscall = 'getaddrinfo';
  (err as { hostname?: string }).hostname = hostname;
  return err;
}

/**
 * A `lookup` for net/tls.connect that resolves all addresses and refuses the connection when
 * ANY of them is forbidden. Refusing (instead of filtering out the bad ones) is deliberate:
 * Node's happy-eyeballs may pick any returned address, and a name that mixes public and
 * private records is either misconfigured or a rebinding attempt.
 */
function vettedLookup(resolve: Resolver, isForbidden: AddressPolicy | null): LookupFunction {
  return (hostname, options, callback) => {
    const family = typeof options.family === 'number' ? options.family : 0;
    resolve(hostname, { family, hints: options.hints ?? 0 }).then(
      (addresses) => {
        if (addresses.length === 0) return callback(notFound(hostname), '', 0);
        const bad = isForbidden ? addresses.find((a) => isForbidden(a.address)) : undefined;
        if (bad) return callback(ssrfBlockedError(hostname, bad.address), '', 0);
        // Node asks for `all` when autoSelectFamily (happy eyeballs) is on, a single address otherwise.
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

export interface ConnectorOptions {
  rejectUnauthorized: boolean;
  /** null = no address restrictions (allowPrivateNetwork). */
  isForbidden: AddressPolicy | null;
  /** Omit to use Node's own lookup when there is nothing to vet. */
  resolve?: Resolver;
}

export function createConnector(opts: ConnectorOptions): buildConnector.connector {
  const needLookup = opts.isForbidden !== null || opts.resolve !== undefined;
  const base = buildConnector({
    rejectUnauthorized: opts.rejectUnauthorized,
    ...(needLookup ? { lookup: vettedLookup(opts.resolve ?? systemResolver, opts.isForbidden) } : {}),
  });
  const isForbidden = opts.isForbidden;
  if (!isForbidden) return base;
  return (connectOpts, callback) => {
    const ip = ipLiteral(connectOpts.hostname);
    if (ip !== null && isForbidden(ip)) {
      // Asynchronously, like a real connect failure: undici's client is not re-entrant here.
      const err = ssrfBlockedError(connectOpts.hostname, ip);
      process.nextTick(() => callback(err, null));
      return;
    }
    base(connectOpts, callback);
  };
}

/**
 * One Agent per policy combination, kept for the life of the process so keep-alive connections
 * and TLS sessions are reused across the thousands of fetches of a crawl. Agents are never
 * shared between policies: a socket opened while private addresses were allowed must not be
 * reused by a request that forbids them.
 */
export function createAgent(opts: ConnectorOptions): Agent {
  return new Agent({ connect: createConnector(opts) });
}
