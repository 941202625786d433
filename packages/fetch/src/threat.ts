import { WdsError } from '@wds/errors';

/**
 * Threat protection (Firecrawl's docs: features/threat-protection, the `ThreatProtectionOverride`
 * of its v2 API reference): URLs a request would fetch are checked against a policy and refused
 * with 403 `unsafe_domain_blocked`. What runs here is what is deterministic and needs no outside
 * service — the policy's own lists: `whitelist` (always allowed, wins over everything),
 * `blacklist` (exact domains or `*.` globs) and `blockedTlds` (matched on label boundaries), on the
 * URL's canonical host (the WHATWG URL parser lower-cases it, punycodes IDNs and turns integer,
 * octal or hex IPv4 forms into dotted quads, so an alternate spelling cannot slip past a list).
 * The classifier modes (`normal`: Google Web Risk; `zscaler`: the organization's tenant) have no
 * classifier in this deployment: see `threatModeProblem`. WDS has no organization policy, so a
 * team with the feature enabled gets `manual-only` unless the request says `off`.
 */
export interface ThreatPolicy {
  mode?: 'off' | 'manual-only' | 'normal' | 'zscaler';
  blacklist?: string[];
  whitelist?: string[];
  blockedTlds?: string[];
  failurePolicy?: 'open' | 'closed';
  riskScoreThreshold?: number;
}

export type ThreatRule = 'blacklist' | 'blocked_tld';

/** The canonical host of a URL (lower case, no trailing dot), or null when it is not a URL. */
function hostOf(url: string | URL): string | null {
  try {
    const u = typeof url === 'string' ? new URL(url) : url;
    const h = u.hostname.replace(/\.$/, '').toLowerCase();
    return h.startsWith('[') ? h.slice(1, -1) : h;
  } catch {
    return null;
  }
}

/** A list entry against a host: `example.com` matches that host exactly, `*.example.com` its subdomains (not itself). */
function matches(entry: string, host: string): boolean {
  const e = (hostOf(`http://${entry.replace(/^\*\./, '')}/`) ?? entry.toLowerCase()).replace(/\.$/, '');
  if (entry.startsWith('*.')) return host.endsWith(`.${e}`);
  return host === e;
}

/** Which rule blocks the URL under the policy, or null when it may be fetched. */
export function threatVerdict(url: string | URL, p: ThreatPolicy | undefined): ThreatRule | null {
  if (!p || p.mode === 'off') return null;
  const host = hostOf(url);
  if (host === null) return null;
  if (p.whitelist?.some((e) => matches(e, host))) return null;
  if (p.blacklist?.some((e) => matches(e, host))) return 'blacklist';
  const labels = host.split('.');
  // A TLD rule blocks hosts whose last label is it (`zip` blocks `a.zip`, not `zip.example` or `a.zipper`).
  if (labels.length > 1 && p.blockedTlds?.includes(labels.at(-1)!)) return 'blocked_tld';
  return null;
}

/** Firecrawl's error for a blocked URL (its docs show the body). */
export function unsafeUrlError(url: string | URL, rule: ThreatRule): WdsError {
  const href = typeof url === 'string' ? url : url.href;
  return new WdsError('FORBIDDEN', {
    code: 'unsafe_domain_blocked',
    message: `This URL (${href}) is blocked by your organization's threat protection policy (rule: ${rule}). If you believe this is a mistake, contact your organization administrator to adjust the policy (e.g. whitelist the domain).`,
  });
}

/** Throws 403 `unsafe_domain_blocked` when the policy blocks the URL. */
export function assertUrlAllowed(url: string | URL, p: ThreatPolicy | undefined): void {
  const rule = threatVerdict(url, p);
  if (rule) throw unsafeUrlError(url, rule);
}

/**
 * The `checkUrl` hook of `fetchPage` for a policy (undefined when it checks nothing): every
 * fetch that follows redirects under a request's policy (scrape pages, monitor checks) passes it,
 * so a hop onto a blocked host is refused before it is requested.
 */
export function threatUrlCheck(p: ThreatPolicy | undefined): ((u: URL) => void) | undefined {
  if (!p || p.mode === 'off') return undefined;
  return (u: URL) => assertUrlAllowed(u, p);
}

/** The URLs the policy allows (search and map results: blocked ones are left out, as Firecrawl's docs say). */
export function allowedUrls<T>(items: T[], urlOf: (t: T) => string, p: ThreatPolicy | undefined): T[] {
  if (!p || p.mode === 'off') return items;
  return items.filter((t) => threatVerdict(urlOf(t), p) === null);
}

/**
 * What of a policy this deployment cannot run, checked before anything is fetched: `zscaler` needs
 * the organization's Zscaler connection (403, as Firecrawl answers without one); `normal` needs
 * the Google Web Risk classifier, which is an outside service: with `failurePolicy: "open"` the
 * request runs on the lists alone (the documented behaviour when the classifier is unavailable),
 * otherwise it could only be blocked, so it is refused at once (400 FEATURE_NOT_AVAILABLE).
 */
export function threatModeProblem(p: ThreatPolicy | undefined): WdsError | null {
  if (p?.mode === 'zscaler') {
    return new WdsError('FORBIDDEN', { code: 'THREAT_PROTECTION_ZSCALER_NOT_CONFIGURED', message: 'Forbidden: threatProtection mode "zscaler" needs a Zscaler connection, and none is configured in this deployment.' });
  }
  if (p?.mode === 'normal' && p.failurePolicy !== 'open') {
    return new WdsError('FEATURE_NOT_AVAILABLE', {
      code: 'FEATURE_NOT_AVAILABLE',
      message: 'threatProtection mode "normal" scans URLs with Google Web Risk, which this deployment does not have: every URL would be blocked by the closed failure policy. Use mode "manual-only" (the blacklist, whitelist and blockedTlds), or failurePolicy "open" to run on the lists alone.',
      details: [{ field: 'threatProtection.mode' }],
    });
  }
  return null;
}
