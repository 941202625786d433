import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extractProduct, NO_PRODUCT_WARNING } from './extract';
import * as F from './fixtures';

test('Shopify JSON-LD: one variant per Offer, ids from ?variant=, availability per offer', () => {
  const r = extractProduct(F.SHOPIFY, 'https://northfold.example/products/merino-beanie?utm=x');
  assert.equal(r.source, 'json-ld');
  assert.deepEqual(r.product, {
    title: 'Merino Beanie',
    brand: 'Northfold',
    url: 'https://northfold.example/products/merino-beanie',
    description: 'Soft, warm, made from 100% merino wool.',
    variants: [
      { id: '40112233', sku: 'NF-BEANIE-CHA', title: 'Merino Beanie - Charcoal', price: { amount: 29, currency: 'USD', formatted: '$29.00' }, availability: { inStock: true, text: 'In stock' }, images: [{ url: 'https://cdn.northfold.example/files/beanie-charcoal.jpg' }, { url: 'https://cdn.northfold.example/files/beanie-rust.jpg' }] },
      { id: '40112234', sku: 'NF-BEANIE-RUS', title: 'Merino Beanie - Rust', price: { amount: 29, currency: 'USD', formatted: '$29.00' }, availability: { inStock: false, text: 'Out of stock' }, images: [{ url: 'https://cdn.northfold.example/files/beanie-charcoal.jpg' }, { url: 'https://cdn.northfold.example/files/beanie-rust.jpg' }] },
    ],
  });
});

test('ProductGroup: variants with values from variesBy, a strikethrough price as sale.originalPrice', () => {
  const r = extractProduct(F.SHOPIFY_GROUP, 'https://stride.example/products/trail-runner-2');
  assert.deepEqual(r.product, {
    title: 'Trail Runner 2',
    brand: 'Stride',
    url: 'https://stride.example/products/trail-runner-2',
    description: 'A light trail shoe with a grippy outsole.',
    variants: [
      { id: '4501', sku: 'TR2-42-BLU', title: 'Trail Runner 2 - 42 / Blue', values: { size: '42', color: 'Blue' }, price: { amount: 89.95, currency: 'EUR', formatted: '€89.95' }, sale: { originalPrice: { amount: 119.95, currency: 'EUR', formatted: '€119.95' } }, availability: { inStock: true, text: 'In stock' }, images: [{ url: 'https://stride.example/img/tr2-blue.jpg' }] },
      { id: '4502', sku: 'TR2-43-BLK', title: 'Trail Runner 2 - 43 / Black', values: { size: '43', color: 'Black' }, price: { amount: 119.95, currency: 'EUR', formatted: '€119.95' }, availability: { inStock: false, text: 'Backorder' }, images: [{ url: 'https://stride.example/img/tr2-black.jpg' }] },
    ],
  });
});

test('WooCommerce @graph: ListPrice spec → sale, breadcrumb → category', () => {
  const r = extractProduct(F.WOOCOMMERCE, 'https://kaffeehaus.example/produkt/pour-over-set/');
  assert.equal(r.product?.category, 'Zubehör');
  assert.deepEqual(r.product?.variants, [
    {
      id: 'https://kaffeehaus.example/produkt/pour-over-set/#product',
      sku: 'KH-PO-SET',
      title: 'Ceramic Pour-Over Set',
      price: { amount: 39, currency: 'EUR', formatted: '€39.00' },
      sale: { originalPrice: { amount: 49, currency: 'EUR', formatted: '€49.00' } },
      availability: { inStock: true, text: 'In stock' },
      images: [{ url: 'https://kaffeehaus.example/wp-content/uploads/2024/05/pour-over.jpg' }],
    },
  ]);
});

test('Magento microdata: item properties, relative image made absolute', () => {
  const r = extractProduct(F.MAGENTO, 'https://lumen-store.example/oak-desk-lamp.html');
  assert.equal(r.source, 'microdata');
  assert.deepEqual(r.product, {
    title: 'Oak Desk Lamp',
    brand: 'Lumen',
    url: 'https://lumen-store.example/oak-desk-lamp.html',
    description: 'Solid oak base, linen shade, E27 socket.',
    variants: [{ id: 'LMP-OAK-01', sku: 'LMP-OAK-01', title: 'Oak Desk Lamp', price: { amount: 64.5, currency: 'GBP', formatted: '£64.50' }, availability: { inStock: true, text: 'In stock' }, images: [{ url: 'https://lumen-store.example/media/catalog/product/o/a/oak-lamp.jpg' }] }],
  });
});

test('BigCommerce-like microdata with a nested Brand item and a JSON-LD breadcrumb', () => {
  const r = extractProduct(F.BIGCOMMERCE, 'https://ridgeway.example/enamel-camp-mug/');
  assert.equal(r.source, 'microdata');
  assert.equal(r.product?.brand, 'Ridgeway');
  assert.equal(r.product?.category, 'Camp Kitchen > Drinkware');
  assert.deepEqual(r.product?.variants[0]?.price, { amount: 18, currency: 'CAD', formatted: 'CA$18.00' });
  assert.deepEqual(r.product?.variants[0]?.availability, { inStock: true, text: 'Limited availability' });
});

test('Open Graph product tags: sale price with the list price as originalPrice', () => {
  const r = extractProduct(F.OPEN_GRAPH_ONLY, 'https://atelier.example/apron?ref=1');
  assert.equal(r.source, 'opengraph');
  assert.deepEqual(r.product, {
    title: 'Linen Apron',
    brand: 'Atelier Nord',
    url: 'https://atelier.example/apron',
    description: 'Stonewashed linen apron with two pockets.',
    variants: [{ sku: 'AN-APRON-1', price: { amount: 36, currency: 'EUR', formatted: '€36.00' }, sale: { originalPrice: { amount: 45, currency: 'EUR', formatted: '€45.00' } }, availability: { inStock: true, text: 'In stock' }, images: [{ url: 'https://atelier.example/apron.jpg' }] }],
  });
});

test('no product data → null with a warning (also with other JSON-LD on the page)', () => {
  for (const html of [F.NO_PRODUCT, F.ARTICLE_WITH_LD, '<p>not even html', '']) {
    assert.deepEqual(extractProduct(html, 'https://x.example/'), { product: null, warning: NO_PRODUCT_WARNING });
  }
});

test('broken JSON-LD blocks are skipped, availability is always present', () => {
  const html = `<script type="application/ld+json">{"@type": "Product", "name": "Broken",</script>
<script type="application/ld+json">{"@type": "Product", "name": "Plain Tee", "offers": {"@type": "AggregateOffer", "lowPrice": "1.299,00", "priceCurrency": "eur"}}</script>`;
  const r = extractProduct(html, 'https://x.example/tee');
  assert.deepEqual(r.product?.variants, [{ title: 'Plain Tee', price: { amount: 1299, currency: 'EUR', formatted: '€1,299.00' }, availability: { inStock: false, text: 'Unknown' } }]);
});
