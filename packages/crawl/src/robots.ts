/**
 * robots.txt (RFC 9309, Google's reading of it): groups of user-agent lines with their
 * allow/disallow rules, the longest matching rule wins (allow on a tie), `*` matches any run of
 * characters and a final `$` anchors the end; Sitemap and Crawl-delay lines.
 *
 * Bounded on hostile files: only the first 500 KiB are read (what the RFC asks crawlers to
 * parse at least, and Google's limit), and a rule is matched by finding its literal segments
 * left to right (`indexOf`), linear in the path. The matcher this replaces (robots-parser's,
 * after Google's) costs pattern × path per rule: a 500 KB file of `Disallow: /*a*a*…` rules took
 * 5.3 s to check one 2,000-character URL; now 25 ms. A check still costs rules × path at worst
 * (27,000 rules `/*a<n>` against 2,000 a's: 0.75 s); typical files have tens of rules.
 */
export interface RobotsRules {
  isAllowed(url: string): boolean;
  sitemaps: string[];
  /** Crawl-delay in seconds for our user agent, when the site sets one. */
  crawlDelay?: number;
}

export const DEFAULT_ROBOTS_AGENT = 'WDS';
/** Characters of robots.txt read; the rest is ignored (RFC 9309 §2.5). */
export const MAX_ROBOTS_CHARS = 500 * 1024;

interface Rule {
  pattern: string;
  allow: boolean;
}
interface Group {
  rules: Rule[];
  crawlDelay?: number;
}

/** `Googlebot/2.1` → `googlebot`: agents are matched by lower-case product token. */
const agentToken = (ua: string) => {
  const t = ua.toLowerCase();
  const slash = t.indexOf('/');
  return (slash === -1 ? t : t.slice(0, slash)).trim();
};

/** Percent-escapes in upper case, non-ASCII encoded: how paths and patterns are compared. */
function normalise(path: string): string {
  let s: string;
  try {
    s = encodeURI(path).replace(/%25/g, '%');
  } catch {
    s = path; // a lone surrogate: compared as it is
  }
  return s.replace(/%[0-9a-fA-F]{2}/g, (m) => m.toUpperCase());
}

/** Does the rule's pattern match the path? Literal segments between `*` are found left to right. */
export function robotsPatternMatches(pattern: string, path: string): boolean {
  const anchored = pattern.endsWith('$');
  const parts = (anchored ? pattern.slice(0, -1) : pattern).split('*');
  const first = parts[0]!;
  if (!path.startsWith(first)) return false;
  if (parts.length === 1) return !anchored || path.length === first.length;
  // Leftmost placement of each middle segment leaves the most room for the rest: greedy is exact.
  let pos = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const seg = parts[i]!;
    if (!seg) continue;
    const at = path.indexOf(seg, pos);
    if (at === -1) return false;
    pos = at + seg.length;
  }
  const last = parts[parts.length - 1]!;
  if (!anchored) return last === '' || path.indexOf(last, pos) !== -1;
  return path.length - last.length >= pos && path.endsWith(last);
}

function parseGroups(body: string): { groups: Map<string, Group>; sitemaps: string[] } {
  const groups = new Map<string, Group>();
  const sitemaps: string[] = [];
  let agents: string[] = [];
  let lastWasAgent = false;
  const groupOf = (ua: string) => {
    let g = groups.get(ua);
    if (!g) groups.set(ua, (g = { rules: [] }));
    return g;
  };
  for (const raw of body.slice(0, MAX_ROBOTS_CHARS).split(/\r\n|\r|\n/)) {
    const hash = raw.indexOf('#');
    const line = hash === -1 ? raw : raw.slice(0, hash);
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (!key) continue;
    if (key === 'user-agent') {
      if (!lastWasAgent) agents = []; // a new group starts
      if (value) agents.push(agentToken(value));
    } else if (key === 'allow' || key === 'disallow') {
      for (const ua of agents) {
        const g = groupOf(ua);
        if (value) g.rules.push({ pattern: normalise(value), allow: key === 'allow' });
      }
    } else if (key === 'crawl-delay') {
      const delay = Number(value);
      for (const ua of agents) if (!Number.isNaN(delay)) groupOf(ua).crawlDelay = delay;
    } else if (key === 'sitemap' && value) {
      sitemaps.push(value);
    }
    lastWasAgent = key === 'user-agent';
  }
  return { groups, sitemaps };
}

export function parseRobots(origin: string, body: string | null, userAgent = DEFAULT_ROBOTS_AGENT): RobotsRules {
  if (body === null) return { isAllowed: () => true, sitemaps: [] };
  const { groups, sitemaps } = parseGroups(body);
  const group = groups.get(agentToken(userAgent)) ?? groups.get('*');
  // Longest first, allow before disallow on a tie: the first rule that matches decides.
  const rules = [...(group?.rules ?? [])].sort((a, b) => b.pattern.length - a.pattern.length || Number(b.allow) - Number(a.allow));
  const base = new URL(origin);
  const port = (u: URL) => u.port || (u.protocol === 'https:' ? '443' : '80');
  return {
    isAllowed(url) {
      let u: URL;
      try {
        u = new URL(url, base);
      } catch {
        return true;
      }
      // Another origin's URLs are not this file's business.
      if (u.protocol !== base.protocol || u.hostname !== base.hostname || port(u) !== port(base)) return true;
      const path = normalise(u.pathname + u.search);
      const rule = rules.find((r) => robotsPatternMatches(r.pattern, path));
      return !rule || rule.allow;
    },
    sitemaps,
    crawlDelay: group?.crawlDelay,
  };
}
