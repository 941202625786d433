import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startFakeSearxng, type FakeSearxng } from '@wds/test-utils';
import { CombinedProvider } from './combined';
import { runSearch } from './index';
import { SearxngProvider } from './searxng';
import type { SearchProvider, SearchQuery, SearchResults } from './types';

// The providers against a local SearXNG speaking its JSON API (no database: the own index is
// covered by apps/api/src/e2e/search.test.ts).
let searx: FakeSearxng;
before(async () => {
  searx = await startFakeSearxng({
    corpus: {
      general: Array.from({ length: 25 }, (_, i) => ({ url: `https://site${i}.example/kettle`, title: `Kettle ${i}`, content: `kettle number ${i}` })),
    },
  });
});
after(() => searx.close());

const query = (o: Partial<SearchQuery> = {}): SearchQuery => ({ query: 'kettle', limit: 10, sources: ['web'], categories: [], highlights: true, teamId: 't', ...o });
const signal = () => new AbortController().signal;

test('SearXNG: result pages are read until the limit, positions from 1', async () => {
  searx.reset();
  const r = await new SearxngProvider({ endpoint: searx.url }).search(query({ limit: 15 }), signal());
  assert.equal(r.web!.length, 15);
  assert.deepEqual(r.web!.map((w) => w.position), Array.from({ length: 15 }, (_, i) => i + 1));
  assert.deepEqual(searx.requests.map((q) => q.pageno), ['1', '2']);
});

test('SearXNG: retries stop at the deadline (408)', async () => {
  searx.reset();
  searx.enqueue({ status: 503 }, { status: 503 }, { status: 503 });
  const p = new SearxngProvider({ endpoint: searx.url, retries: 5, backoffMs: 400 });
  await assert.rejects(runSearch(p, query(), 600), (e: Error & { kind?: string }) => e.kind === 'REQUEST_TIMEOUT');
  assert.ok(searx.requests.length <= 3, `${searx.requests.length} attempts within 600 ms`);
});

test('SearXNG: an unreachable endpoint fails with 502 after the retries, naming the cause', async () => {
  const p = new SearxngProvider({ endpoint: 'http://127.0.0.1:9', retries: 1, backoffMs: 10 });
  await assert.rejects(p.search(query(), signal()), (e: Error & { kind?: string }) => e.kind === 'BAD_GATEWAY' && /after 2 attempts/.test(e.message));
});

test('both: the first provider first, URLs once, a failing provider is a warning', async () => {
  searx.reset();
  const own: SearchProvider = {
    name: 'index',
    search: async (): Promise<SearchResults> => ({ web: [{ url: 'https://site3.example/kettle/', title: 'Own copy', description: 'd', position: 1 }, { url: 'https://mine.example/', title: 'Mine', description: 'm', position: 2 }], warnings: [] }),
  };
  const r = await new CombinedProvider([own, new SearxngProvider({ endpoint: searx.url })]).search(query({ limit: 5 }), signal());
  assert.deepEqual(r.web!.map((w) => w.url), ['https://site3.example/kettle/', 'https://mine.example/', 'https://site0.example/kettle', 'https://site1.example/kettle', 'https://site2.example/kettle']);
  assert.deepEqual(r.web!.map((w) => w.position), [1, 2, 3, 4, 5]);

  const broken: SearchProvider = { name: 'index', search: async () => Promise.reject(new Error('database down')) };
  const r2 = await new CombinedProvider([broken, new SearxngProvider({ endpoint: searx.url })]).search(query(), signal());
  assert.equal(r2.web!.length, 10);
  assert.match(r2.warnings.join(' '), /'index' failed: database down/);
});
