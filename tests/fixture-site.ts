import { html, startFixtureSite, type FixtureSite } from '@wds/test-utils';

/**
 * The small site the ecosystem suites (firecrawl-py, firecrawl-mcp, schemathesis) scrape, crawl
 * and map: a home page linking to two documentation pages, and a sitemap. Served on 127.0.0.1,
 * so nothing leaves the machine.
 */
export const HOME_TITLE = 'Ecosystem fixture';

export function startEcosystemSite(): Promise<FixtureSite> {
  let origin = '';
  const page = (title: string, body: string) =>
    html(`<!doctype html><html lang="en"><head><title>${title}</title><meta name="description" content="${title} page"></head><body><main>${body}</main></body></html>`);
  return startFixtureSite({
    '/': page(HOME_TITLE, '<h1>Ecosystem home</h1><p>Python, MCP and fuzzing all start here.</p><a href="/docs/alpha">Alpha</a> <a href="/docs/beta">Beta</a>'),
    '/docs/alpha': page('Alpha', '<h1>Alpha page</h1><p>The first document.</p><a href="/docs/beta">Beta</a>'),
    '/docs/beta': page('Beta', '<h1>Beta page</h1><p>The second document.</p><a href="/">Home</a>'),
    '/sitemap.xml': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${['/', '/docs/alpha', '/docs/beta'].map((p) => `<url><loc>${origin}${p}</loc></url>`).join('')}</urlset>`);
    },
  }).then((site) => {
    origin = site.origin;
    return site;
  });
}
