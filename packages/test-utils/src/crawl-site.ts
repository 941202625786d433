import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

/**
 * A multi-host site for crawl, map and batch tests, served on 127.0.0.1. Workers reach it by
 * name through WDS_HOST_OVERRIDES (`hostOverrides`): `site.test` (the site), `sub.site.test`
 * (a subdomain) and `other.test` (an external site). Every request is counted per host+path.
 *
 * site.test layout:
 *   /                 → /docs/, /blog/, /private/secret, /p/1, /p/1?ref=a, /p/1#frag, /gen/0,
 *                       http://other.test/ext-page, http://other.test/, http://sub.site.test/sub-page,
 *                       /bin (octet-stream: fails), mailto:
 *   /docs/            → /docs/a, /docs/b;  /docs/a → /docs/a/deep;  /docs/a/deep → /
 *   /blog/            → /blog/post-1..3
 *   /private/secret   (robots.txt disallows /private/)
 *   /orphan           (only in the sitemap)
 *   /gen/i            binary tree of `genPages` pages: /gen/i → /gen/2i+1, /gen/2i+2
 *   /slow/i           chain of `slowPages` pages, each answering after `slowMs`: /slow/i → /slow/i+1
 *   /fan/0            links to /fan/1 … /fan/(fanPages−1), leaves answering after `fanDelayMs`: a
 *                     frontier that is one URL, then wide at once
 *   /js/i             binary tree of `jsPages` pages like /gen/i whose content and links a script
 *                     writes into an empty `#root` (`jsRenderMs` after it runs): the HTML as served
 *                     has neither; every fifth page (i % 5 === 1) is server-rendered instead, /js/1
 *                     among them: the crawl sees a server-rendered page before it could decide that
 *                     the origin is script-rendered, so each page keeps its own engine choice
 *   robots.txt        Disallow /private/ for *, Disallow /blog/ for StrictBot, Sitemap line
 *   /sitemap.xml      sitemap index → /sitemap-pages.xml.gz (gzip) → /orphan, /docs/a, /blog/post-1
 *
 * app.site.test layout (`appPages`): /app/i, a binary tree like /js/i where every page is
 * script-rendered (a single-page app: the origin a crawl learns to render without fetching first).
 */
export interface CrawlSiteOptions {
  genPages?: number;
  /** Delay before each /gen/i page answers (keeps a crawl running long enough to disturb it). */
  genDelayMs?: number;
  slowPages?: number;
  slowMs?: number;
  fanPages?: number;
  /** Delay before each /fan/i leaf (i ≥ 1) answers. */
  fanDelayMs?: number;
  jsPages?: number;
  /** Delay before a /js/i page's script writes its content (default 20 ms). */
  jsRenderMs?: number;
  /** Delay before each /js/i page answers. */
  jsDelayMs?: number;
  appPages?: number;
  /** Delay before each /app/i page answers (HTTP fetches and renders alike). */
  appDelayMs?: number;
}

export interface CrawlSite {
  port: number;
  /** URL on a host name: url('/docs/') → http://site.test:PORT/docs/ */
  url(path: string, host?: string): string;
  hostOverrides: string;
  hits(path: string, host?: string): number;
  totalHits(prefix: string, host?: string): number;
  /** Requests under `prefix` made by a browser (a Chrome User-Agent); the rest came from the HTTP engine. */
  browserHits(prefix: string, host?: string): number;
  /** Paths under `prefix` that only a browser requested: pages rendered without an HTTP fetch first. */
  browserOnly(prefix: string, host?: string): number;
  close(): Promise<void>;
}

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><title>${title}</title><meta name="description" content="${title} page"></head><body><main><h1>${title}</h1>${body}</main></body></html>`;
const links = (hrefs: string[]) => hrefs.map((h) => `<p><a href="${h}">${h}</a></p>`).join('');

/** What a /js/i page shows once rendered: its heading, text and links to its two children. */
function jsPageBody(i: number, n: number, dir = 'js'): string {
  const kids = [2 * i + 1, 2 * i + 2].filter((c) => c < n);
  return `<h2>Rendered page ${i}</h2><p>${'Text that only exists after the script ran. '.repeat(10)}</p>` + links(kids.map((c) => `/${dir}/${c}`));
}

/** A script-rendered page: an empty app root that a script fills after `renderMs`. */
function jsShell(title: string, body: string, renderMs: number): string {
  return `<!doctype html><html lang="en"><head><title>${title}</title></head><body><div id="root"></div><script>
setTimeout(function () { document.getElementById('root').innerHTML = ${JSON.stringify(`<main><h1>${title}</h1>${body}</main>`)}; }, ${renderMs});
</script></body></html>`;
}

/** Answers now, or after `ms` unless the client has gone by then. */
function answerAfter(res: ServerResponse, ms: number | undefined, answer: () => void): void {
  if (!ms) return answer();
  const t = setTimeout(answer, ms);
  res.on('close', () => clearTimeout(t));
}

const sumUnder = (counts: Map<string, number>, prefix: string) => [...counts.entries()].filter(([k]) => k.startsWith(prefix)).reduce((n, [, v]) => n + v, 0);

export async function startCrawlSite(opts: CrawlSiteOptions = {}): Promise<CrawlSite> {
  const gen = opts.genPages ?? 0;
  const slow = opts.slowPages ?? 0;
  const slowMs = opts.slowMs ?? 300;
  const counts = new Map<string, number>();
  const browserCounts = new Map<string, number>();
  let port = 0;
  const abs = (host: string, path: string) => `http://${host}:${port}${path}`;

  function site(path: string, res: ServerResponse) {
    const html = (title: string, body: string) => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(title, body));
    if (path === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end(`User-agent: *\nDisallow: /private/\n\nUser-agent: StrictBot\nDisallow: /blog/\nDisallow: /private/\n\nSitemap: ${abs('site.test', '/sitemap.xml')}\n`);
    }
    if (path === '/sitemap.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' });
      return void res.end(`<?xml version="1.0"?><sitemapindex><sitemap><loc>${abs('site.test', '/sitemap-pages.xml.gz')}</loc></sitemap></sitemapindex>`);
    }
    if (path === '/sitemap-pages.xml.gz') {
      const urls = ['/orphan', '/docs/a', '/blog/post-1'].map((p) => `<url><loc>${abs('site.test', p)}</loc></url>`).join('');
      res.writeHead(200, { 'content-type': 'application/gzip' });
      return void res.end(gzipSync(`<?xml version="1.0"?><urlset>${urls}</urlset>`));
    }
    if (path === '/') {
      return html('Home', links(['/docs/', '/blog/', '/private/secret', '/p/1', '/p/1?ref=a', '/p/1#frag', ...(gen ? ['/gen/0'] : []), ...(slow ? ['/slow/0'] : []),
        abs('other.test', '/ext-page'), abs('other.test', '/'), abs('sub.site.test', '/sub-page'), '/bin', 'mailto:someone@site.test']));
    }
    if (path === '/docs/') return html('Docs', links(['/docs/a', '/docs/b']));
    if (path === '/docs/a') return html('Docs A', links(['/docs/a/deep']));
    if (path === '/docs/b') return html('Docs B', '<p>leaf</p>');
    if (path === '/docs/a/deep') return html('Docs A Deep', links(['/']));
    if (path === '/blog/') return html('Blog', links(['/blog/post-1', '/blog/post-2', '/blog/post-3']));
    if (/^\/blog\/post-\d$/.test(path)) return html(`Post ${path.slice(-1)}`, '<p>post body</p>');
    if (path === '/private/secret') return html('Secret', '<p>should not be crawled</p>');
    if (path === '/orphan') return html('Orphan', '<p>only in the sitemap</p>');
    if (path === '/p/1') return html('P1', '<p>query duplicates</p>');
    if (path === '/bin') return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([0, 1, 2, 3, 0, 0]));
    let m = /^\/gen\/(\d+)$/.exec(path);
    if (m && Number(m[1]) < gen) {
      const i = Number(m[1]);
      const answer = () => html(`Gen ${i}`, links([2 * i + 1, 2 * i + 2].filter((c) => c < gen).map((c) => `/gen/${c}`)) + `<p>${'Generated text. '.repeat(20)}</p>`);
      return answerAfter(res, opts.genDelayMs, answer);
    }
    m = /^\/fan\/(\d+)$/.exec(path);
    if (m && Number(m[1]) < (opts.fanPages ?? 0)) {
      const i = Number(m[1]);
      if (i === 0) return html('Fan', links(Array.from({ length: opts.fanPages! - 1 }, (_, k) => `/fan/${k + 1}`)));
      return answerAfter(res, opts.fanDelayMs, () => html(`Fan ${i}`, '<p>leaf</p>'));
    }
    m = /^\/js\/(\d+)$/.exec(path);
    if (m && Number(m[1]) < (opts.jsPages ?? 0)) {
      const i = Number(m[1]);
      const body = jsPageBody(i, opts.jsPages!);
      return answerAfter(res, opts.jsDelayMs, () => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(i % 5 === 1 ? page(`JS ${i}`, body) : jsShell(`JS ${i}`, body, opts.jsRenderMs ?? 20)));
    }
    m = /^\/slow\/(\d+)$/.exec(path);
    if (m && Number(m[1]) < slow) {
      const i = Number(m[1]);
      return answerAfter(res, slowMs, () => html(`Slow ${i}`, links(i + 1 < slow ? [`/slow/${i + 1}`, `/slow/${i + 1}/b`] : [])));
    }
    m = /^\/slow\/(\d+)\/b$/.exec(path);
    if (m) return answerAfter(res, slowMs, () => html(`Slow ${m![1]} b`, '<p>side page</p>'));
    res.writeHead(404, { 'content-type': 'text/html' }).end(page('Not found', ''));
  }

  function other(path: string, res: ServerResponse) {
    if (path === '/ext-page') return void res.writeHead(200, { 'content-type': 'text/html' }).end(page('External page', links(['/ext-deeper'])));
    if (path === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(page('External home', ''));
    if (path === '/robots.txt') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(page('External other', ''));
  }

  function app(path: string, res: ServerResponse) {
    const m = /^\/app\/(\d+)$/.exec(path);
    if (!m || Number(m[1]) >= (opts.appPages ?? 0)) return void res.writeHead(404).end();
    const i = Number(m[1]);
    answerAfter(res, opts.appDelayMs, () => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(jsShell(`App ${i}`, jsPageBody(i, opts.appPages!, 'app'), opts.jsRenderMs ?? 20)));
  }

  function sub(path: string, res: ServerResponse) {
    if (path === '/robots.txt') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(page('Subdomain page', links(['/sub-deeper'])));
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const host = (req.headers.host ?? '').split(':')[0]!.toLowerCase();
    const path = (req.url ?? '/').split('?')[0]!;
    const k = `${host}${path}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
    if (/ Chrome\//.test(req.headers['user-agent'] ?? '')) browserCounts.set(k, (browserCounts.get(k) ?? 0) + 1);
    if (host === 'other.test') return other(path, res);
    if (host === 'app.site.test') return app(path, res);
    if (host === 'sub.site.test') return sub(path, res);
    return site(path, res);
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path, host = 'site.test') => abs(host, path),
    hostOverrides: 'site.test=127.0.0.1,*.site.test=127.0.0.1,other.test=127.0.0.1',
    hits: (path, host = 'site.test') => counts.get(`${host}${path}`) ?? 0,
    totalHits: (prefix, host = 'site.test') => sumUnder(counts, `${host}${prefix}`),
    browserHits: (prefix, host = 'site.test') => sumUnder(browserCounts, `${host}${prefix}`),
    browserOnly: (prefix, host = 'site.test') => [...browserCounts.entries()].filter(([k, n]) => k.startsWith(`${host}${prefix}`) && counts.get(k) === n).length,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
