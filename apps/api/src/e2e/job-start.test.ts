import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { Client, Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { insertAgentRun } from '@wds/db';
import { call, exitOf, html, namespaceFor, startFixtureSite, startStack, startTcpProxy, until, type FixtureSite, type Stack, type TcpProxy } from '@wds/test-utils';

// A crawl or batch is stored, then its workflow is started. Whatever breaks between the two
// (Temporal unreachable, the API killed), the job must not say `scraping` for ever. The API under
// test reaches Temporal through a proxy the test cuts or stalls; the stack's own API and worker
// reach it directly.
let stack: Stack;
let site: FixtureSite;
const proxies: TcpProxy[] = [];

before(async () => {
  site = await startFixtureSite({
    '/a': html('<html><body><p>Page A</p><a href="/b">b</a></body></html>'),
    '/b': html('<html><body><p>Page B</p></body></html>'),
    '/slow': async (q, r) => {
      await new Promise((res) => setTimeout(res, 2_000));
      const n = Number(new URL(q.url!, 'http://x').searchParams.get('n') ?? 0);
      const next = n < 7 ? `<a href="/slow?n=${n + 1}">next</a>` : '';
      r.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><p>Slow ${n}</p>${next}</body></html>`);
    },
  });
  // The sweeper's grace is shortened (default 30 s, swept every 15 s) but stays above the API's
  // start deadline (10 s), as in production: a start still in flight is never swept.
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_STRANDED_JOB_GRACE_MS: '12000', WDS_STRANDED_JOB_SWEEP_MS: '500' } });
});
after(async () => {
  await stack?.stop();
  await Promise.all(proxies.map((p) => p.close()));
  await site?.close();
});

async function apiBehindProxy() {
  const proxy = await startTcpProxy(stack.env.TEMPORAL_ADDRESS!);
  proxies.push(proxy);
  const api = await stack.addApi({ TEMPORAL_ADDRESS: proxy.address });
  return { proxy, api };
}

async function jobsOf(teamId: string) {
  const r = await stack.db.db.execute<{ id: string; kind: string; url: string | null; status: string; error: string | null; idempotency_key: string | null }>(
    sql`SELECT j.id, j.kind, c.url, j.status, j.error ->> 'message' AS error, j.idempotency_key FROM jobs j JOIN crawl_jobs c ON c.id = j.id WHERE j.team_id = ${teamId} ORDER BY j.created_at`,
  );
  return r.rows;
}

describe('job start', () => {
  test('Temporal unreachable: 503, the job is failed at once, and a retry with the same idempotency key starts afresh', async () => {
    const { proxy, api } = await apiBehindProxy();
    const team = await stack.newTeam();
    const as = { url: api.url!, apiKey: team.apiKey };
    proxy.cut();

    const t0 = Date.now();
    const batch = await call(as, 'POST', '/v2/batch/scrape', { urls: [site.url('/a')] }, { 'x-idempotency-key': 'retry-me' });
    assert.equal(batch.status, 503, batch.text);
    assert.equal(batch.json.success, false);
    assert.match(batch.json.error, /could not be started/);
    const crawl = await call(as, 'POST', '/v2/crawl', { url: site.url('/a'), limit: 2 });
    assert.equal(crawl.status, 503, crawl.text);
    // Each answered at its 10 s start deadline (measured: 10.1–10.3 s), not after gRPC's retries.
    assert.ok(Date.now() - t0 < 30_000, `answered within the start deadline (${Date.now() - t0} ms for both)`);

    const rows = await jobsOf(team.teamId);
    assert.deepEqual(rows.map((r) => [r.kind, r.status]), [['batch', 'failed'], ['crawl', 'failed']]);
    for (const r of rows) assert.match(r.error ?? '', /could not be started/);
    assert.equal(rows[0]!.idempotency_key, null, 'the key is released');
    // Nothing is left running from the API's point of view either.
    const own = { url: stack.url, apiKey: team.apiKey };
    assert.equal((await call(own, 'GET', '/v2/team/queue-status')).json.activeJobsInQueue, 0);
    assert.deepEqual((await call(own, 'GET', '/v2/crawl/active')).json.crawls, []);

    proxy.heal();
    await until(async () => (await fetch(`${api.url}/ready`)).status === 200, 'the API to reach Temporal again');
    const fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: api.url! });
    const done = await fc.batchScrape([site.url('/a')], { idempotencyKey: 'retry-me', pollInterval: 1 });
    assert.equal(done.status, 'completed');
    assert.equal(done.data.length, 1);
    assert.match(done.data[0]!.markdown ?? '', /Page A/);
  });

  test('Temporal unreachable: an agent start answers 503 and the run is failed at once, unbilled', async () => {
    const proxy = await startTcpProxy(stack.env.TEMPORAL_ADDRESS!);
    proxies.push(proxy);
    // An LLM configured for this API only (it never calls the model: the start fails first).
    const api = await stack.addApi({ TEMPORAL_ADDRESS: proxy.address, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', MODEL_NAME: 'unused' });
    const team = await stack.newTeam();
    proxy.cut();
    const r = await call({ url: api.url!, apiKey: team.apiKey }, 'POST', '/v2/agent', { prompt: 'never runs' });
    assert.equal(r.status, 503, r.text);
    assert.match(r.json.error, /could not be started/);
    const list = await call({ url: stack.url, apiKey: team.apiKey }, 'GET', '/v2/agent');
    assert.equal(list.json.agents.length, 1);
    const s = await call({ url: stack.url, apiKey: team.apiKey }, 'GET', `/v2/agent/${list.json.agents[0].id}`);
    assert.equal(s.json.status, 'failed');
    assert.match(s.json.error, /could not be started/);
    assert.equal(s.json.creditsUsed, 0);
    proxy.heal();
  });

  test('an agent job stored but never started (the API died in between) is failed by the workers, unbilled', async () => {
    const team = await stack.newTeam();
    const id = randomUUID();
    // What POST /v2/agent stores before it starts the workflow.
    await insertAgentRun(stack.db.db, { id, teamId: team.teamId, rootId: id, threadId: id, options: { prompt: 'orphan', maxCredits: 10, strictConstrainToURLs: false, model: 'spark-2', mode: 'extract' } });
    const own = { url: stack.url, apiKey: team.apiKey };
    const s = await until(async () => {
      const r = await call(own, 'GET', `/v2/agent/${id}`);
      return r.json.status === 'failed' ? r.json : null;
    }, 'the sweeper to fail the run', { timeoutMs: 60_000, everyMs: 500 });
    assert.match(s.error, /never started/);
    assert.equal(s.creditsUsed, 0);
    const trace = await call(own, 'GET', `/v2/agent/${id}/trace`);
    const end = trace.json.events.find((e: { type: string }) => e.type === 'run.finished');
    assert.equal(end.outcome, 'failed');
    assert.deepEqual([end.error.code, end.error.retryable], ['internal', true]);
  });

  test('the API dies between storing a crawl and starting it: the workers fail the job, running jobs are untouched', async () => {
    const team = await stack.newTeam();
    const fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
    // A crawl that runs past the sweeper's grace (8 pages, 2 s each, one at a time), started normally: it must complete.
    const long = fc.crawl(site.url('/slow?n=0'), { limit: 8, maxConcurrency: 1, pollInterval: 1 } as never);

    const { proxy, api } = await apiBehindProxy();
    proxy.stall();
    const pending = call({ url: api.url!, apiKey: team.apiKey }, 'POST', '/v2/crawl', { url: site.url('/a'), limit: 2 }).catch((e: Error) => e);
    const orphan = await until(async () => (await jobsOf(team.teamId)).find((r) => r.url?.endsWith('/a')), 'the crawl row', { timeoutMs: 30_000 });
    assert.equal(orphan.status, 'running');
    // The row is committed and the start hangs: kill the API now.
    api.child.kill('SIGKILL');
    await exitOf(api.child);
    assert.ok((await pending) instanceof Error, 'the client of the killed API got no answer');
    const killedAt = Date.now();

    const own = { url: stack.url, apiKey: team.apiKey };
    const failed = await until(
      async () => {
        const s = await call(own, 'GET', `/v2/crawl/${orphan.id}`);
        return s.json.status === 'failed' ? s : null;
      },
      'the stranded crawl to be failed',
      { timeoutMs: 60_000, everyMs: 250 },
    );
    assert.equal(failed.json.success, true);
    assert.ok(Date.now() - killedAt < 60_000);
    const [row] = (await jobsOf(team.teamId)).filter((r) => r.id === orphan.id);
    assert.match(row!.error ?? '', /never started/);

    const finished = await long;
    assert.equal(finished.status, 'completed', 'a crawl that is running is never swept');
    assert.equal(finished.data.length, 8);
  });

  test('a crawl whose workflow was terminated before ending it is failed by the workers', async () => {
    const team = await stack.newTeam();
    const fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
    const { id } = await fc.startCrawl(site.url('/slow?n=0'), { limit: 8, maxConcurrency: 1 } as never);
    const connection = await Connection.connect({ address: stack.env.TEMPORAL_ADDRESS! });
    try {
      await new Client({ connection, namespace: stack.namespace }).workflow.getHandle(`crawl-${id}`).terminate('an operator stopped it');
    } finally {
      await connection.close();
    }
    const own = { url: stack.url, apiKey: team.apiKey };
    await until(async () => (await call(own, 'GET', `/v2/crawl/${id}`)).json.status === 'failed', 'the crawl to be failed', { timeoutMs: 60_000, everyMs: 250 });
    const [row] = (await jobsOf(team.teamId)).filter((r) => r.id === id);
    assert.match(row!.error ?? '', /ended without finishing/);
  });
});
