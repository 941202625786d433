import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, beforeEach, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { call, namespaceFor, startFixtureSite, startStack, until, type FixtureSite, type Stack } from '@wds/test-utils';

// What the API and worker print while requests fail: one JSON line per event with the ids of
// the job, and never a credential the caller sent to the target site, an API key, or the URL
// of a zero-data-retention request. Logging at debug, so every line a process can write is seen.
let stack: Stack;
let site: FixtureSite;
let zdr: { teamId: string; apiKey: string };
const SECRET_HEADERS = { Authorization: 'Bearer SECRET-x', Cookie: 'sid=SECRET-y' };

/** Everything a process prints from now on (AppProcess.output keeps only the last 20 kB). */
function capture(child: ChildProcess) {
  let text = '';
  const on = (d: Buffer) => void (text += d.toString());
  child.stdout!.on('data', on);
  child.stderr!.on('data', on);
  return {
    text: () => text,
    reset: () => void (text = ''),
    /** The JSON lines; anything else a process prints is a defect of its own. */
    lines: () => text.split('\n').filter((l) => l.trim()).map((l) => { try { return JSON.parse(l) as Record<string, any>; } catch { return { unparsed: l }; } }),
  };
}
let apiLog: ReturnType<typeof capture>;
let workerLog: ReturnType<typeof capture>;

before(async () => {
  site = await startFixtureSite({
    // The page shows what it was sent: its document carries the caller's credentials.
    '/echo': (q, r) => void r.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><main><p>cookie ${q.headers.cookie} auth ${q.headers.authorization} url ${q.url}</p></main></body></html>`),
    '/private-zdr-path': (_q, r) => void r.writeHead(200, { 'content-type': 'text/html' }).end('<p>zdr page</p>'),
  });
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { LOG_LEVEL: 'debug' } });
  zdr = await stack.newTeam({ flags: { zeroDataRetention: true } });
  apiLog = capture(stack.api.child);
  workerLog = capture(stack.worker.child);
});
after(async () => {
  await stack?.stop();
  await site?.close();
});
beforeEach(() => {
  apiLog.reset();
  workerLog.reset();
});

/** A constraint that makes one write fail for as long as `fn` runs (the stack has its own database). */
async function withFailingWrite<T>(check: string, fn: () => Promise<T>): Promise<T> {
  await stack.db.pool.query(`ALTER TABLE scrape_jobs ADD CONSTRAINT test_fail CHECK (${check}) NOT VALID`);
  try {
    return await fn();
  } finally {
    await stack.db.pool.query('ALTER TABLE scrape_jobs DROP CONSTRAINT test_fail');
  }
}

const lastScrapeId = async () => (await stack.db.pool.query('SELECT id FROM scrape_jobs ORDER BY created_at DESC LIMIT 1')).rows[0]?.id as string;

test('the API: a request failing on a statement that holds the caller headers logs the failure with its ids, no secret', async () => {
  const r = await withFailingWrite(`NOT (options ? 'headers')`, () =>
    call(stack, 'POST', '/v2/scrape', { url: site.url('/echo?token=SECRET-z'), headers: SECRET_HEADERS }),
  );
  assert.equal(r.status, 500, r.text);
  const text = apiLog.text();
  assert.ok(!text.includes('SECRET-'), `a secret in the API log:\n${text.slice(0, 3000)}`);
  assert.ok(!text.includes(stack.apiKey), 'the API key is not logged');
  const lines = apiLog.lines();
  const failed = lines.find((l) => l.msg === 'request failed');
  assert.ok(failed, text);
  assert.equal(failed.level, 'error');
  assert.equal(failed.route, '/v2/scrape');
  assert.equal(failed.teamId, stack.teamId);
  assert.match(failed.scrapeId, /^[0-9a-f-]{36}$/);
  assert.match(failed.err.message, /^Failed query:\s+(WITH job AS \(\s+)?insert into "scrape_jobs"/i, 'the failure itself is told');
  const request = lines.find((l) => l.msg === 'request' && l.scrapeId === failed.scrapeId);
  assert.ok(request, text);
  assert.equal(request.status, 500);
  assert.equal(typeof request.durationMs, 'number');
  assert.ok(!('url' in request), 'the request line names the route, not the URL');
  assert.deepEqual(lines.filter((l) => 'unparsed' in l), [], 'one JSON object per line');
});

// The scrape's page step fails on its write: by default a fetch worker running the directly
// dispatched scrape logs it; with WDS_SCRAPE_FETCH=queue the scrapePage activity's failure is logged.
for (const mode of ['direct', 'queue'] as const) {
  test(`the worker (${mode}): a scrape failing on a document that echoes the credentials logs the failure with its ids, no secret`, async () => {
    const api = mode === 'queue' ? { url: (await stack.addApi({ WDS_SCRAPE_FETCH: 'queue' })).url!, apiKey: stack.apiKey } : stack;
    const r = await withFailingWrite(`document IS NULL OR document::text NOT LIKE '%SECRET-%'`, () =>
      call(api, 'POST', '/v2/scrape', { url: site.url('/echo?token=SECRET-z'), headers: SECRET_HEADERS, timeout: 15_000 }),
    );
    assert.ok(r.status >= 500, r.text);
    const id = await lastScrapeId();
    const isFailure = (l: Record<string, any>) =>
      l.scrapeId === id && (mode === 'direct' ? l.msg === 'direct scrape failed' : l.msg === 'Activity failed' && l.attempt >= 3);
    // The SDK logs the last attempt's failure just after the workflow learns of it.
    await until(() => workerLog.lines().some(isFailure), 'the worker to log the failure', { timeoutMs: 10_000 }).catch(() => {});
    for (const [name, log] of [['worker', workerLog], ['API', apiLog]] as const) {
      assert.ok(!log.text().includes('SECRET-'), `a secret in the ${name} log:\n${log.text().slice(0, 3000)}`);
      assert.ok(!log.text().includes(stack.apiKey), `the API key is not in the ${name} log`);
    }
    const failed = workerLog.lines().find(isFailure);
    assert.ok(failed, workerLog.text().slice(0, 3000));
    assert.equal(failed.level, 'warn');
    if (mode === 'direct') {
      assert.match(JSON.stringify(failed.err), /Failed query/, 'the database failure itself is told');
    } else {
      assert.equal(failed.jobId, id);
      assert.equal(failed.workflowId, `scrape-${id}`);
      assert.equal(failed.activityType, 'scrapePage');
      assert.match(JSON.stringify(failed.error), /Failed query/, 'the database failure itself is told');
    }
    assert.deepEqual(workerLog.lines().filter((l) => 'unparsed' in l), [], 'one JSON object per line');
  });
}

test('zero data retention: neither a scrape nor a failing one leaves its URL in any log line', async () => {
  const path = '/private-zdr-path';
  const team = { url: stack.url, apiKey: zdr.apiKey };
  const ok = await call(team, 'POST', '/v2/scrape', { url: site.url(path), zeroDataRetention: true });
  assert.equal(ok.status, 200, ok.text);
  assert.match(ok.json.data.markdown, /zdr page/);
  const failed = await withFailingWrite(`NOT coalesce((options->>'zeroDataRetention')::boolean, false)`, () =>
    call(team, 'POST', '/v2/scrape', { url: site.url(`${path}?again=1`), zeroDataRetention: true }),
  );
  assert.equal(failed.status, 500, failed.text);
  await new Promise((r) => setTimeout(r, 500));
  for (const [name, log] of [['worker', workerLog], ['API', apiLog]] as const) {
    assert.ok(!log.text().includes('private-zdr'), `the ZDR URL in the ${name} log:\n${log.text().slice(0, 3000)}`);
  }
  const requests = apiLog.lines().filter((l) => l.msg === 'request' && l.route === '/v2/scrape' && l.teamId === zdr.teamId);
  assert.deepEqual(requests.map((l) => l.status), [200, 500], 'both requests are logged, by route');
  assert.ok(requests.every((l) => /^[0-9a-f-]{36}$/.test(l.scrapeId)));
  assert.ok(apiLog.lines().some((l) => l.msg === 'request failed' && l.scrapeId === requests[1]!.scrapeId));
});

test('job routes log their route pattern and the job id; health probes only at debug', async () => {
  const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  const job = await fc.startCrawl(site.url('/echo'), { limit: 1, sitemap: 'skip' });
  await fc.getCrawlStatus(job.id);
  await call(stack, 'GET', '/health');
  const lines = apiLog.lines().filter((l) => l.msg === 'request');
  const start = lines.find((l) => l.route === '/v2/crawl' && l.method === 'POST');
  const status = lines.find((l) => l.route === '/v2/crawl/:id' && l.method === 'GET');
  assert.equal(start?.jobId, job.id);
  assert.equal(status?.jobId, job.id);
  assert.equal(status?.status, 200);
  assert.equal(status?.teamId, stack.teamId);
  // The request line is written after the response is sent: wait for it rather than race it.
  const health = await until(() => apiLog.lines().find((l) => l.msg === 'request' && l.route === '/health'), 'the /health request line', { timeoutMs: 5_000, everyMs: 20 });
  assert.equal(health.level, 'debug');
});
