import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extractMenu, NO_MENU_WARNING } from './index';
import * as F from './fixtures/menu';

test('JSON-LD (an ordering platform): merchant, sections flattened in order, prices, diets, allergens, calories, add-ons, availability', { timeout: 30_000 }, () => {
  const r = extractMenu(F.ORDERING_JSONLD, 'https://lume.example/order');
  assert.equal(r.source, 'json-ld');
  const m = r.menu!;
  assert.equal(m.isMenu, true);
  assert.equal(m.confidence, 0.95);
  assert.deepEqual(m.merchant, { name: 'Trattoria Lume', type: 'restaurant', location: { streetAddress: '12 Harbour St', addressLocality: 'Portland', addressRegion: 'ME', postalCode: '04101', addressCountry: 'US' } });
  assert.equal(m.currency, 'USD');
  assert.deepEqual(m.sections.map((s) => s.name), ['Antipasti', 'Pizze', 'Pizze › Gluten-free', 'Wine']);
  const [burrata, fritto] = m.sections[0]!.items;
  assert.deepEqual(burrata, {
    id: 'item-101', name: 'Burrata', description: 'Heirloom tomato, basil oil. Contains: milk.',
    images: [{ url: 'https://lume.example/img/burrata.jpg' }],
    price: { amount: 14, currency: 'USD', formatted: '$14.00' },
    availability: { inStock: true }, dietary: ['vegetarian'], category: 'food', subcategory: null,
    allergens: ['milk'], mealPeriods: ['dinner'], optionGroups: [], identifiers: { merchantItemId: 'item-101' }, sourceUrl: 'https://lume.example/order',
  });
  assert.deepEqual(fritto!.availability, { inStock: false, text: 'Sold out' });
  assert.equal(fritto!.calories, 620);
  assert.deepEqual(fritto!.allergens, ['wheat', 'shellfish', 'mollusc']);
  assert.equal(fritto!.id, 's1-i2');
  const margherita = m.sections[1]!.items[0]!;
  assert.equal(margherita.category, 'food');
  assert.deepEqual(margherita.optionGroups, [{ name: 'Extras', role: 'modifier', options: [{ name: 'Nduja', price: { amount: 3, currency: 'USD', formatted: '$3.00' } }, { name: 'Extra basil' }] }]);
  assert.deepEqual(m.sections[2]!.items[0]!.dietary, ['gluten_free']);
  assert.deepEqual([m.sections[3]!.items[0]!.category, m.sections[3]!.items[0]!.subcategory], ['drink', 'wine']);
});

test('microdata: the same shape, prices from `content`, the café as merchant', { timeout: 30_000 }, () => {
  const r = extractMenu(F.MICRODATA_MENU, 'https://birke.example/karte');
  assert.equal(r.source, 'microdata');
  assert.deepEqual(r.menu!.merchant, { name: 'Café Birke', type: 'cafe_or_coffee_shop' });
  assert.equal(r.menu!.currency, 'EUR');
  assert.deepEqual(r.menu!.sections[0]!.items.map((i) => [i.name, i.price?.amount, i.dietary]), [['Birchermüsli', 7.9, ['vegetarian']], ['Rührei', 9.5, []]]);
  assert.deepEqual(r.menu!.sections[0]!.items[0]!.mealPeriods, []);
});

test('visible text (a restaurant theme): headings are sections, priced lines items, the next line a description', { timeout: 30_000 }, () => {
  const r = extractMenu(F.THEME_TEXT_MENU, 'https://copperkettle.example/menu');
  assert.equal(r.source, 'text');
  const m = r.menu!;
  assert.equal(m.confidence, 0.6);
  assert.deepEqual(m.merchant, { name: 'The Copper Kettle' });
  assert.equal(m.currency, 'GBP');
  assert.deepEqual(m.sections.map((s) => [s.name, s.items.map((i) => `${i.name} ${i.price?.formatted}`)]), [
    ['Starters', ['Soup of the day £6.50', 'Halloumi fries £7.00', 'Chicken wings £8.25']],
    ['Mains', ['Fish & chips £15.95', 'Vegan burger £13.50']],
    ['Drinks', ['House lemonade £3.20', 'Pale ale (pint) £5.40']],
  ]);
  const [, halloumi, wings] = m.sections[0]!.items;
  assert.equal(halloumi!.description, 'Pomegranate, mint yoghurt (V). Contains: milk.');
  assert.deepEqual([halloumi!.dietary, halloumi!.allergens, halloumi!.category], [['vegetarian'], ['milk'], 'food']);
  assert.equal(wings!.description, 'hot or BBQ, 450 kcal');
  assert.equal(wings!.calories, 450);
  const [fish, burger] = m.sections[1]!.items;
  assert.equal(fish!.description, 'Mushy peas, tartare sauce');
  assert.deepEqual([burger!.dietary, burger!.availability], [['vegan'], { inStock: false, text: 'Sold out' }]);
  assert.deepEqual(m.sections[2]!.items.map((i) => i.subcategory), ['non_alcoholic', 'beer']);
  // The footer's "Gift vouchers from £10.00" and the nav are not menu items.
  assert.ok(!m.sections.flatMap((s) => s.items).some((i) => /voucher|gift/i.test(i.name)));
});

test('fail-closed: a shop listing and a page with two prices give no menu, with the warning', { timeout: 30_000 }, () => {
  for (const html of [F.SHOP_LISTING, F.SHORT_MENU_MENTION, '<html><body><p>Hello</p></body></html>']) {
    const r = extractMenu(html, 'https://x.example/');
    assert.equal(r.menu, undefined);
    assert.equal(r.warning, NO_MENU_WARNING);
  }
});

test('deterministic: the same page gives the same menu', { timeout: 30_000 }, () => {
  assert.deepEqual(extractMenu(F.THEME_TEXT_MENU, 'https://copperkettle.example/menu'), extractMenu(F.THEME_TEXT_MENU, 'https://copperkettle.example/menu'));
});
