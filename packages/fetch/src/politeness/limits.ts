/**
 * What an origin's politeness budget allows: the operator's defaults, and overrides per origin
 * (`https://example.com`, `example.com` for any scheme and port, `*.example.com` for its
 * subdomains too). 0 means no limit. Overrides may be looser or stricter than the defaults: they
 * are the operator's word for that site; a job's own settings can only add to them.
 */
export interface OriginLimit {
  /** Requests in flight at once at the origin, across the deployment; 0: no cap. */
  maxInFlight: number;
  /** Least time between two request starts at the origin, across the deployment (ms); 0: none. */
  minIntervalMs: number;
}

export interface OriginLimitRule extends Partial<OriginLimit> {
  /** An origin, a host, or `*.` and a domain. */
  match: string;
}

/** The limits of an origin: the most specific rule (origin, then host, then the longest `*.` domain) over the defaults. */
export function limitsResolver(defaults: OriginLimit, rules: OriginLimitRule[]): (origin: string) => OriginLimit {
  const byOrigin = new Map<string, OriginLimitRule>();
  const byHost = new Map<string, OriginLimitRule>();
  const domains: OriginLimitRule[] = [];
  for (const r of rules) {
    const m = r.match.toLowerCase();
    if (m.startsWith('*.')) domains.push({ ...r, match: m.slice(1) });
    else if (m.includes('://')) byOrigin.set(new URL(m).origin, r);
    else byHost.set(m, r);
  }
  domains.sort((a, b) => b.match.length - a.match.length);
  const memo = new Map<string, OriginLimit>();
  return (origin) => {
    let hit = memo.get(origin);
    if (hit) return hit;
    const host = origin.slice(origin.indexOf('://') + 3).replace(/:\d+$/, '').toLowerCase();
    const rule = byOrigin.get(origin) ?? byHost.get(host) ?? domains.find((d) => host.endsWith(d.match) || host === d.match.slice(1));
    hit = { maxInFlight: rule?.maxInFlight ?? defaults.maxInFlight, minIntervalMs: rule?.minIntervalMs ?? defaults.minIntervalMs };
    if (memo.size > 10_000) memo.clear();
    memo.set(origin, hit);
    return hit;
  };
}

/**
 * Parses the operator's overrides: a JSON object from match to limits,
 * `{"https://shop.example": {"maxInFlight": 2, "minIntervalMs": 500}, "*.example.org": {"minIntervalMs": 1000}}`.
 * Throws with what is wrong.
 */
export function parseOriginLimits(json: string | undefined): OriginLimitRule[] {
  const t = json?.trim();
  if (!t) return [];
  let v: unknown;
  try {
    v = JSON.parse(t);
  } catch (e) {
    throw new Error(`must be a JSON object (${(e as Error).message})`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('must be a JSON object from origin, host or *.domain to {"maxInFlight", "minIntervalMs"}');
  return Object.entries(v as Record<string, unknown>).map(([match, lim]) => {
    if (match.includes('://')) {
      try {
        if (!/^https?:$/.test(new URL(match).protocol)) throw new Error();
      } catch {
        throw new Error(`"${match}" is not an http(s) origin`);
      }
    }
    if (!lim || typeof lim !== 'object' || Array.isArray(lim)) throw new Error(`"${match}" must map to an object`);
    const rule: OriginLimitRule = { match };
    for (const [k, n] of Object.entries(lim as Record<string, unknown>)) {
      if (k !== 'maxInFlight' && k !== 'minIntervalMs') throw new Error(`"${match}": unknown field "${k}" (maxInFlight, minIntervalMs)`);
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new Error(`"${match}".${k} must be a whole number ≥ 0`);
      rule[k] = n;
    }
    return rule;
  });
}
