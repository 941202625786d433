/**
 * The frontier's identity of a URL: two URLs with the same key are one page. Scheme and a
 * leading `www.` are ignored, the host is lower-cased, default ports, fragments and a
 * trailing slash dropped, and query parameters sorted (or dropped with ignoreQueryParameters).
 */
export function crawlUrlKey(raw: string | URL, opts: { ignoreQueryParameters?: boolean } = {}): string {
  const u = typeof raw === 'string' ? new URL(raw) : raw;
  const host = u.hostname.toLowerCase().replace(/^www\./, '');
  const defaultPort = (u.protocol === 'http:' && u.port === '80') || (u.protocol === 'https:' && u.port === '443') || u.port === '';
  let path = u.pathname || '/';
  if (path.length > 1 && path.endsWith('/')) path = path.replace(/\/+$/, '') || '/';
  let query = '';
  if (!opts.ignoreQueryParameters && u.search.length > 1) {
    const params = [...u.searchParams.entries()].sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1));
    query = `?${new URLSearchParams(params).toString()}`;
  }
  return `${host}${defaultPort ? '' : `:${u.port}`}${path}${query}`;
}

/** The URL actually fetched for a discovered link: fragment removed, query removed when ignored. */
export function canonicalCrawlUrl(raw: string | URL, opts: { ignoreQueryParameters?: boolean } = {}): string {
  const u = new URL(typeof raw === 'string' ? raw : raw.href);
  u.hash = '';
  if (opts.ignoreQueryParameters) u.search = '';
  return u.href;
}
