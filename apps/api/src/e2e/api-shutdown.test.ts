import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { WebSocket } from 'ws';
import { call, exitOf, namespaceFor, startFixtureSite, startStack, until, type FixtureSite, type Stack } from '@wds/test-utils';

// SIGTERM to an API process: it refuses new connections at once, lets the requests it is serving
// finish, closes job WebSockets (1001, so watchers fall back to polling another API) and exits —
// promptly once drained, and after WDS_SHUTDOWN_GRACE_MS at the latest, without losing the job.
let stack: Stack;
let site: FixtureSite;
const answered: Record<string, number> = {};

function slow(path: string, ms: number) {
  return (_req: unknown, res: ServerResponse) => {
    const t = setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><head><title>Slow ${path}</title></head><body><p>Body of ${path}</p></body></html>`);
      answered[path] = Date.now();
    }, ms);
    res.on('close', () => clearTimeout(t));
  };
}

/** A fresh TCP connection: whether the port still accepts. */
function accepts(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = connect({ host: u.hostname, port: Number(u.port) });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

before(async () => {
  site = await startFixtureSite({ '/drained': slow('/drained', 8_000), '/outlasts': slow('/outlasts', 15_000), '/crawl-hold': slow('/crawl-hold', 90_000) });
  stack = await startStack({ namespace: namespaceFor(import.meta.url) });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

test('in-flight requests finish, new connections are refused, WebSockets close, the process exits', { timeout: 180_000 }, async () => {
  const api = await stack.addApi({ WDS_SHUTDOWN_GRACE_MS: '60000' });
  const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: api.url! });
  // A crawl held open by its slow page, watched over this API's WebSocket.
  const crawl = await fc.startCrawl(site.url('/crawl-hold'), { limit: 1, sitemap: 'skip' } as never);
  const ws = new WebSocket(`${api.url!.replace('http', 'ws')}/v2/crawl/${crawl.id}`, [stack.apiKey]);
  const wsClosed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  await new Promise((r, j) => (ws.once('message', r), ws.once('error', j)));

  let scrapeDone = 0;
  const scraping = fc.scrape(site.url('/drained'), { formats: ['markdown'] }).finally(() => (scrapeDone = Date.now()));
  await until(() => site.hits('/drained') === 1, 'the scrape to reach the page', { timeoutMs: 90_000 });
  const exited = exitOf(api.child);
  const signalledAt = Date.now();
  api.child.kill('SIGTERM');

  await until(async () => !(await accepts(api.url!)), 'the port to refuse connections', { timeoutMs: 10_000 });
  assert.equal(scrapeDone, 0, 'connections were refused while the scrape was still in flight');
  assert.equal(await wsClosed, 1001, 'the job socket was closed as going away');
  const doc = await scraping;
  assert.match(doc.markdown ?? '', /Body of \/drained/);
  const exit = await exited;
  assert.equal(exit.code, 0, api.output());
  assert.ok(exit.at >= answered['/drained']!, 'the process outlived its in-flight request');
  assert.ok(exit.at - signalledAt < 40_000, `exited ${exit.at - signalledAt} ms after SIGTERM, once drained — not at the 60 s grace`);
  // The other API process was untouched.
  assert.equal((await call(stack, 'GET', '/health')).status, 200);
});

test('a request outlasting the grace time is cut off, and its job still completes', { timeout: 180_000 }, async () => {
  const api = await stack.addApi({ WDS_SHUTDOWN_GRACE_MS: '1500' });
  const request = call({ url: api.url!, apiKey: stack.apiKey }, 'POST', '/v2/scrape', { url: site.url('/outlasts'), formats: ['markdown'] });
  const outcome = request.then(() => 'answered', (e: Error) => `failed: ${e.message}`);
  await until(() => site.hits('/outlasts') === 1, 'the scrape to reach the page', { timeoutMs: 90_000 });
  const exited = exitOf(api.child);
  const signalledAt = Date.now();
  api.child.kill('SIGTERM');

  const exit = await exited;
  assert.equal(exit.code, 0, api.output());
  assert.ok(exit.at - signalledAt < 10_000, `exited ${exit.at - signalledAt} ms after SIGTERM (grace 1.5 s)`);
  assert.equal(answered['/outlasts'], undefined, 'it exited before the page answered');
  assert.match(await outcome, /^failed/, 'the connection was closed, not answered');
  // The scrape itself ran on in the worker: its job row completes.
  const row = await until(async () => {
    const r = await stack.db.pool.query(`SELECT status FROM scrape_jobs WHERE url = $1 AND status <> 'pending'`, [site.url('/outlasts')]);
    return r.rows[0] as { status: string } | undefined;
  }, 'the scrape job to finish', { timeoutMs: 90_000 });
  assert.equal(row.status, 'completed');
});
