import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { SEARXNG_JSON_DISABLED } from '@wds/search';
import { call, html, namespaceFor, startFakeSearxng, startFixtureSite, startStack, type FakeSearxng, type FixtureSite, type Stack } from '@wds/test-utils';

// POST /v2/search through the official JS SDK against the real stack: the own index (pages the
// deployment stored, in several languages) and SearXNG (a local server speaking its JSON API,
// behind a second API process of the same stack).
let stack: Stack;
let site: FixtureSite;
let searx: FakeSearxng;
let fc: Firecrawl;
let fcSearx: Firecrawl;
let searxApi: string;

const page = (lang: string | null, title: string, body: string, head = '') =>
  html(`<!doctype html><html${lang ? ` lang="${lang}"` : ''}><head><title>${title}</title>${head}</head><body><main>${body}</main></body></html>`);

const PAGES = {
  // The query word in the title (and once in the body) …
  '/en/kettles': page('en-GB', 'Electric kettles compared', '<h1>Choosing a kettle</h1><p>We boiled water in twelve electric kettles to see which one is quickest.</p>'),
  // … ranks above a page that only mentions it in its body, many times.
  '/en/teapots': page('en', 'Teapots of the world', '<h1>Brewing tea</h1><p>A teapot is not a kettle. Heat water in a kettle, any kettle, then pour it over the leaves; the kettle matters less than the tea.</p>'),
  '/en/boiling': page('en', 'Physics notes', '<h1>Phase changes</h1><p>Boiling water at altitude takes longer. Water that is boiling stays at one temperature.</p>'),
  '/en/water-boiling': page('en', 'Camping tips', '<h1>Outdoors</h1><p>Carry water. Boiling is the safest way to treat it before drinking.</p>'),
  '/de/wasserkocher': page('de', 'Wasserkocher im Test', '<h1>Die besten Geräte</h1><p>Unsere Wasserkocher kochen das Wasser in zwei Minuten.</p>'),
  '/fr/bouilloire': page('fr', 'Bouilloires électriques', '<h1>Guide</h1><p>Les bouilloires chauffent l’eau rapidement.</p>'),
  '/en/news': page(
    'en',
    'Kettle recall announced',
    '<h1>Recall</h1><p>A manufacturer recalled a kettle model after reports of faulty switches.</p>',
    '<meta property="article:published_time" content="2026-11-20T10:00:00Z"><meta property="og:image" content="https://img.example/recall.jpg">',
  ),
  '/secret/zdr': page('en', 'Zanzibar confidential kettle', '<p>Zanzibar appears only on a page scraped with zero data retention.</p>'),
  '/other/team': page('en', 'Quokka handbook', '<p>Quokka facts that only the other team stored.</p>'),
};

before(async () => {
  site = await startFixtureSite(PAGES);
  searx = await startFakeSearxng({
    corpus: {
      general: [
        { url: 'https://example.com/kettle-review', title: 'Kettle review', content: 'The best kettle of the year.' },
        { url: 'https://github.com/acme/kettle', title: 'acme/kettle', content: 'A kettle library on GitHub.' },
        { url: 'https://papers.example/kettle.pdf', title: 'Kettle thermodynamics (PDF)', content: 'A kettle paper.' },
        { url: 'https://arxiv.org/abs/1234.5678', title: 'On kettle efficiency', content: 'Kettle efficiency measured.' },
        { url: 'https://blog.example/kettles', title: 'Kettles blog', content: 'Kettle stories.', publishedDate: '2020-01-01T00:00:00Z' },
      ],
      news: [{ url: 'https://news.example/kettle', title: 'Kettle news', content: 'Kettle prices rise.', publishedDate: '2026-11-01T08:00:00Z', thumbnail_src: 'https://news.example/k.jpg' }],
      images: [{ url: 'https://photos.example/kettle', title: 'A kettle', img_src: 'https://photos.example/kettle.jpg', resolution: '1024x768' }],
    },
  });
  stack = await startStack({ namespace: namespaceFor(import.meta.url) });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  searxApi = (await stack.addApi({ SEARXNG_ENDPOINT: searx.url, SEARXNG_ENGINES: 'duckduckgo,brave' })).url!;
  fcSearx = new Firecrawl({ apiKey: stack.apiKey, apiUrl: searxApi });

  // The index is filled the way users fill it: a batch scrape (crawl pages' store) and single scrapes.
  const urls = Object.keys(PAGES).filter((p) => !p.startsWith('/secret') && !p.startsWith('/other') && p !== '/en/news').map((p) => site.url(p));
  const batch = await fc.batchScrape(urls, { options: { formats: ['markdown'], maxAge: 0 }, pollInterval: 1 } as never);
  assert.equal(batch.status, 'completed');
  await fc.scrape(site.url('/en/news'), { formats: ['markdown'], maxAge: 0 });
});
after(async () => {
  await stack?.stop();
  await site?.close();
  await searx?.close();
});
beforeEach(() => searx.reset());

const urlsOf = (rows: { url?: string }[] | undefined) => (rows ?? []).map((r) => r.url);

describe('the own index (no provider configured)', () => {
  test('a title match ranks above body matches; results carry title, description, position', async () => {
    const r = await fc.search('kettle');
    const web = r.web as { url: string; title: string; description: string; position: number }[];
    assert.equal(web[0]!.url, site.url('/en/kettles'), 'the page with the word in its title comes first');
    assert.ok(urlsOf(web).includes(site.url('/en/teapots')), 'the body-only page is found too');
    assert.ok(urlsOf(web).indexOf(site.url('/en/kettles')) < urlsOf(web).indexOf(site.url('/en/teapots')));
    assert.equal(web[0]!.title, 'Electric kettles compared');
    assert.match(web[0]!.description, /kettle/i, 'the description is the matching passage');
    assert.deepEqual(web.map((w) => w.position), web.map((_, i) => i + 1));
    assert.equal(r.news, undefined, 'only the requested sources are answered');
    assert.equal(r.images, undefined);
  });

  test('language-aware: a German and a French query match inflected forms in pages of that language', async () => {
    const de = await fc.search('Wasserkochern');
    assert.deepEqual(urlsOf(de.web as never), [site.url('/de/wasserkocher')]);
    const fr = await fc.search('bouilloire');
    assert.deepEqual(urlsOf(fr.web as never), [site.url('/fr/bouilloire')]);
    // English stemming: "kettles" finds the singular.
    assert.ok(urlsOf((await fc.search('kettles')).web as never).includes(site.url('/en/teapots')));
  });

  test('phrase queries and -word exclusions (websearch syntax)', async () => {
    const phrase = urlsOf((await fc.search('"boiling water"')).web as never);
    assert.ok(phrase.includes(site.url('/en/boiling')), 'the words side by side match');
    assert.ok(!phrase.includes(site.url('/en/water-boiling')), 'the words apart do not');
    const loose = urlsOf((await fc.search('boiling water')).web as never);
    assert.ok(loose.includes(site.url('/en/water-boiling')), 'without quotes both pages match');
    const excluded = urlsOf((await fc.search('kettle -teapot')).web as never);
    assert.ok(excluded.includes(site.url('/en/kettles')));
    assert.ok(!excluded.includes(site.url('/en/teapots')), '-teapot drops the page that mentions teapots');
  });

  test('news and images sources: articles with a publication time, pages with an og:image', async () => {
    const r = await fc.search('kettle', { sources: ['web', { type: 'news' }, 'images'] });
    const news = r.news as { url: string; date?: string; imageUrl?: string; snippet?: string }[];
    assert.deepEqual(urlsOf(news), [site.url('/en/news')]);
    assert.equal(news[0]!.date, '2026-11-20T10:00:00.000Z');
    assert.match(news[0]!.snippet!, /recall/i);
    const images = r.images as { url: string; imageUrl: string }[];
    assert.deepEqual(images.map((i) => i.imageUrl), ['https://img.example/recall.jpg']);
    assert.ok((r.web as unknown[]).length >= 3);
  });

  test('limit is per source; tbs filters web by time; includeDomains / excludeDomains', async () => {
    const r = await fc.search('kettle', { limit: 1, sources: ['web', 'news'] });
    assert.equal((r.web as unknown[]).length, 1);
    assert.equal((r.news as unknown[]).length, 1);
    // Stored just now: the past hour has them, a range in 2020 does not.
    assert.ok((await fc.search('kettle', { tbs: 'qdr:h' })).web!.length > 0);
    assert.equal((await fc.search('kettle', { tbs: 'cdr:1,cd_min:1/1/2020,cd_max:12/31/2020' })).web!.length, 0);
    assert.equal((await fc.search('kettle', { excludeDomains: ['127.0.0.1'] })).web!.length, 0);
    assert.ok((await fc.search('kettle', { includeDomains: ['127.0.0.1'] })).web!.length > 0);
  });

  test('each page once (a page stored twice is one result, its freshest copy)', async () => {
    await fc.scrape(site.url('/en/kettles'), { formats: ['markdown'], maxAge: 0 });
    const web = urlsOf((await fc.search('kettle')).web as never);
    assert.equal(web.filter((u) => u === site.url('/en/kettles')).length, 1);
  });

  test('credits: 2 per 10 results, in the response and the ledger', async () => {
    const res = await call(stack, 'POST', '/v2/search', { query: 'kettle', limit: 20 });
    assert.equal(res.status, 200);
    const body = res.json as { id: string; creditsUsed: number; data: { web: unknown[] } };
    assert.equal(body.creditsUsed, 2 * Math.ceil(body.data.web.length / 10));
    const ledger = await stack.db.pool.query("SELECT amount FROM credit_ledger WHERE job_id = $1 AND entry = 'charge'", [body.id]);
    assert.deepEqual(ledger.rows.map((r) => r.amount), [body.creditsUsed]);
  });

  test('team isolation: another team finds none of these pages, and its own pages stay its own', async () => {
    const other = await stack.newTeam();
    const fcOther = new Firecrawl({ apiKey: other.apiKey, apiUrl: stack.url });
    assert.deepEqual((await fcOther.search('kettle')).web, []);
    await fcOther.scrape(site.url('/other/team'), { formats: ['markdown'], maxAge: 0 });
    assert.deepEqual(urlsOf((await fcOther.search('quokka')).web as never), [site.url('/other/team')]);
    assert.deepEqual((await fc.search('quokka')).web, [], 'the first team does not see it');
  });

  test('zero data retention pages are never indexed (scrape and batch)', async () => {
    const zdr = await stack.newTeam({ flags: { zeroDataRetention: true } });
    const fcZdr = new Firecrawl({ apiKey: zdr.apiKey, apiUrl: stack.url });
    await fcZdr.scrape(site.url('/secret/zdr'), { formats: ['markdown'], zeroDataRetention: true, maxAge: 0 } as never);
    await fcZdr.batchScrape([site.url('/secret/zdr')], { options: { formats: ['markdown'], zeroDataRetention: true, maxAge: 0 }, zeroDataRetention: true, pollInterval: 1 } as never);
    assert.deepEqual((await fcZdr.search('zanzibar')).web, []);
    const rows = await stack.db.pool.query("SELECT count(*)::int AS n FROM search_pages WHERE body ILIKE '%zanzibar%' OR title ILIKE '%zanzibar%'");
    assert.equal(rows.rows[0].n, 0);
  });

  test('scrapeOptions: every result is scraped (a batch job) and carries the document', async () => {
    const r = await fc.search('kettle', { limit: 3, scrapeOptions: { formats: ['markdown', 'links'] } });
    const web = r.web as { url: string; title: string; markdown?: string; links?: string[]; metadata?: { sourceURL?: string; statusCode?: number } }[];
    assert.equal(web.length, 3);
    for (const w of web) {
      assert.equal(typeof w.markdown, 'string', `${w.url} was scraped`);
      assert.ok(Array.isArray(w.links));
      assert.equal(w.metadata?.statusCode, 200);
      assert.equal(w.metadata?.sourceURL, w.url);
      assert.ok(w.title, 'the search fields stay');
    }
    const res = await call(stack, 'POST', '/v2/search', { query: 'kettle', limit: 2, scrapeOptions: { formats: ['markdown'] } });
    const body = res.json as { creditsUsed: number; data: { web: unknown[] } };
    assert.equal(body.creditsUsed, 2 + 2, '2 for the search, 1 per scraped page');
  });
});

describe('/v2/map search', () => {
  test('ranks from the own index: pages whose text matches come first, with their titles', async () => {
    // "brewing" is in one page's heading, in no URL: only the index can know.
    const r = await fc.map(site.url('/'), { search: 'brewing', sitemap: 'skip' } as never);
    const links = r.links as { url: string; title?: string }[];
    assert.equal(links[0]!.url, site.url('/en/teapots'));
    assert.equal(links[0]!.title, 'Teapots of the world');
    // Another team's map does not rank from this team's pages.
    const other = await stack.newTeam();
    const theirs = await new Firecrawl({ apiKey: other.apiKey, apiUrl: stack.url }).map(site.url('/'), { search: 'brewing', sitemap: 'skip' } as never);
    assert.ok(!(theirs.links as { url: string; title?: string }[]).some((l) => l.title === 'Teapots of the world'));
  });
});

describe('validation', () => {
  const bad = async (body: unknown, re: RegExp) => {
    const res = await call(stack, 'POST', '/v2/search', body);
    assert.equal(res.status, 400, res.text);
    const b = res.json as { success: boolean; error: string; details?: unknown };
    assert.equal(b.success, false);
    assert.match(JSON.stringify(b), re);
  };
  test('every field is checked: 400 with the field named, never a 500', async () => {
    await bad({}, /query/);
    await bad({ query: '   ' }, /query/);
    await bad({ query: 'x'.repeat(501) }, /500 characters/);
    await bad({ query: 'kettle', sources: ['videos'] }, /web', 'news' or 'images/);
    await bad({ query: 'kettle', sources: [{ type: 'maps' }] }, /sources/);
    await bad({ query: 'kettle', sources: [] }, /at least one source/);
    await bad({ query: 'kettle', sources: ['web', 'web'] }, /listed twice/);
    await bad({ query: 'kettle', categories: ['movies'] }, /github', 'research' or 'pdf/);
    await bad({ query: 'kettle', includeDomains: ['a.com'], excludeDomains: ['b.com'] }, /cannot both be specified/);
    await bad({ query: 'kettle', includeDomains: ['https://a.com/x'] }, /hostnames only/);
    await bad({ query: 'kettle', limit: 0 }, /limit/);
    await bad({ query: 'kettle', limit: 101 }, /limit/);
    await bad({ query: 'kettle', tbs: 'qdr:x' }, /qdr must be/);
    await bad({ query: 'kettle', tbs: 'cd_min:1/1/2020' }, /need cdr:1/);
    await bad({ query: 'kettle', tbs: 'cdr:1,cd_min:13/45/2020' }, /MM\/DD\/YYYY/);
    await bad({ query: 'kettle', country: 'USA' }, /country/);
    await bad({ query: 'kettle', timeout: 10 }, /timeout/);
    await bad({ query: 'kettle', bogus: 1 }, /bogus/);
    await bad({ query: 'kettle', scrapeOptions: { formats: ['nope'] } }, /formats/);
  });
  test("the alexandria source and domainTools get Firecrawl's 403 for a team without its catalogue", async () => {
    for (const body of [{ query: 'kettle', sources: ['web', 'alexandria'] }, { query: 'kettle', domainTools: true }]) {
      const res = await call(stack, 'POST', '/v2/search', body);
      assert.equal(res.status, 403);
      assert.equal((res.json as { error: string }).error, 'This endpoint is not enabled for this team.');
    }
  });
  test('enterprise ZDR search needs the team flag (403)', async () => {
    const res = await call(stack, 'POST', '/v2/search', { query: 'kettle', enterprise: ['zdr'] });
    assert.equal(res.status, 403);
    assert.equal((res.json as { code?: string }).code, 'ZDR_NOT_ENABLED');
  });
});

describe('SearXNG (SEARXNG_ENDPOINT set)', () => {
  test('web, news and images from its JSON API; engines and categories passed; limit per source', async () => {
    const r = await fcSearx.search('kettle', { sources: ['web', 'news', 'images'], limit: 3, country: 'DE' } as never);
    assert.deepEqual(urlsOf(r.web as never), ['https://example.com/kettle-review', 'https://github.com/acme/kettle', 'https://papers.example/kettle.pdf']);
    const w0 = (r.web as { title: string; description: string; position: number }[])[0]!;
    assert.deepEqual([w0.title, w0.description, w0.position], ['Kettle review', 'The best kettle of the year.', 1]);
    const news = r.news as { url: string; snippet: string; date: string; imageUrl: string }[];
    assert.deepEqual(news, [{ url: 'https://news.example/kettle', title: 'Kettle news', snippet: 'Kettle prices rise.', date: '2026-11-01T08:00:00.000Z', imageUrl: 'https://news.example/k.jpg', position: 1 }]);
    assert.deepEqual(r.images, [{ url: 'https://photos.example/kettle', title: 'A kettle', imageUrl: 'https://photos.example/kettle.jpg', imageWidth: 1024, imageHeight: 768, position: 1 }]);
    const web = searx.requests.find((q) => q.categories === 'general')!;
    assert.equal(web.format, 'json');
    assert.equal(web.engines, 'duckduckgo,brave');
    assert.equal(web.language, 'de-DE');
    assert.equal(web.safesearch, undefined, 'SearXNG keeps its default unless `safe` is set');
    // `safe` is in Firecrawl's API reference; the JS SDK does not send it, so raw HTTP.
    assert.equal((await call({ url: searxApi, apiKey: stack.apiKey }, 'POST', '/v2/search', { query: 'kettle', safe: true })).status, 200);
    assert.equal(searx.requests.at(-1)!.safesearch, '1');
    assert.equal(searx.requests.find((q) => q.categories === 'news')!.engines, undefined, 'engines apply to web only');
  });

  test('categories: github, research and pdf narrow web results and label them', async () => {
    const r = await fcSearx.search('kettle', { categories: ['github', 'pdf', { type: 'research' }] } as never);
    const web = r.web as { url: string; category?: string }[];
    assert.deepEqual(
      web.map((w) => [w.url, w.category]).sort(),
      [['https://arxiv.org/abs/1234.5678', 'research'], ['https://github.com/acme/kettle', 'github'], ['https://papers.example/kettle.pdf', 'pdf']],
    );
    assert.ok(searx.requests.some((q) => q.q === 'kettle site:github.com'));
    assert.ok(searx.requests.some((q) => q.q === 'kettle filetype:pdf'));
  });

  test('tbs: qdr becomes time_range; domains become site: operators and are enforced', async () => {
    await fcSearx.search('kettle', { tbs: 'qdr:w' });
    assert.equal(searx.requests[0]!.time_range, 'week');
    const r = await fcSearx.search('kettle', { excludeDomains: ['github.com', 'example.com'] });
    assert.ok(!urlsOf(r.web as never).some((u) => /github\.com|\/\/example\.com/.test(u!)));
    assert.match(searx.requests.at(-1)!.q!, /-site:github\.com -site:example\.com/);
  });

  test('failing engines are a warning, not an error', async () => {
    searx.enqueue({ results: [{ url: 'https://example.com/kettle-review', title: 'Kettle review', content: 'x' }], unresponsive: [['google', 'CAPTCHA'], ['bing', 'timeout']] });
    const res = await call({ url: searxApi, apiKey: stack.apiKey }, 'POST', '/v2/search', { query: 'kettle' });
    assert.equal(res.status, 200);
    const b = res.json as { warning?: string; data: { web: unknown[] } };
    assert.equal(b.data.web.length, 1);
    assert.match(b.warning!, /google' failed: CAPTCHA/);
    assert.match(b.warning!, /bing' failed: timeout/);
  });

  test('403 (json not in search.formats) is an error that says exactly that', async () => {
    searx.jsonEnabled = false;
    const res = await call({ url: searxApi, apiKey: stack.apiKey }, 'POST', '/v2/search', { query: 'kettle' });
    assert.equal(res.status, 502);
    assert.equal((res.json as { error: string }).error, SEARXNG_JSON_DISABLED);
    assert.match(SEARXNG_JSON_DISABLED, /search\.formats/);
    assert.equal(searx.requests.length, 1, 'a 403 is not retried');
    await assert.rejects(fcSearx.search('kettle'), /search\.formats/);
  });

  test('5xx answers are retried; a slow SearXNG runs into the timeout (408)', async () => {
    searx.enqueue({ status: 502 }, { status: 503 });
    const ok = await call({ url: searxApi, apiKey: stack.apiKey }, 'POST', '/v2/search', { query: 'kettle' });
    assert.equal(ok.status, 200);
    assert.equal(searx.requests.filter((q) => q.pageno === '1').length, 3, 'two failures, then the answer');
    assert.ok((ok.json as { data: { web: unknown[] } }).data.web.length > 0);

    searx.reset();
    searx.enqueue({ delayMs: 5_000 });
    const slow = await call({ url: searxApi, apiKey: stack.apiKey }, 'POST', '/v2/search', { query: 'kettle', timeout: 1_000 });
    assert.equal(slow.status, 408);
    assert.match((slow.json as { error: string }).error, /timed out/);
  });
});
