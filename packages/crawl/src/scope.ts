import { compilePathPatterns } from './path-patterns';
import { canonicalCrawlUrl, crawlUrlKey } from './url-key';
import { createTrapGuard, type TrapReason } from './traps';

/**
 * Which discovered links a crawl follows, from Firecrawl's documented options: child paths of
 * the start URL unless crawlEntireDomain; the start host only unless allowSubdomains; external
 * sites one hop only with allowExternalLinks; include/exclude regexes on the path (or the whole
 * URL with regexOnFullURL), matched in linear time (path-patterns.ts); maxDiscoveryDepth;
 * obvious non-document files skipped; crawler traps refused (./traps.ts).
 */
export interface ScopeOptions {
  includePaths?: string[] | null;
  excludePaths?: string[] | null;
  regexOnFullURL?: boolean;
  maxDiscoveryDepth?: number | null;
  crawlEntireDomain?: boolean;
  allowSubdomains?: boolean;
  allowExternalLinks?: boolean;
  ignoreQueryParameters?: boolean;
}

export type Admission =
  | { ok: true; url: string; key: string; depth: number; external: boolean }
  | { ok: false; reason: 'invalid' | 'scheme' | 'file-type' | 'external' | 'subdomain' | 'path' | 'include' | 'exclude' | 'depth' | 'external-root' | TrapReason };

const SKIPPED_EXTENSIONS = /\.(png|jpe?g|gif|webp|svg|ico|bmp|tiff?|avif|css|js|mjs|map|woff2?|ttf|otf|eot|mp3|mp4|m4a|wav|ogg|webm|mov|avi|mkv|zip|gz|tgz|bz2|xz|7z|rar|tar|exe|dmg|msi|apk|iso|bin|woff)$/i;

/** example.co.uk-style registrable domains are approximated by the last two labels (last three when the second-level label is short). */
export function baseDomain(host: string): string {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.');
  if (labels.length <= 2 || /^\d+$/.test(labels[labels.length - 1]!)) return labels.join('.');
  const sld = labels[labels.length - 2]!;
  const take = sld.length <= 3 && labels[labels.length - 1]!.length === 2 ? 3 : 2;
  return labels.slice(-take).join('.');
}

const stripWww = (h: string) => h.toLowerCase().replace(/^www\./, '');

export function createScope(startUrl: string, o: ScopeOptions) {
  const start = new URL(startUrl);
  const startHost = stripWww(start.hostname);
  const startBase = baseDomain(startHost);
  // Child-path rule: the start URL's directory ("/docs/intro" admits "/docs/intro/…"; "/docs/" admits "/docs/…").
  const startPath = start.pathname.endsWith('/') ? start.pathname : `${start.pathname}/`;
  const includes = compilePathPatterns(o.includePaths);
  const excludes = compilePathPatterns(o.excludePaths);
  const trapOf = createTrapGuard();

  /** The include/exclude rules alone (also applied to the start URL and sitemap URLs). */
  function passesPathRules(u: URL): 'include' | 'exclude' | null {
    const subject = o.regexOnFullURL ? u.href : u.pathname;
    if (includes.length && !includes.some((r) => r.test(subject))) return 'include';
    if (excludes.some((r) => r.test(subject))) return 'exclude';
    return null;
  }

  function admit(link: string, from: { depth: number; external: boolean }): Admission {
    let u: URL;
    try {
      u = new URL(link);
    } catch {
      return { ok: false, reason: 'invalid' };
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return { ok: false, reason: 'scheme' };
    if (from.external) return { ok: false, reason: 'external' }; // external pages: one hop only
    if (SKIPPED_EXTENSIONS.test(u.pathname)) return { ok: false, reason: 'file-type' };
    const depth = from.depth + 1;
    if (o.maxDiscoveryDepth != null && depth > o.maxDiscoveryDepth) return { ok: false, reason: 'depth' };

    const host = stripWww(u.hostname);
    const sameHost = host === startHost && (u.port || '') === (start.port || '');
    const sameSite = baseDomain(host) === startBase;
    let external = false;
    if (!sameHost) {
      if (sameSite && o.allowSubdomains) {
        // a subdomain of the same site: in scope
      } else if (o.allowExternalLinks) {
        if (u.pathname === '/' && !u.search) return { ok: false, reason: 'external-root' };
        external = true;
      } else {
        return { ok: false, reason: sameSite ? 'subdomain' : 'external' };
      }
    } else if (!o.crawlEntireDomain && !(u.pathname === start.pathname || u.pathname.startsWith(startPath))) {
      return { ok: false, reason: 'path' };
    }
    if (!external) {
      const rule = passesPathRules(u);
      if (rule) return { ok: false, reason: rule };
    }
    const url = canonicalCrawlUrl(u, o);
    const key = crawlUrlKey(url, o);
    // The fetched URL differs from `u` by its fragment (and query, when ignored), never by its path.
    const trap = trapOf(url, u.pathname, key);
    if (trap) return { ok: false, reason: trap };
    return { ok: true, url, key, depth, external };
  }

  return { admit, passesPathRules, startKey: crawlUrlKey(start, o) };
}
export type CrawlScope = ReturnType<typeof createScope>;
