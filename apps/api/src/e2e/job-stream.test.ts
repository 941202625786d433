import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { createKey } from '@wds/db';
import { call, namespaceFor, startFixtureSite, startStack, until, type FixtureSite, type Stack } from '@wds/test-utils';
import { WebSocket } from 'ws';

// The WebSocket watcher of crawl and batch jobs: the key's scopes, connections per key, and
// backpressure (a client that stops reading is cut off; the job and other watchers go on).
let stack: Stack;
let site: FixtureSite;
const PAGES = 40;
const PAGE_TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(9_000); // ~400 KB a page

before(async () => {
  site = await startFixtureSite({
    // /big?n=0 … n=39: large pages, each linking the next.
    '/big': (q, r) => {
      const n = Number(new URL(q.url!, 'http://x').searchParams.get('n') ?? 0);
      const next = n < PAGES - 1 ? `<a href="/big?n=${n + 1}">next</a>` : '';
      r.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><h1>Big ${n}</h1><p>${PAGE_TEXT}</p>${next}</body></html>`);
    },
    '/slow': async (q, r) => {
      await new Promise((res) => setTimeout(res, 3_000));
      const n = Number(new URL(q.url!, 'http://x').searchParams.get('n') ?? 0);
      r.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><p>Slow ${n}</p><a href="/slow?n=${n + 1}">next</a></body></html>`);
    },
  });
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: { WDS_WS_MAX_BUFFERED_BYTES: String(256 * 1024), WDS_WS_STALL_MS: '2000', WDS_WS_CONNECTIONS_PER_KEY: '2' },
  });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

interface Opened {
  ws: WebSocket;
  messages: { type: string }[];
  closed: Promise<number>;
}

/** Opens a watcher socket the way the SDK does (the key as subprotocol); resolves on open or on the refusal's status. */
function watch(path: string, key: string): Promise<Opened | { refused: number; body: string }> {
  const ws = new WebSocket(`${stack.url.replace(/^http/, 'ws')}${path}`, key);
  const messages: { type: string }[] = [];
  ws.on('message', (m) => messages.push(JSON.parse(String(m))));
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
  return new Promise((resolve) => {
    ws.on('open', () => resolve({ ws, messages, closed }));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d) => (body += d)).on('end', () => resolve({ refused: res.statusCode!, body }));
    });
    ws.on('error', () => {});
  });
}

describe('job stream', () => {
  test('the key must have the scope of the job: crawl for crawls, scrape for batches', async () => {
    const team = await stack.newTeam({ scopes: ['scrape'] });
    const { key: crawlKey } = await createKey(stack.db.db, team.teamId, { scopes: ['crawl'] });
    const crawl = await new Firecrawl({ apiKey: crawlKey, apiUrl: stack.url }).startCrawl(site.url('/slow?n=0'), { limit: 1 });
    const batch = await new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url }).startBatchScrape([site.url('/slow?n=9')]);

    // The team's own jobs, with a key of the team that lacks the scope: refused as the HTTP routes refuse.
    const crawlByScrapeKey = await watch(`/v2/crawl/${crawl.id}`, team.apiKey);
    assert.ok('refused' in crawlByScrapeKey, 'a scrape-only key cannot watch a crawl');
    assert.equal(crawlByScrapeKey.refused, 403);
    assert.match(JSON.parse(crawlByScrapeKey.body).details.reason, /not allowed to use 'crawl'/);
    assert.equal((await call({ url: stack.url, apiKey: team.apiKey }, 'GET', `/v2/crawl/${crawl.id}`)).status, 403, 'as over HTTP');
    const batchByCrawlKey = await watch(`/v2/batch/scrape/${batch.id}`, crawlKey);
    assert.ok('refused' in batchByCrawlKey && batchByCrawlKey.refused === 403, 'a crawl-only key cannot watch a batch');

    // With the scope: the stream opens and starts with the catch-up.
    for (const [path, key] of [[`/v2/crawl/${crawl.id}`, crawlKey], [`/v2/batch/scrape/${batch.id}`, team.apiKey]] as const) {
      const ok = await watch(path, key);
      assert.ok('ws' in ok, `${path} opens`);
      await until(() => ok.messages[0], 'the catch-up');
      assert.equal(ok.messages[0]!.type, 'catchup');
      ok.ws.close();
    }
  });

  test('connections per key are bounded (429 beyond), and a closed one frees its place', async () => {
    const team = await stack.newTeam();
    const fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
    const { id } = await fc.startCrawl(site.url('/slow?n=0'), { limit: 3, maxConcurrency: 1 } as never);
    const path = `/v2/crawl/${id}`;
    const [a, b] = [await watch(path, team.apiKey), await watch(path, team.apiKey)];
    assert.ok('ws' in a && 'ws' in b);
    const third = await watch(path, team.apiKey);
    assert.ok('refused' in third, 'a third connection of the key is refused');
    assert.equal(third.refused, 429);
    assert.match(JSON.parse(third.body).error, /at most 2 WebSocket connections per API key/);
    // Another key is not affected.
    const { key: other } = await createKey(stack.db.db, team.teamId, {});
    const otherWs = await watch(path, other);
    assert.ok('ws' in otherWs);
    a.ws.close();
    await a.closed;
    const again = await until(async () => {
      const w = await watch(path, team.apiKey);
      return 'ws' in w ? w : null;
    }, 'a place to free up', { timeoutMs: 5_000 });
    for (const w of [b, otherWs, again]) w.ws.close();
  });

  test('a watcher that stops reading is disconnected; the crawl and another watcher go on to the end', async () => {
    const team = await stack.newTeam();
    const fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
    const { id } = await fc.startCrawl(site.url('/big?n=0'), { limit: PAGES, sitemap: 'skip' } as never);

    // A client that reads nothing: its TCP socket is paused as soon as the stream opens.
    const stuck = await watch(`/v2/crawl/${id}`, team.apiKey);
    assert.ok('ws' in stuck);
    const raw = (stuck.ws as unknown as { _socket: Socket })._socket;
    raw.pause();

    // A client that reads, through the SDK.
    const watcher = fc.watcher(id, { kind: 'crawl', pollInterval: 1 });
    const seen = new Set<string>();
    watcher.on('document', (d: { metadata?: { sourceURL?: string } }) => seen.add(d.metadata!.sourceURL!));
    const done = new Promise<{ status: string }>((resolve) => watcher.on('done', resolve));
    await watcher.start();
    assert.equal((await done).status, 'completed');
    assert.equal(seen.size, PAGES, 'the reading watcher got every page');
    const status = await fc.getCrawlStatus(id);
    assert.equal(status.status, 'completed');
    assert.equal(status.completed, PAGES);

    const cutOff = () => stack.api.output().split('\n').some((l) => l.includes('"msg":"WebSocket watcher disconnected') && l.includes(`"jobId":"${id}"`));
    await until(cutOff, 'the stalled watcher to be cut off (its log line)', { timeoutMs: 30_000 });
    // Reading again, the stalled client gets what was in flight, then the connection ends without a `done`.
    raw.resume();
    const code = await stuck.closed;
    assert.equal(code, 1006, 'closed abnormally (no close frame: the server cut it off)');
    assert.ok(!stuck.messages.some((m) => m.type === 'done'), `no done: ${stuck.messages.length} messages`);
    assert.ok(stuck.messages.length < PAGES, `it did not get every page (${stuck.messages.length})`);
  });
});
