import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { MENU_FIXTURES } from '@wds/product/fixtures';
import { call, html, namespaceFor, promptText, startFakeOpenAI, startFixtureSite, startStack, type FakeChatRequest, type FakeOpenAI, type FixtureSite, type Stack } from '@wds/test-utils';

// The formats built last: `attributes` and `menu` (deterministic, from the page) and the
// deprecated `query` (the model step), through the official JS SDK on the real stack, with a
// local OpenAI-compatible model for `query`.
let stack: Stack;
let site: FixtureSite;
let model: FakeOpenAI;
let fc: Firecrawl;

const CARS = `<html><head><title>Fleet</title></head><body><main><h1>Our fleet</h1>
<ul><li><a class="car" href="/cars/1" data-vehicle-name="Model &amp; Co A">A</a></li>
<li><a class="car" href="/cars/2" data-vehicle-name="Roadster B">B</a></li>
<li><a class="car" href="/cars/3">C (no name)</a></li></ul>
<img src="/img/a.png" alt="A"><img src="https://cdn.example/b.png" alt="">
</main><footer><a class="car" href="/cars/4" data-vehicle-name="Footer Van">D</a></footer></body></html>`;

const PRODUCT = '<html><head><title>Blue Kettle</title></head><body><main><h1>Blue Kettle</h1><p>The Blue Kettle boils 1.7 litres in three minutes.</p><p>Price: 49.90 EUR. In stock.</p></main></body></html>';

const kindOf = (r: FakeChatRequest) => {
  const system = String(r.messages[0]?.content ?? '');
  return system.includes('answer questions') ? 'question' : system.includes('select source text') ? 'highlights' : 'other';
};

before(async () => {
  model = await startFakeOpenAI({ handler: (r) => ({ content: kindOf(r) === 'highlights' ? 'Price: 49.90 EUR. In stock.' : 'It costs 49.90 EUR.' }) });
  site = await startFixtureSite({
    '/cars': html(CARS),
    '/menu': html(MENU_FIXTURES.THEME_TEXT_MENU),
    '/order': html(MENU_FIXTURES.ORDERING_JSONLD),
    '/shop': html(MENU_FIXTURES.SHOP_LISTING),
    '/kettle': html(PRODUCT),
  });
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { ...model.env } });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
  await model?.close();
});
beforeEach(() => model.reset());

describe('attributes', { timeout: 120_000 }, () => {
  test("each selector's attribute values, in document order, from the whole page; no model, 1 credit", async () => {
    const doc = await fc.scrape(site.url('/cars'), {
      formats: ['markdown', { type: 'attributes', selectors: [{ selector: 'a.car', attribute: 'data-vehicle-name' }, { selector: 'img', attribute: 'src' }, { selector: 'table td', attribute: 'id' }] }],
    });
    assert.deepEqual(doc.attributes, [
      { selector: 'a.car', attribute: 'data-vehicle-name', values: ['Model & Co A', 'Roadster B', 'Footer Van'] },
      { selector: 'img', attribute: 'src', values: ['/img/a.png', 'https://cdn.example/b.png'] },
      { selector: 'table td', attribute: 'id', values: [] },
    ]);
    assert.match(doc.markdown ?? '', /Our fleet/);
    assert.equal(doc.metadata!.creditsUsed, 1);
    assert.equal(model.chatRequests().length, 0);
  });
  test('a cache hit reads the selectors from the cached page (other selectors, same page: no new fetch)', async () => {
    const url = site.url('/cars');
    const hits = site.hits('/cars');
    const doc = await fc.scrape(url, { formats: [{ type: 'attributes', selectors: [{ selector: 'a.car', attribute: 'href' }] }] });
    assert.equal(doc.metadata!.cacheState, 'hit');
    assert.equal(site.hits('/cars'), hits);
    assert.deepEqual(doc.attributes, [{ selector: 'a.car', attribute: 'href', values: ['/cars/1', '/cars/2', '/cars/3', '/cars/4'] }]);
  });
  test('an unparseable selector, or a format without selectors → 400 before anything is fetched', async () => {
    const hits = site.hits('/cars');
    const bad = await call(stack, 'POST', '/v2/scrape', { url: site.url('/cars'), formats: [{ type: 'attributes', selectors: [{ selector: 'a[', attribute: 'href' }] }] });
    assert.equal(bad.status, 400);
    assert.match(bad.json.error, /attributes selector/);
    assert.equal((await call(stack, 'POST', '/v2/scrape', { url: site.url('/cars'), formats: [{ type: 'attributes', selectors: [] }] })).status, 400);
    assert.equal((await call(stack, 'POST', '/v2/scrape', { url: site.url('/cars'), formats: ['attributes'] })).status, 400);
    assert.equal(site.hits('/cars'), hits);
  });
});

describe('menu', { timeout: 120_000 }, () => {
  test("a restaurant theme's page: sections and priced items from its text", async () => {
    const doc = await fc.scrape(site.url('/menu'), { formats: ['menu'] });
    const menu = doc.menu!;
    assert.equal(menu.isMenu, true);
    assert.equal(menu.currency, 'GBP');
    assert.deepEqual(menu.sections.map((s) => s.name), ['Starters', 'Mains', 'Drinks']);
    assert.deepEqual(menu.sections[0]!.items.map((i) => [i.name, i.price?.amount]), [['Soup of the day', 6.5], ['Halloumi fries', 7], ['Chicken wings', 8.25]]);
    assert.equal(menu.sourceUrl, site.url('/menu'));
    assert.equal(doc.warning, undefined);
    // A second request is a cache hit served from the stored outputs: the same menu.
    const again = await fc.scrape(site.url('/menu'), { formats: ['menu'] });
    assert.equal(again.metadata!.cacheState, 'hit');
    assert.deepEqual(again.menu, menu);
  });
  test('structured data first (JSON-LD menu of an ordering platform); batch scrape pages get it too', async () => {
    const doc = await fc.scrape(site.url('/order'), { formats: ['menu'] });
    assert.equal(doc.menu!.merchant.name, 'Trattoria Lume');
    assert.equal(doc.menu!.confidence, 0.95);
    const job = await fc.batchScrape([site.url('/order'), site.url('/shop')], { options: { formats: ['menu'] }, pollInterval: 1 });
    const byUrl = new Map(job.data.map((d) => [d.metadata!.sourceURL, d]));
    assert.equal(byUrl.get(site.url('/order'))!.menu!.sections.length, 4);
    assert.equal(byUrl.get(site.url('/shop'))!.menu, undefined);
  });
  test('a page that is not a menu: no menu object, a warning (fail-closed)', async () => {
    const doc = await fc.scrape(site.url('/shop'), { formats: ['markdown', 'menu'] });
    assert.equal(doc.menu, undefined);
    assert.match(doc.warning ?? '', /No menu found/);
  });
});

describe('query (deprecated upstream)', { timeout: 120_000 }, () => {
  test('mode freeform (the default) answers the prompt from the page in data.answer', async () => {
    const doc = await fc.scrape(site.url('/kettle'), { formats: [{ type: 'query', prompt: 'How much is it?' }] });
    assert.equal(doc.answer, 'It costs 49.90 EUR.');
    assert.equal(doc.markdown, undefined, 'markdown was only the model’s input');
    const [req] = model.chatRequests();
    assert.equal(kindOf(req!), 'question');
    assert.match(promptText(req!), /How much is it\?/);
    assert.match(promptText(req!), /boils 1\.7 litres/);
    assert.equal(doc.metadata!.creditsUsed, 5);
  });
  test('mode directQuote returns the page’s own text, in data.answer', async () => {
    const doc = await fc.scrape(site.url('/kettle'), { formats: [{ type: 'query', prompt: 'price', mode: 'directQuote' }] });
    assert.equal(doc.answer, 'Price: 49.90 EUR. In stock.');
    assert.equal(kindOf(model.chatRequests()[0]!), 'highlights');
  });
  test('question and query together → 400 (both answer in data.answer)', async () => {
    const r = await call(stack, 'POST', '/v2/scrape', { url: site.url('/kettle'), formats: [{ type: 'question', question: 'a' }, { type: 'query', prompt: 'b' }] });
    assert.equal(r.status, 400);
    assert.match(JSON.stringify(r.json.details), /one of 'question' and 'query'/);
  });
});
