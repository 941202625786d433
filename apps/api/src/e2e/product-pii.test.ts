import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { NO_PRODUCT_WARNING } from '@wds/product';
import * as F from '@wds/product/fixtures';
import { call, html, namespaceFor, startFixtureSite, startStack, type FixtureSite, type Stack } from '@wds/test-utils';

// The `product` format and `redactPII` through the JS SDK (raw HTTP for errors), on scrape,
// batch scrape, crawl and parse, against the real stack without an LLM or a browser worker.
let stack: Stack;
let site: FixtureSite;
let fc: Firecrawl;

const CONTACT = `<html><head><title>Contact</title></head><body><main><h1>Contact</h1>
<p>Write to Dr. Anna Müller at anna.mueller@praxis-example.de or call +49 30 1234567.</p>
<p>Card on file: 4111 1111 1111 1111. IBAN DE89 3704 0044 0532 0130 00.</p>
<p>Order 2024-0815-4711 shipped on 15.03.2024, version 2.10.3.4.</p>
<p><a href="/shop">Shop</a></p></main></body></html>`;

before(async () => {
  site = await startFixtureSite({
    '/contact': html(CONTACT),
    '/shop': html(F.SHOPIFY.replace('</main>', '<p>Questions: shop@northfold.example</p><a href="/about">About</a></main>')),
    '/woo': html(F.WOOCOMMERCE),
    '/magento': html(F.MAGENTO),
    '/about': html(F.NO_PRODUCT),
  });
  stack = await startStack({ namespace: namespaceFor(import.meta.url) });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

type Doc = Record<string, unknown> & { markdown?: string; warning?: string; metadata?: { creditsUsed?: number } };
type Product = { title: string; url: string; brand?: string; variants: Array<Record<string, unknown>> };

describe('product format', () => {
  test('Shopify JSON-LD: variants with ISO 4217 prices and availability, canonical url', async () => {
    const doc = (await fc.scrape(site.url('/shop'), { formats: ['product'] })) as Doc;
    const p = doc.product as Product;
    assert.equal(p.title, 'Merino Beanie');
    assert.equal(p.brand, 'Northfold');
    assert.equal(p.url, 'https://northfold.example/products/merino-beanie');
    assert.deepEqual(
      p.variants.map((v) => [v.id, v.price, v.availability]),
      [
        ['40112233', { amount: 29, currency: 'USD', formatted: '$29.00' }, { inStock: true, text: 'In stock' }],
        ['40112234', { amount: 29, currency: 'USD', formatted: '$29.00' }, { inStock: false, text: 'Out of stock' }],
      ],
    );
    assert.equal(doc.markdown, undefined, 'only the formats asked for');
    assert.equal(doc.metadata?.creditsUsed, 1);
  });

  test('WooCommerce sale price and Magento microdata', async () => {
    const woo = (await fc.scrape(site.url('/woo'), { formats: ['product', 'markdown'] })) as Doc;
    assert.deepEqual((woo.product as Product).variants[0]!.sale, { originalPrice: { amount: 49, currency: 'EUR', formatted: '€49.00' } });
    assert.match(woo.markdown!, /Ceramic Pour-Over Set/);
    const mag = (await fc.scrape(site.url('/magento'), { formats: ['product'] })) as Doc;
    assert.deepEqual((mag.product as Product).variants[0]!.price, { amount: 64.5, currency: 'GBP', formatted: '£64.50' });
  });

  test('lockdown from the cache: product read from the cached page; branding null with a warning (it needs a live render)', async () => {
    const doc = (await fc.scrape(site.url('/shop'), { formats: ['product', 'branding'], lockdown: true })) as Doc;
    assert.equal((doc.product as Product).title, 'Merino Beanie');
    assert.equal(doc.branding, null);
    assert.match(doc.warning ?? '', /branding needs a live render/);
  });

  test('a page without structured data: product null with a warning', async () => {
    const doc = (await fc.scrape(site.url('/about'), { formats: ['product'] })) as Doc;
    assert.equal(doc.product, null);
    assert.equal(doc.warning, NO_PRODUCT_WARNING);
  });
});

describe('redactPII', () => {
  test('true: structured PII, names and addresses replaced by tags; look-alikes intact; 5 credits', async () => {
    const doc = (await fc.scrape(site.url('/contact'), { formats: ['markdown'], redactPII: true, maxAge: 0 })) as Doc;
    const md = doc.markdown!;
    for (const raw of ['anna.mueller@praxis-example.de', '+49 30 1234567', '4111 1111 1111 1111', 'DE89 3704', 'Anna Müller']) assert.ok(!md.includes(raw), `${raw} left in ${md}`);
    for (const tag of ['<EMAIL>', '<PHONE>', '<CREDIT_CARD>', '<IBAN>', '<PERSON>']) assert.ok(md.includes(tag), `${tag} missing in ${md}`);
    assert.match(md, /Order 2024-0815-4711 shipped on 15\.03\.2024, version 2\.10\.3\.4\./);
    assert.equal(doc.metadata?.creditsUsed, 5);
    assert.equal(doc.warning, undefined);
    const both = (await fc.scrape(site.url('/contact'), { formats: ['markdown', 'html'], redactPII: true })) as Doc;
    assert.ok(both.markdown!.includes('<EMAIL>'));
    assert.match(both.warning ?? '', /html and rawHtml are returned unredacted/);
  });

  test('options: entities and mask; hash tokens; a cached copy is redacted per request', async () => {
    // The page is now in the cache unredacted (cache entries hold the fetched page, never a redacted one).
    const plain = (await fc.scrape(site.url('/contact'), { formats: ['markdown'] })) as Doc;
    assert.match(plain.markdown!, /anna\.mueller@praxis-example\.de/);
    const masked = (await fc.scrape(site.url('/contact'), { formats: ['markdown'], redactPII: { entities: ['EMAIL'], replaceStyle: 'mask' } })) as Doc;
    assert.match(masked.markdown!, /at \*{30} or call \+49 30 1234567/);
    const hashed = (await fc.scrape(site.url('/contact'), { formats: ['markdown'], redactPII: { entities: ['FINANCIAL'], replaceStyle: 'hash' as never } })) as Doc;
    assert.match(hashed.markdown!, /Card on file: <CREDIT_CARD_[0-9a-f]{12}>\. IBAN <IBAN_[0-9a-f]{12}>\./);
  });

  test('accurate mode without a model: the detectors run and a warning says so', async () => {
    const doc = (await fc.scrape(site.url('/contact'), { formats: ['markdown'], redactPII: { mode: 'accurate' } })) as Doc;
    assert.ok(doc.markdown!.includes('<EMAIL>'));
    assert.match(doc.warning ?? '', /redactPII: the model pass/);
  });

  test('bad options → 400 naming the field', async () => {
    for (const redactPII of [{ replaceStyle: 'blur' }, { entities: ['SSN'] }, { mode: 'fast', extra: 1 }, 'yes']) {
      const r = await call(stack, 'POST', '/v2/scrape', { url: site.url('/contact'), redactPII });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.success, false);
      assert.ok(r.json.details.some((d: { path: string[] }) => d.path[0] === 'redactPII'), JSON.stringify(r.json.details));
    }
  });
});

describe('per page in batch scrape, crawl and parse', () => {
  test('batch scrape: product and redaction on every page', async () => {
    const job = await fc.batchScrape([site.url('/shop'), site.url('/contact')], { options: { formats: ['markdown', 'product'], redactPII: true }, pollInterval: 1 } as never);
    assert.equal(job.status, 'completed');
    const byPath = new Map(job.data.map((d) => [new URL(d.metadata!.sourceURL!).pathname, d as Doc]));
    assert.equal((byPath.get('/shop')!.product as Product).title, 'Merino Beanie');
    assert.match(byPath.get('/shop')!.markdown!, /Questions: <EMAIL>/);
    assert.equal(byPath.get('/contact')!.product, null);
    assert.ok(byPath.get('/contact')!.markdown!.includes('<IBAN>'));
    assert.equal(job.creditsUsed, 10);
  });

  test('crawl: scrapeOptions product + redactPII', async () => {
    const job = await fc.crawl(site.url('/contact'), { limit: 3, sitemap: 'skip', crawlEntireDomain: true, scrapeOptions: { formats: ['markdown', 'product'], redactPII: { entities: ['EMAIL'] } }, pollInterval: 1 } as never);
    assert.equal(job.status, 'completed');
    const byPath = new Map(job.data.map((d) => [new URL(d.metadata!.sourceURL!).pathname, d as Doc]));
    assert.deepEqual([...byPath.keys()].sort(), ['/about', '/contact', '/shop']);
    assert.equal((byPath.get('/shop')!.product as Product).variants.length, 2);
    assert.ok(!job.data.some((d) => /@(praxis-example\.de|northfold\.example)/.test(d.markdown ?? '')), 'no address left');
    assert.match(byPath.get('/contact')!.markdown!, /\+49 30 1234567/, 'phones were not asked for');
  });

  test('parse: an HTML upload redacted, product read from it', async () => {
    const doc = (await fc.parse({ data: Buffer.from(F.MAGENTO.replace('</div>\n</div>', '<p>Support: help@lumen-store.example</p></div>\n</div>')), filename: 'lamp.html', contentType: 'text/html' }, { formats: ['markdown', 'product'], redactPII: true } as never)) as Doc;
    assert.equal((doc.product as Product).title, 'Oak Desk Lamp');
    assert.ok(!doc.markdown!.includes('help@lumen-store.example'), doc.markdown);
    assert.equal(doc.metadata?.creditsUsed, 5);
  });
});
