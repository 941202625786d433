import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { createKey, revokeKey } from '@wds/db';
import { activityResults, call, namespaceFor, startCrawlSite, startStack, type CrawlSite, type Stack } from '@wds/test-utils';
import { WebSocket } from 'ws';

// Job mechanics of crawls and batches: pagination, cancel, webhooks, watcher, batch scrape, map.
const SECRET = 'whsec-test-secret';
let stack: Stack;
let site: CrawlSite;
let fc: Firecrawl;
let receiver: Server;
let receiverUrl = '';
const received: { headers: Record<string, string | string[] | undefined>; raw: string; body: any }[] = [];

before(async () => {
  site = await startCrawlSite({ genPages: 60, slowPages: 200, slowMs: 400, fanPages: 61, fanDelayMs: 1_000 });
  receiver = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      received.push({ headers: req.headers, raw, body: JSON.parse(raw) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: { WDS_HOST_OVERRIDES: site.hostOverrides, WDS_STATUS_PAGE_BYTES: '4000', WDS_WEBHOOK_SECRET: SECRET },
  });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
  receiver?.close();
});

async function waitDone(id: string, kind: 'crawl' | 'batch' = 'crawl') {
  for (;;) {
    const s = kind === 'crawl' ? await fc.getCrawlStatus(id, { autoPaginate: false }) : await fc.getBatchScrapeStatus(id, { autoPaginate: false });
    if (s.status !== 'scraping') return s;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('status pagination', () => {
  test('next pages through every document exactly once; the SDK aggregates them', async () => {
    const { id } = await fc.startCrawl(site.url('/gen/0'), { limit: 60, sitemap: 'skip', crawlEntireDomain: true, includePaths: ['^/gen/'] } as never);
    await waitDone(id);
    const first = await call(stack, 'GET', `/v2/crawl/${id}`);
    assert.equal(first.json.status, 'completed');
    assert.equal(first.json.completed, 60);
    assert.ok(first.json.next, 'a small page bound forces pagination');
    assert.ok(first.json.data.length < 60);
    const seen: string[] = [];
    let next: string | null = `${stack.url}/v2/crawl/${id}`;
    while (next) {
      const r = await fetch(next, { headers: { authorization: `Bearer ${stack.apiKey}` } });
      const body = (await r.json()) as { data: { metadata: { sourceURL: string } }[]; next: string | null };
      seen.push(...body.data.map((d) => d.metadata.sourceURL));
      next = body.next;
    }
    assert.equal(seen.length, 60);
    assert.equal(new Set(seen).size, 60);
    const all = await fc.getCrawlStatus(id);
    assert.equal(all.data.length, 60);
    assert.equal(all.next, null);
    assert.equal((await call(stack, 'GET', `/v2/crawl/${id}?skip=-1`)).status, 400);
  });
});

describe('frontier window', () => {
  test('a crawl that starts from one URL puts every batch of its window to work', async () => {
    // maxConcurrency 20: a window of two batches of ten pages at a time, started together while the
    // frontier holds only the start URL. The batch that finds nothing waits for the other's links
    // (60 leaves, each answering after 1 s) instead of ending and leaving the job at ten pages at a time.
    const { id } = await fc.startCrawl(site.url('/fan/0'), { limit: 61, sitemap: 'skip', maxConcurrency: 20, crawlEntireDomain: true, includePaths: ['^/fan/'] } as never);
    const s = await waitDone(id);
    assert.equal(s.status, 'completed');
    assert.equal(s.completed, 61);
    const batches = (await activityResults(namespaceFor(import.meta.url), `crawl-${id}`, 'processBatch')) as { claimed: number }[];
    assert.ok(batches.length >= 2, `batches: ${JSON.stringify(batches)}`);
    assert.ok(batches[0]!.claimed > 0 && batches[1]!.claimed > 0, `the first two batches claimed ${batches[0]?.claimed} and ${batches[1]?.claimed} pages`);
  });
});

describe('cancel', () => {
  test('DELETE stops the crawl: status cancelled, no fetch after the grace period', async () => {
    const { id } = await fc.startCrawl(site.url('/slow/0'), { limit: 200, sitemap: 'skip', maxConcurrency: 2, crawlEntireDomain: true, includePaths: ['^/slow/'] } as never);
    for (let i = 0; i < 100 && site.totalHits('/slow/') < 4; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await fc.cancelCrawl(id), true);
    const s = await fc.getCrawlStatus(id, { autoPaginate: false });
    assert.equal(s.status, 'cancelled');
    await new Promise((r) => setTimeout(r, 2_500)); // grace: in-flight fetches end
    const afterGrace = site.totalHits('/slow/');
    await new Promise((r) => setTimeout(r, 3_000));
    assert.equal(site.totalHits('/slow/'), afterGrace, 'no new fetch after the grace period');
    assert.ok(afterGrace < 60, `the crawl stopped early (${afterGrace} fetches)`);
    const again = await call(stack, 'DELETE', `/v2/crawl/${id}`);
    assert.equal(again.status, 200, 'cancelling a cancelled crawl is idempotent');
    const active = await fc.getActiveCrawls();
    assert.ok(!active.crawls.some((c) => c.id === id));
  });

  test('DELETE of a finished crawl is 409', async () => {
    const { id } = await fc.startCrawl(site.url('/docs/'), { limit: 3, sitemap: 'skip' } as never);
    await waitDone(id);
    const r = await call(stack, 'DELETE', `/v2/crawl/${id}`);
    assert.equal(r.status, 409);
    assert.equal(r.json.success, false);
  });
});

describe('webhooks', () => {
  test('started, page and completed events in order, signed, with metadata; events filter respected', async () => {
    const { id } = await fc.startCrawl(site.url('/docs/'), {
      sitemap: 'skip',
      limit: 10,
      webhook: { url: receiverUrl, headers: { 'X-Custom': 'yes' }, metadata: { run: 'r1' } },
    } as never);
    await waitDone(id);
    for (let i = 0; i < 150 && !received.some((r) => r.body.id === id && r.body.type === 'crawl.completed'); i++) await new Promise((r) => setTimeout(r, 100));
    const mine = received.filter((r) => r.body.id === id);
    const types = mine.map((r) => r.body.type);
    assert.equal(types[0], 'crawl.started');
    assert.equal(types.at(-1), 'crawl.completed');
    assert.equal(types.filter((t) => t === 'crawl.page').length, 4);
    for (const r of mine) {
      assert.equal(r.headers['x-custom'], 'yes');
      assert.deepEqual(r.body.metadata, { run: 'r1' });
      const expected = `sha256=${createHmac('sha256', SECRET).update(r.raw).digest('hex')}`;
      assert.equal(r.headers['x-firecrawl-signature'], expected);
    }
    const pageEvent = mine.find((r) => r.body.type === 'crawl.page')!;
    assert.ok(pageEvent.body.data[0].markdown !== undefined && pageEvent.body.data[0].metadata.sourceURL);

    const filtered = await fc.startCrawl(site.url('/docs/'), { sitemap: 'skip', limit: 10, webhook: { url: receiverUrl, events: ['completed'] } } as never);
    await waitDone(filtered.id);
    for (let i = 0; i < 150 && !received.some((r) => r.body.id === filtered.id); i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(received.filter((r) => r.body.id === filtered.id).map((r) => r.body.type), ['crawl.completed']);
  });

  test('a failing receiver never blocks the crawl and is retried', async () => {
    let calls = 0;
    const flaky = createServer((_q, res) => {
      calls++;
      res.writeHead(calls < 3 ? 500 : 200).end();
    });
    await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/`;
    const { id } = await fc.startCrawl(site.url('/docs/b'), { sitemap: 'skip', limit: 1, webhook: { url, events: ['completed'] } } as never);
    const s = await waitDone(id);
    assert.equal(s.status, 'completed');
    for (let i = 0; i < 80 && calls < 3; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(calls, 3, 'delivered on the third attempt');
    flaky.close();
  });
});

describe('watcher (WebSocket)', () => {
  test('streams every document and ends with done', async () => {
    const { id } = await fc.startCrawl(site.url('/gen/0'), { limit: 20, sitemap: 'skip', delay: 0.05, crawlEntireDomain: true, includePaths: ['^/gen/'] } as never);
    const watcher = fc.watcher(id, { kind: 'crawl', pollInterval: 1 });
    const docs: string[] = [];
    watcher.on('document', (d: { metadata?: { sourceURL?: string } }) => docs.push(d.metadata!.sourceURL!));
    const done = new Promise<{ status: string }>((resolve) => watcher.on('done', resolve));
    await watcher.start();
    const end = await done;
    assert.equal(end.status, 'completed');
    // A crawl never returns more documents than its limit. (Overshoot seen before aa8a138 — 31
    // pages for limit 20 — came from claims leasing more URLs than asked; the message still
    // carries what is needed to tell where extra pages came from.)
    const status = await fc.getCrawlStatus(id);
    const stored = await stack.db.pool.query('SELECT count(*)::int AS n FROM crawl_documents WHERE job_id = $1', [id]);
    const seen = `watcher: ${docs.length} events ${[...new Set(docs)].sort().join(' ')}; status: ${status.status} completed ${status.completed} total ${status.total} docs ${status.data.length}; stored ${stored.rows[0].n}`;
    assert.equal(docs.length, 20, seen);
    assert.equal(new Set(docs).size, 20, seen);
    assert.equal(stored.rows[0].n, 20, seen);
    assert.equal(status.data.length, 20, seen);
    assert.equal(status.completed, 20, seen);
    assert.equal(status.total, 20, seen);
  });

  test('the socket to a real job refuses a bad key, a revoked key and another team\'s key; its own key opens it', async () => {
    const { id } = await fc.startCrawl(site.url('/docs/'), { limit: 2, sitemap: 'skip' } as never);
    const revoked = await createKey(stack.db.db, stack.teamId, { name: 'to revoke' });
    assert.equal(await revokeKey(stack.db.db, revoked.key), 1);
    const other = await stack.newTeam();
    /** The HTTP status the upgrade got (101 when the socket opened). */
    const upgrade = (key: string) =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(`${stack.url.replace('http', 'ws')}/v2/crawl/${id}`, [key]);
        ws.once('open', () => {
          ws.close();
          resolve(101);
        });
        ws.once('unexpected-response', (_req, res) => {
          resolve(res.statusCode ?? 0);
          res.resume();
          ws.terminate();
        });
        ws.once('error', (e) => reject(e));
      });
    assert.equal(await upgrade(stack.apiKey), 101, 'the owner opens it: the job exists and the route works');
    assert.equal(await upgrade('fc-bad'), 401);
    assert.equal(await upgrade(revoked.key), 401);
    assert.equal(await upgrade(other.apiKey), 404, 'another team sees no such job');
  });
});

describe('batch scrape', () => {
  test('scrapes every URL once; invalid URLs reported; errors and idempotency', async () => {
    const urls = [site.url('/docs/a'), site.url('/docs/b'), site.url('/orphan'), site.url('/bin'), 'not a url', site.url('/docs/a')];
    const started = await fc.startBatchScrape(urls, { options: { formats: ['markdown', 'links'] }, ignoreInvalidURLs: true, idempotencyKey: 'batch-key-1' } as never);
    assert.deepEqual(started.invalidURLs, ['not a url']);
    const s = await waitDone(started.id, 'batch');
    assert.equal(s.status, 'completed');
    assert.equal(s.data.length, 3);
    assert.ok(s.data.every((d) => Array.isArray(d.links)));
    const errors = await fc.getBatchScrapeErrors(started.id);
    assert.equal(errors.errors.length, 1);
    assert.equal(errors.errors[0]!.url, site.url('/bin'));
    const again = await fc.startBatchScrape(urls, { ignoreInvalidURLs: true, idempotencyKey: 'batch-key-1' } as never);
    assert.equal(again.id, started.id, 'same idempotency key, same job');
    const viaSdk = await fc.batchScrape([site.url('/blog/post-2')], { options: { formats: ['markdown'] }, pollInterval: 1 } as never);
    assert.equal(viaSdk.data.length, 1);
    assert.match(viaSdk.data[0]!.markdown!, /Post 2/);
  });

  test('invalid URLs without ignoreInvalidURLs → 400 naming them; cancel', async () => {
    const r = await call(stack, 'POST', '/v2/batch/scrape', { urls: [site.url('/docs/a'), 'ftp://x'], ignoreInvalidURLs: false });
    assert.equal(r.status, 400);
    assert.equal(r.json.error, 'Invalid URL');
    assert.deepEqual(r.json.details[0].path, ['urls', 1]);
    const slow = Array.from({ length: 30 }, (_, i) => site.url(`/slow/${i}`));
    const started = await fc.startBatchScrape(slow, { maxConcurrency: 1 } as never);
    await new Promise((res) => setTimeout(res, 600));
    assert.equal(await fc.cancelBatchScrape(started.id), true);
    assert.equal((await fc.getBatchScrapeStatus(started.id)).status, 'cancelled');
  });
});

describe('map', () => {
  test('links from the sitemap and the start page, filtered and ranked', async () => {
    const m = await fc.map(site.url('/'));
    const urls = m.links.map((l) => l.url);
    for (const p of ['/', '/orphan', '/docs/', '/blog/']) assert.ok(urls.includes(site.url(p)), `missing ${p}`);
    assert.ok(urls.includes(site.url('/sub-page', 'sub.site.test')), 'includeSubdomains defaults to true');
    assert.ok(!urls.some((u) => u.includes('other.test')), 'external links are not part of the site');
    assert.ok(!urls.some((u) => u.includes('?')), 'query parameters dropped by default');
    assert.equal(new Set(urls).size, urls.length);
    const ranked = await fc.map(site.url('/'), { search: 'blog', limit: 3 });
    assert.equal(ranked.links.length, 3);
    // The two URLs that mention "blog" come first; the rest follow.
    assert.ok(ranked.links.slice(0, 2).every((l) => l.url.includes('blog')), JSON.stringify(ranked.links));
    assert.ok(!ranked.links[2]!.url.includes('blog'));
    const noSub = await fc.map(site.url('/'), { includeSubdomains: false });
    assert.ok(!noSub.links.some((l) => l.url.includes('sub.site.test')));
    const onlySitemap = await fc.map(site.url('/'), { sitemap: 'only' });
    assert.deepEqual(onlySitemap.links.map((l) => l.url).sort(), [site.url('/'), site.url('/blog/post-1'), site.url('/docs/a'), site.url('/orphan')].sort());
  });

  test('a map costs one credit, charged once to the ledger under its id', async () => {
    const r = await call(stack, 'POST', '/v2/map', { url: site.url('/'), sitemap: 'skip' });
    assert.equal(r.status, 200);
    const rows = await stack.db.pool.query(`SELECT job_kind, entry, amount FROM credit_ledger WHERE job_id = $1`, [r.json.id]);
    assert.deepEqual(rows.rows, [{ job_kind: 'map', entry: 'charge', amount: 1 }]);
  });
});

describe('validation', () => {
  // One schema failure per endpoint proves the error envelope; the schemas' own cases are unit tests
  // in packages/contracts/src/request-validation.test.ts.
  for (const [path, body, field] of [
    ['/v2/crawl', { url: 'nope' }, 'url'],
    ['/v2/batch/scrape', { urls: [] }, 'urls'],
    ['/v2/map', {}, 'url'],
  ] as const) {
    test(`${path} ${JSON.stringify(body)} → 400`, async () => {
      const r = await call(stack, 'POST', path, body);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.success, false);
      if (field) assert.ok(r.json.details.some((d: { path: unknown[] }) => d.path.join('.').startsWith(field)), JSON.stringify(r.json.details));
    });
  }
  test('prompt and params-preview need an LLM → 400 naming it', async () => {
    const a = await call(stack, 'POST', '/v2/crawl', { url: 'http://a.test', prompt: 'only blog posts' });
    assert.equal(a.status, 400);
    assert.equal(a.json.code, 'FEATURE_NOT_AVAILABLE');
    const b = await call(stack, 'POST', '/v2/crawl/params-preview', { url: 'http://a.test', prompt: 'x' });
    assert.equal(b.status, 400);
    assert.equal(b.json.code, 'FEATURE_NOT_AVAILABLE');
    assert.match(b.json.error, /OPENAI_API_KEY/, 'the 400 names the variable to set');
  });
  test('extract needs an LLM → 400 naming the variable, nothing stored', async () => {
    const r = await call(stack, 'POST', '/v2/extract', { urls: ['http://a.test/'], prompt: 'the title' });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.code, 'FEATURE_NOT_AVAILABLE');
    assert.match(r.json.error, /\/v2\/extract is not available in this deployment/);
    assert.match(r.json.error, /OPENAI_API_KEY/);
    assert.equal((await stack.db.pool.query('SELECT count(*)::int AS n FROM extract_jobs')).rows[0].n, 0);
  });
  test('zeroDataRetention without team enablement → 403', async () => {
    assert.equal((await call(stack, 'POST', '/v2/crawl', { url: 'http://a.test', zeroDataRetention: true })).status, 403);
    assert.equal((await call(stack, 'POST', '/v2/batch/scrape', { urls: ['http://a.test'], zeroDataRetention: true })).status, 403);
  });
});
