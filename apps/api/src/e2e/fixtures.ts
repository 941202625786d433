import { gzipSync } from 'node:zlib';
import iconv from 'iconv-lite';
import { html, type Handler } from '@wds/test-utils';

/** The fixture pages the scrape end-to-end tests read. */
export const RICH_PAGE = `<!doctype html>
<html lang="en-GB">
<head>
  <title>Rich fixture page</title>
  <meta name="description" content="A page with everything">
  <meta name="keywords" content="alpha, beta">
  <meta property="og:title" content="OG rich title">
  <meta property="og:locale:alternate" content="fr_FR">
  <meta property="og:locale:alternate" content="de_DE">
  <meta name="author" content="Ann">
  <meta name="author" content="Bob">
  <style>.x{color:red}</style>
  <script>window.secret = 1;</script>
</head>
<body>
  <header class="site-header"><a href="/home">Home link in header</a></header>
  <nav><a href="/nav-target">Navigation entry</a></nav>
  <main>
    <h1>Main heading</h1>
    <p>First paragraph with a <a href="relative/page?x=1">relative link</a> and <a href="https://example.org/abs">absolute</a>.</p>
    <p>Again <a href="relative/page?x=1">the same relative link</a>.</p>
    <ul><li>one</li><li>two</li></ul>
    <table><thead><tr><th>Name</th><th>Qty</th></tr></thead><tbody><tr><td>Apple</td><td>3</td></tr></tbody></table>
    <img srcset="/img/small.png 320w, /img/large.png 1280w, /img/medium.png 640w" src="/img/fallback.png" alt="responsive">
    <img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==" alt="inline dot">
    <div class="promo-box">Promo text kept</div>
    <noscript>Enable JavaScript please</noscript>
  </main>
  <aside class="sidebar">Sidebar words</aside>
  <footer>Footer words</footer>
</body>
</html>`;

const SJIS_TEXT = '日本語のページです';

export const routes: Record<string, Handler> = {
  '/rich': html(RICH_PAGE),
  '/redirect-1': (_q, r) => void r.writeHead(302, { location: '/redirect-2' }).end(),
  '/redirect-2': (_q, r) => void r.writeHead(301, { location: '/rich' }).end(),
  '/missing': (_q, r) => void r.writeHead(404, { 'content-type': 'text/html' }).end('<html><head><title>Gone</title></head><body><h1>Not found here</h1></body></html>'),
  '/sjis-header': (_q, r) => {
    r.writeHead(200, { 'content-type': 'text/html; charset=Shift_JIS' });
    r.end(iconv.encode(`<html><head><title>${SJIS_TEXT}</title></head><body><p>${SJIS_TEXT}</p></body></html>`, 'shift_jis'));
  },
  '/sjis-meta': (_q, r) => {
    r.writeHead(200, { 'content-type': 'text/html' });
    r.end(iconv.encode(`<html><head><meta charset="shift_jis"><title>${SJIS_TEXT}</title></head><body><p>${SJIS_TEXT}</p></body></html>`, 'shift_jis'));
  },
  '/gzip': (_q, r) => {
    r.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
    r.end(gzipSync('<html><body><p>Compressed body text</p></body></html>'));
  },
  '/json': (_q, r) => void r.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world","n":1}'),
  '/text': (_q, r) => void r.writeHead(200, { 'content-type': 'text/plain' }).end('Plain text body\nsecond line'),
  /** The time the page was fetched, in its text: a document shows when the server fetched it. */
  '/clock': (_q, r) => void r.writeHead(200, { 'content-type': 'text/plain' }).end(`fetched at ${Date.now()}`),
  '/echo-headers': (q, r) => {
    r.writeHead(200, { 'content-type': 'text/html' });
    r.end(`<html><body><p id="ua">${q.headers['user-agent'] ?? ''}</p><p id="x">${q.headers['x-test'] ?? ''}</p><p id="lang">${q.headers['accept-language'] ?? ''}</p></body></html>`);
  },
  '/slow': (_q, r) => {
    const t = setTimeout(() => r.writeHead(200, { 'content-type': 'text/html' }).end('<p>late</p>'), 10_000);
    r.on('close', () => clearTimeout(t));
  },
  '/doc.pdf': (_q, r) => void r.writeHead(200, { 'content-type': 'application/pdf' }).end(Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n', 'latin1')),
  '/image.png': (_q, r) => void r.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3])),
};
export { SJIS_TEXT };
