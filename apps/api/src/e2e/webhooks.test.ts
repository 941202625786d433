import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { namespaceFor, startCrawlSite, startStack, type CrawlSite, type Stack } from '@wds/test-utils';

// Webhook delivery isolation (issue 12.4): a receiver that never answers holds only its own
// deliveries; every other destination keeps getting its events at once.
const TIMEOUT_MS = 1_500;
let stack: Stack;
let site: CrawlSite;
let fc: Firecrawl;

interface Receiver {
  url: string;
  hits: { at: number; body: any }[];
  close(): void;
}

/** A receiver on 127.0.0.1; `answer` false: it reads each request and never responds. */
async function receiver(answer: boolean): Promise<Receiver> {
  const hits: Receiver['hits'] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      hits.push({ at: Date.now(), body: JSON.parse(raw) });
      if (answer) res.writeHead(200).end('ok');
      else open.add(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits,
    close() {
      for (const r of open) r.destroy();
      server.close();
    },
  };
}

before(async () => {
  site = await startCrawlSite();
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_HOST_OVERRIDES: site.hostOverrides, WDS_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

async function until(cond: () => boolean, ms: number) {
  for (const end = Date.now() + ms; !cond() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
  return cond();
}

describe('one slow receiver', () => {
  test("cannot delay another destination's events; it is retried with backoff and every attempt is recorded", async () => {
    const stuck = await receiver(false);
    const good = await receiver(true);
    try {
      const a = await fc.startCrawl(site.url('/docs/'), { sitemap: 'skip', limit: 10, webhook: { url: stuck.url } } as never);
      assert.ok(await until(() => stuck.hits.length > 0, 10_000), 'the stuck receiver got its first delivery');

      const b = await fc.startCrawl(site.url('/docs/'), { sitemap: 'skip', limit: 10, webhook: { url: good.url } } as never);
      let doneAt = 0;
      for (;;) {
        const s = await fc.getCrawlStatus(b.id, { autoPaginate: false });
        if (s.status !== 'scraping') {
          doneAt = Date.now();
          assert.equal(s.status, 'completed');
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      const completed = () => good.hits.find((h) => h.body.id === b.id && h.body.type === 'crawl.completed');
      await until(() => !!completed(), 30_000);
      const lag = completed() ? completed()!.at - doneAt : Infinity;
      console.log(`# webhooks: the answering receiver got crawl.completed ${lag} ms after the crawl completed (the other receiver never answers)`);
      assert.ok(lag < 2_000, `crawl.completed reached the answering receiver ${lag} ms after the crawl completed`);
      const types = good.hits.filter((h) => h.body.id === b.id).map((h) => h.body.type);
      assert.equal(types[0], 'crawl.started');
      assert.equal(types.filter((t) => t === 'crawl.page').length, 4);
      assert.equal(types.at(-1), 'crawl.completed');
      // Meanwhile the stuck job got nowhere: still on its first event.
      assert.ok(stuck.hits.every((h) => h.body.id === a.id && h.body.type === 'crawl.started'));

      // Retried with a growing backoff: timeout + 1 s, then timeout + 2 s.
      assert.ok(await until(() => stuck.hits.length >= 3, 15_000), `${stuck.hits.length} attempts`);
      const [t1, t2, t3] = stuck.hits.map((h) => h.at);
      assert.ok(t2! - t1! >= TIMEOUT_MS + 900, `first retry after ${t2! - t1!} ms`);
      assert.ok(t3! - t2! >= t2! - t1! + 700, `second retry after ${t3! - t2!} ms (first after ${t2! - t1!} ms)`);

      // Each attempt is recorded: when, how long, and what came of it.
      const rows = await stack.db.pool.query(
        `SELECT a.attempt, a.status_code, a.error, a.duration_ms FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
         WHERE d.job_id = $1 ORDER BY a.attempt`,
        [a.id],
      );
      assert.ok(rows.rows.length >= 2, JSON.stringify(rows.rows));
      for (const r of rows.rows.slice(0, 2)) {
        assert.equal(r.status_code, null);
        assert.match(r.error, /timeout|timed out|aborted/i);
        assert.ok(r.duration_ms >= TIMEOUT_MS - 50 && r.duration_ms < TIMEOUT_MS + 1_000, `attempt took ${r.duration_ms} ms`);
      }
      const okRows = await stack.db.pool.query(
        `SELECT a.status_code FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.job_id = $1`,
        [b.id],
      );
      assert.equal(okRows.rows.length, 6);
      assert.ok(okRows.rows.every((r) => r.status_code === 200));
    } finally {
      stuck.close();
      good.close();
    }
  });
});
