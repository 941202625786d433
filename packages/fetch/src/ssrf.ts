/**
 * Address policy for outgoing scrapes (SSRF guard).
 *
 * The policy is applied to IP addresses, never to hostnames: a hostname only tells us what the
 * user typed, the address tells us where the socket will actually go. The fetch stage calls
 * `isForbiddenAddress` from inside the connector's DNS lookup (see net/connector.ts), so the
 * address that is checked is the address that is connected to.
 *
 * Ranges are hand-written CIDR checks rather than `net.BlockList` because we need to look
 * *inside* several IPv6 forms (IPv4-mapped, NAT64, 6to4, IPv4-compatible) and apply the IPv4
 * rules to the embedded address; BlockList only does that for IPv4-mapped addresses.
 */
import { isIP } from 'node:net';
import { WdsError, ScrapeCodes } from '@wds/errors';

/** [network as uint32, prefix length] */
type V4Cidr = readonly [number, number];

const V4_FORBIDDEN: readonly V4Cidr[] = [
  [v4('0.0.0.0'), 8], // "this network"; 0.0.0.0 connects to the local host on Linux
  [v4('10.0.0.0'), 8], // RFC 1918
  [v4('100.64.0.0'), 10], // CGNAT, often reaches provider-internal services
  [v4('127.0.0.0'), 8], // loopback
  [v4('169.254.0.0'), 16], // link-local, incl. 169.254.169.254 cloud metadata
  [v4('172.16.0.0'), 12], // RFC 1918
  [v4('192.0.0.0'), 24], // IETF protocol assignments (incl. 192.0.0.192 Oracle metadata)
  [v4('192.0.2.0'), 24], // TEST-NET-1
  [v4('192.168.0.0'), 16], // RFC 1918
  [v4('198.18.0.0'), 15], // benchmarking
  [v4('198.51.100.0'), 24], // TEST-NET-2
  [v4('203.0.113.0'), 24], // TEST-NET-3
  [v4('224.0.0.0'), 4], // multicast
  [v4('240.0.0.0'), 4], // reserved, includes 255.255.255.255 broadcast
];

/** Dotted quad → uint32. Only called on strings already validated by `isIP`. */
function v4(addr: string): number {
  const p = addr.split('.').map(Number);
  return ((p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3]) >>> 0;
}

function v4InCidr(ip: number, [net, bits]: V4Cidr): boolean {
  if (bits === 0) return true;
  const mask = (~0 << (32 - bits)) >>> 0;
  return ((ip & mask) >>> 0) === ((net & mask) >>> 0);
}

function isForbiddenV4(ip: number): boolean {
  return V4_FORBIDDEN.some((c) => v4InCidr(ip, c));
}

/**
 * IPv6 text → eight 16-bit groups, or null when malformed. Handles `::` compression, a trailing
 * dotted IPv4 part (`::ffff:127.0.0.1`) and a zone id (`fe80::1%eth0`).
 */
function parseIPv6(addr: string): number[] | null {
  let s = addr.toLowerCase();
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);

  // A trailing dotted quad stands for the last two groups; rewrite it as hex so only one
  // grammar has to be parsed below.
  const lastColon = s.lastIndexOf(':');
  const quad = s.slice(lastColon + 1);
  if (quad.includes('.')) {
    if (isIP(quad) !== 4) return null;
    const n = v4(quad);
    s = `${s.slice(0, lastColon + 1)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }

  const halves = s.split('::');
  if (halves.length > 2) return null;
  const toGroups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = toGroups(halves[0]);
  const rest = halves.length === 2 ? toGroups(halves[1]) : [];
  if (!head || !rest) return null;
  const explicit = head.length + rest.length;
  if (halves.length === 1) return explicit === 8 ? head : null;
  if (explicit > 7) return null;
  return [...head, ...new Array<number>(8 - explicit).fill(0), ...rest];
}

/** The IPv4 address held in groups 6–7, as uint32. */
function embeddedV4(g: number[], hiIdx = 6): number {
  return ((g[hiIdx] << 16) | g[hiIdx + 1]) >>> 0;
}

function isForbiddenV6(g: number[]): boolean {
  const first96Zero = g.slice(0, 6).every((x) => x === 0);
  if (first96Zero) {
    // :: and ::1 are unspecified/loopback; the rest of ::/96 is the deprecated
    // IPv4-compatible form, which some stacks still route to the embedded IPv4 address.
    if (g[6] === 0 && g[7] <= 1) return true;
    return isForbiddenV4(embeddedV4(g));
  }
  // ::ffff:0:0/96 IPv4-mapped: the kernel connects to the embedded IPv4 address.
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return isForbiddenV4(embeddedV4(g));
  // 64:ff9b::/96 well-known NAT64 prefix: the gateway connects to the embedded IPv4 address.
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) {
    return isForbiddenV4(embeddedV4(g));
  }
  // 64:ff9b:1::/48 local-use NAT64 (RFC 8215): translation targets are operator-internal.
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return true;
  // 2002::/16 6to4: groups 1–2 carry an IPv4 address that the relay will reach.
  if (g[0] === 0x2002) return isForbiddenV4(embeddedV4(g, 1));
  if (g[0] === 0x2001 && g[1] === 0x0db8) return true; // 2001:db8::/32 documentation
  if (g[0] === 0x0100 && g[1] === 0 && g[2] === 0 && g[3] === 0) return true; // 100::/64 discard-only
  if ((g[0] & 0xfe00) === 0xfc00) return true; // fc00::/7 ULA (incl. fd00:ec2::254 AWS metadata)
  if ((g[0] & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((g[0] & 0xffc0) === 0xfec0) return true; // fec0::/10 deprecated site-local, still routed internally
  if ((g[0] & 0xff00) === 0xff00) return true; // ff00::/8 multicast
  return false;
}

/**
 * True when connecting to `ip` could reach loopback, private, link-local, CGNAT, metadata,
 * multicast, documentation or reserved space. Anything that is not a valid IP literal is
 * treated as forbidden: this guard must fail closed.
 */
export function isForbiddenAddress(ip: string): boolean {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const noZone = bare.split('%')[0];
  const kind = isIP(noZone);
  if (kind === 4) return isForbiddenV4(v4(noZone));
  if (kind === 6) {
    const groups = parseIPv6(noZone);
    return groups === null || isForbiddenV6(groups);
  }
  return true;
}

/** IP literal from a URL hostname (`[::1]` → `::1`), or null when the host is a DNS name. */
export function ipLiteral(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : null;
}

export function ssrfBlockedError(host: string, ip: string): WdsError {
  return new WdsError('URL_BLOCKED', {
    code: ScrapeCodes.SSRF_BLOCKED,
    retryable: false,
    message:
      `URL blocked: ${host} resolves to a private, loopback or reserved address (${ip}). ` +
      'Set WDS_ALLOW_PRIVATE_NETWORK=true to allow it.',
    details: { host, address: ip },
  });
}
