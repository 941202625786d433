import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { BARE_PAGE, BRAND_PAGE, DARK_PAGE } from './branding-fixtures';
import { BrowserPool, type RenderRequest } from './index';

// The branding capture against real Chromium and a local page with known styles.
let server: http.Server;
let origin = '';
let pool: BrowserPool;
const PAGES: Record<string, string> = { '/brand': BRAND_PAGE, '/bare': BARE_PAGE, '/dark': DARK_PAGE };

before(async () => {
  server = http.createServer((req, res) => {
    const body = PAGES[req.url ?? ''];
    res.writeHead(body ? 200 : 404, { 'content-type': body ? 'text/html; charset=utf-8' : 'image/png' });
    res.end(body ?? '');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  pool = new BrowserPool({ maxConcurrentPages: 1, recycleAfterPages: 50 });
});
after(async () => {
  await pool?.close();
  await new Promise((r) => server.close(r));
});

const render = (path: string) => {
  const req: RenderRequest = { url: origin + path, timeoutMs: 30_000, waitFor: 0, mobile: false, blockAds: false, skipTlsVerification: true, allowPrivateNetwork: true, branding: true };
  return pool.render(req);
};

test('a styled page: colours, fonts, typography, spacing, components, images, exactly', async () => {
  const r = await render('/brand');
  const b = r.branding!;
  assert.deepEqual(b.colors, {
    primary: '#FF5A1F', // --color-primary
    secondary: '#0C0A09', // no variable, no second filled button, the outlined one is primary-coloured: the headings' colour
    accent: '#7C3AED', // --color-accent
    background: '#FAFAF9',
    textPrimary: '#1C1917',
    textSecondary: '#78716C', // .muted, the second most used text colour
    link: '#2563EB',
    success: '#059669', // --color-success
    warning: '#D97706', // none on the page: the documented default
    error: '#B91C1C', // .alert-error's text (its background is pale)
  });
  assert.equal(b.colorScheme, 'light');
  assert.equal(b.brandName, 'Acme Rockets');
  assert.equal(b.logo, `${origin}/logo.png`);
  assert.deepEqual(b.images, { logo: `${origin}/logo.png`, favicon: `${origin}/favicon.svg`, ogImage: `${origin}/og.png` });
  assert.deepEqual(b.fonts, [{ family: 'Inter' }, { family: 'Space Grotesk' }, { family: 'JetBrains Mono' }]);
  assert.deepEqual(b.typography.fontFamilies, { primary: 'Inter', heading: 'Space Grotesk', code: 'JetBrains Mono' });
  assert.deepEqual(b.typography.fontSizes, { h1: '48px', h2: '32px', h3: '24px', body: '16px' });
  assert.deepEqual(b.typography.fontWeights, { regular: 400, bold: 700 });
  assert.deepEqual(b.typography.lineHeights, { heading: 1.2, body: 1.5 });
  assert.equal(b.spacing.baseUnit, 8);
  assert.equal(b.spacing.borderRadius, '8px');
  assert.deepEqual(b.components.buttonPrimary, { background: '#FF5A1F', textColor: '#FFFFFF', borderRadius: '8px' });
  assert.deepEqual(b.components.buttonSecondary, { background: '#FAFAF9', textColor: '#FF5A1F', borderColor: '#FF5A1F', borderRadius: '8px' });
  assert.deepEqual(b.components.input, { background: '#FFFFFF', textColor: '#1C1917', borderColor: '#D6D3D1', focusBorderColor: '#FF5A1F', borderRadius: '6px' });
  assert.deepEqual(b.animations, { transitionDuration: '0.2s', easing: 'ease' });
  assert.deepEqual(b.layout, { grid: { maxWidth: '1120px' }, headerHeight: '64px', footerHeight: '120px' });
  assert.ok(!r.html.includes('visibility:hidden!important'), 'probe elements are not in the captured HTML');
});

test('deterministic: the same page gives the same profile', async () => {
  const [a, b] = [await render('/brand'), await render('/brand')];
  assert.deepEqual(a.branding, b.branding);
});

test('an unstyled page: no colour is null, each falls back to a computed style', async () => {
  const b = (await render('/bare')).branding!;
  for (const [k, v] of Object.entries(b.colors)) assert.match(v, /^#[0-9A-F]{6}$/, k);
  assert.equal(b.colors.background, '#FFFFFF');
  assert.equal(b.colors.textPrimary, '#000000');
  assert.equal(b.colors.link, '#0000EE');
  assert.equal(b.colors.primary, '#0000EE', 'no buttons or variables: the link colour');
  assert.equal(b.logo, null);
});

test('a dark page is dark', async () => {
  const b = (await render('/dark')).branding!;
  assert.equal(b.colorScheme, 'dark');
  assert.deepEqual([b.colors.background, b.colors.textPrimary, b.colors.link], ['#0B1020', '#E5E7EB', '#38BDF8']);
});

test('a page without og:image or favicon link reports null for them', async () => {
  const b = (await render('/bare')).branding!;
  assert.deepEqual(b.images, { logo: null, favicon: null, ogImage: null });
});
