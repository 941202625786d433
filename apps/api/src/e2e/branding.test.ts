import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { call, html, namespaceFor, startFixtureSite, startStack, type FixtureSite, type Stack } from '@wds/test-utils';

// The `branding` format through the JS SDK on a stack with a browser worker (the styles are
// computed by Chromium), in a scrape and per page in crawl and batch scrape.
let stack: Stack;
let site: FixtureSite;
let fc: Firecrawl;

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Teal Bank</title>
<meta property="og:site_name" content="Teal Bank"><link rel="icon" href="/favicon.ico">
<style>
body { background: #ffffff; color: #111827; font-family: "Source Sans 3", sans-serif; }
h1 { font-family: Merriweather, serif; font-size: 40px; color: #111827; }
a { color: #0f766e; }
.cta { background: #0f766e; color: #ffffff; border: 0; border-radius: 999px; padding: 10px 20px; }
</style></head><body><header><a href="/"><img src="/brand-logo.svg" alt="logo" width="80" height="20"></a></header>
<main><h1>Banking, in teal</h1><p>Open an account in minutes. <a href="/rates">See our rates</a>.</p><button class="cta">Open account</button></main></body></html>`;

before(async () => {
  [stack, site] = await Promise.all([startStack({ namespace: namespaceFor(import.meta.url) }), startFixtureSite({ '/': html(PAGE) })]);
  await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-browser', WDS_PUBLIC_URL: stack.url, WDS_BROWSER_PAGES: '1' });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

describe('branding', () => {
  test('from the rendered page: colours, fonts, button, images', async () => {
    const doc = await fc.scrape(site.url('/'), { formats: ['branding', 'markdown'] });
    const b = doc.branding!;
    assert.equal(doc.metadata!.engine, 'browser');
    assert.match(doc.markdown!, /Banking, in teal/);
    assert.equal(b.colorScheme, 'light');
    assert.equal(b.brandName, 'Teal Bank');
    assert.deepEqual(
      [b.colors!.primary, b.colors!.background, b.colors!.textPrimary, b.colors!.link],
      ['#0F766E', '#FFFFFF', '#111827', '#0F766E'],
    );
    for (const [k, v] of Object.entries(b.colors!)) assert.match(String(v), /^#[0-9A-F]{6}$/, `${k} is a colour`);
    assert.deepEqual(b.typography!.fontFamilies, { primary: 'Source Sans 3', heading: 'Merriweather', code: 'monospace' });
    assert.equal(b.typography!.fontSizes!.h1, '40px');
    assert.deepEqual(b.components!.buttonPrimary, { background: '#0F766E', textColor: '#FFFFFF', borderRadius: '999px' });
    assert.deepEqual(b.images, { logo: site.url('/brand-logo.svg'), favicon: site.url('/favicon.ico'), ogImage: null });
    assert.equal(b.personality, undefined, 'personality needs a model');
  });

  test('per page in batch scrape (rendered by the browser window) and crawl', async () => {
    const batch = await fc.batchScrape([site.url('/')], { options: { formats: ['branding'] }, pollInterval: 1 } as never);
    assert.equal(batch.status, 'completed');
    assert.equal(batch.data[0]!.metadata!.engine, 'browser');
    assert.equal(batch.data[0]!.branding!.colors!.primary, '#0F766E');
    const crawl = await fc.crawl(site.url('/'), { limit: 1, sitemap: 'skip', scrapeOptions: { formats: ['branding'] }, pollInterval: 1 } as never);
    assert.equal(crawl.status, 'completed');
    assert.equal(crawl.data[0]!.branding!.brandName, 'Teal Bank');
  });
});
