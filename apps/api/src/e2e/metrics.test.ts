import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { exportedSamples, sampleSum } from '@wds/metrics/promql';
import { freePort } from '@wds/launch';
import { Client, Connection } from '@temporalio/client';
import { call, html, namespaceFor, testInfra, startFakeOpenAI, startFixtureSite, startPrometheus, startStack, type FakeOpenAI, type FixtureSite, type Stack, type TestPrometheus } from '@wds/test-utils';

// /metrics of a running stack (API, and a worker's prom-client and Temporal SDK ports), and every
// Grafana panel's PromQL checked against what those processes really export.
const root = fileURLToPath(new URL('../../../../', import.meta.url));
let stack: Stack;
let site: FixtureSite;
let model: FakeOpenAI;
let workerPort: number;
let temporalPort: number;
let prom: TestPrometheus;
/**
 * Panels allowed to return no series after this workload, each with why (matched by a fragment of
 * "<file>: <title>: <expr>").
 */
const EMPTY_PANELS: string[] = [
  // This stack runs no browser worker (e2e/browser and apps/server/src/fleet.test.ts exercise the browser series).
  'Browser renders per second',
  // No monitor check runs here: a check needs a tick Schedule cycle; e2e/monitors covers its credits.
  'Monitor credits per minute',
];
let hooks: Server;
let hooksReceived = 0;
const text: Record<'api' | 'worker' | 'temporal', string> = { api: '', worker: '', temporal: '' };

async function scrapeText(url: string): Promise<string> {
  const res = await fetch(url);
  assert.equal(res.status, 200, url);
  assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
  return res.text();
}

before(async () => {
  [workerPort, temporalPort] = [await freePort(), await freePort()];
  site = await startFixtureSite({
    '/': html('<html><head><title>Metrics home</title></head><body><a href="/page">p</a> <a href="/other">o</a></body></html>'),
    '/page': html('<html><head><title>Metrics page</title></head><body><h1>Hello</h1></body></html>'),
    '/other': html('<html><body><p>Other page</p></body></html>'),
  });
  model = await startFakeOpenAI();
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: {
      WDS_METRICS_PORT: String(workerPort), WDS_TEMPORAL_METRICS_PORT: String(temporalPort), WDS_METRICS_HOST: '127.0.0.1',
      OPENAI_BASE_URL: model.baseUrl, MODEL_NAME: 'fake-model',
    },
  });
  // A real Prometheus scrapes the API, the worker's prom-client port and its Temporal SDK port during the work,
  // with the repository's alert and recording rules loaded.
  const rulesDir = join(root, 'infra/prometheus/rules');
  prom = await startPrometheus({
    targets: { 'wds-api': [stack.url.replace(/^https?:\/\//, '')], 'wds-worker': [`127.0.0.1:${workerPort}`], 'wds-worker-temporal': [`127.0.0.1:${temporalPort}`] },
    ruleFiles: readdirSync(rulesDir).filter((f) => f.endsWith('.yml')).map((f) => join(rulesDir, f)),
  });
  await prom.waitForScrapes(1);
  // Work so that counters and histograms have samples: a miss, a hit, an error, a small crawl, a model step.
  assert.equal((await call(stack, 'POST', '/v2/scrape', { url: site.url('/other'), formats: ['summary'] })).status, 200);
  assert.equal((await call(stack, 'POST', '/v2/scrape', { url: site.url('/page') })).status, 200);
  assert.equal((await call(stack, 'POST', '/v2/scrape', { url: site.url('/page') })).status, 200);
  assert.equal((await call(stack, 'POST', '/v2/scrape', { url: 'not a url' })).status, 400);
  // Refusals and failures the error panels and the SLO recording rules need: a body over the size limit (413), a
  // media format no worker serves (503), and a model step the provider rejects.
  assert.equal(await oversizedScrape(), 413);
  assert.equal((await call(stack, 'POST', '/v2/scrape', { url: site.url('/other?media=1'), formats: ['audio'] })).status, 503);
  model.enqueue({ error: { status: 400, message: 'rejected by the test', type: 'invalid_request_error' } });
  const rejected = await call(stack, 'POST', '/v2/scrape', { url: site.url('/other'), formats: ['summary'], maxAge: 0 });
  assert.ok(rejected.status >= 400, rejected.text);
  // A workflow task on a queue no worker polls for workflows (wds-media): the control worker's backlog gauges see it.
  const connection = await Connection.connect({ address: testInfra().temporalAddress });
  try {
    await new Client({ connection, namespace: stack.namespace }).workflow.start('backlogProbe', { taskQueue: 'wds-media', workflowId: `backlog-probe-${crypto.randomUUID()}`, workflowExecutionTimeout: '5m' });
  } finally {
    await connection.close();
  }
  // An interact call on no scrape: counted as an error (no browser worker needed).
  assert.equal((await call(stack, 'POST', `/v2/scrape/${crypto.randomUUID()}/interact`, { code: '1' })).status, 404);
  // The crawl's webhook events go to a receiver that answers 200, so the dispatcher counts deliveries.
  hooks = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hooksReceived++;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
  const hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`;
  const crawl = await call(stack, 'POST', '/v2/crawl', { url: site.url('/'), limit: 3, sitemap: 'skip', webhook: hookUrl });
  assert.equal(crawl.status, 200, crawl.text);
  for (let i = 0; i < 120; i++) {
    const s = await call(stack, 'GET', `/v2/crawl/${crawl.json.id}`);
    if (s.json?.status === 'completed') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  // An agent job: the default fake model answers without tool calls, which finishes the run in one step.
  const agent = await call(stack, 'POST', '/v2/agent', { prompt: 'Say hello' });
  assert.equal(agent.status, 200, agent.text);
  for (let i = 0; i < 120; i++) {
    const s = await call(stack, 'GET', `/v2/agent/${agent.json.id}`);
    if (s.json?.status !== 'processing') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  // Temporal refreshes a queue's statistics every few seconds: wait (30 s at most) until the probe's task shows.
  for (let i = 0; i < 30; i++) {
    const t = await scrapeText(`http://127.0.0.1:${workerPort}/metrics`);
    if (sampleSum(t, 'wds_task_queue_backlog_tasks', { task_queue: 'wds-media', type: 'workflow' }) >= 1) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  // Deliveries are asynchronous: wait (20 s at most) until the dispatcher has counted one.
  for (let i = 0; i < 80; i++) {
    if (sampleSum(await scrapeText(`http://127.0.0.1:${workerPort}/metrics`), 'wds_webhook_attempts_total', { outcome: 'delivered' }) >= 1) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  // The SDK's exporter and our counters are read after the work.
  text.api = await scrapeText(`${stack.url}/metrics`);
  text.worker = await scrapeText(`http://127.0.0.1:${workerPort}/metrics`);
  text.temporal = await scrapeText(`http://127.0.0.1:${temporalPort}/metrics`);
  // Three scrapes after the work, so rates over the last 30 s see it and the rules have evaluated on it.
  await prom.waitForScrapes(3);
  if (process.env.WDS_METRICS_DUMP) for (const [k, v] of Object.entries(text)) writeFileSync(`${process.env.WDS_METRICS_DUMP}-${k}.txt`, v);
});
/**
 * A scrape whose declared body is over WDS_MAX_REQUEST_BYTES (10 MiB). The API answers 413 from the header and
 * closes the connection, so the body is never sent in full (a client that writes all of it can see EPIPE instead).
 */
function oversizedScrape(): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${stack.url}/v2/scrape`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(11 * 1024 * 1024), authorization: `Bearer ${stack.apiKey}` },
    }, (res) => {
      res.resume();
      resolve(res.statusCode!);
      req.destroy();
    });
    req.on('error', (e) => reject(e));
    req.setTimeout(15_000, () => req.destroy(new Error('no answer to the oversized scrape')));
    req.write(`{"url":"${site.url('/page')}","pad":"`);
  });
}

after(async () => {
  await stack?.stop();
  await site?.close();
  await model?.close();
  await prom?.stop();
  hooks?.close();
});

describe('metrics', () => {
  test('API: requests by route pattern and status, jobs, cache, process metrics', () => {
    assert.ok(sampleSum(text.api, 'wds_http_requests_total', { method: 'POST', route: '/v2/scrape', status: '200' }) >= 2);
    assert.ok(sampleSum(text.api, 'wds_http_requests_total', { route: '/v2/crawl/:id', status: '200' }) >= 1, 'route patterns, not URLs');
    assert.ok(!/wds_http_requests_total\{[^}]*route="\/v2\/crawl\/[0-9a-f-]{36}"/.test(text.api), 'no ids in labels');
    assert.ok(sampleSum(text.api, 'wds_http_request_duration_seconds_count', { route: '/v2/scrape' }) >= 3);
    assert.ok(sampleSum(text.api, 'wds_jobs_started_total', { kind: 'scrape' }) >= 2);
    assert.ok(sampleSum(text.api, 'wds_jobs_started_total', { kind: 'crawl' }) >= 1);
    assert.ok(sampleSum(text.api, 'wds_jobs_finished_total', { kind: 'scrape', status: 'completed' }) >= 2);
    assert.equal(sampleSum(text.api, 'wds_cache_lookups_total', { result: 'hit', source: 'api' }), 1);
    assert.ok(sampleSum(text.api, 'wds_cache_lookups_total', { result: 'miss', source: 'api' }) >= 1);
    assert.ok(sampleSum(text.api, 'wds_process_resident_memory_bytes') > 0);
  });

  test('worker: scrape duration by engine, crawl pages, credits, finished crawls', () => {
    assert.ok(sampleSum(text.worker, 'wds_scrape_duration_seconds_count', { engine: 'http', outcome: 'success' }) >= 1);
    assert.ok(sampleSum(text.worker, 'wds_crawl_pages_total', { kind: 'crawl' }) >= 2);
    assert.ok(sampleSum(text.worker, 'wds_credits_used_total') >= 3);
    assert.equal(sampleSum(text.worker, 'wds_jobs_finished_total', { kind: 'crawl', status: 'completed' }), 1);
    assert.ok(sampleSum(text.worker, 'wds_process_cpu_seconds_total') > 0);
  });

  test('worker: model steps by model and outcome, tokens both ways, credits', () => {
    assert.equal(sampleSum(text.worker, 'wds_llm_calls_total', { model: 'fake-model', use: 'scrape', outcome: 'success' }), 1);
    assert.ok(sampleSum(text.worker, 'wds_llm_tokens_total', { model: 'fake-model', direction: 'prompt' }) > 0);
    assert.ok(sampleSum(text.worker, 'wds_llm_tokens_total', { model: 'fake-model', direction: 'completion' }) > 0);
    assert.equal(sampleSum(text.worker, 'wds_llm_credits_total', { model: 'fake-model' }), 4);
    assert.equal(sampleSum(text.worker, 'wds_llm_step_duration_seconds_count', { model: 'fake-model', outcome: 'success' }), 1);
  });

  test('worker: agent runs by outcome, steps, tool calls, credits', () => {
    assert.equal(sampleSum(text.worker, 'wds_agent_runs_started_total', { role: 'orchestrator' }), 1);
    assert.equal(sampleSum(text.worker, 'wds_agent_runs_finished_total', { role: 'orchestrator', outcome: 'succeeded', code: 'none' }), 1);
    assert.equal(sampleSum(text.worker, 'wds_agent_steps_total', { model: 'spark-2' }), 1);
    assert.equal(sampleSum(text.worker, 'wds_agent_tool_calls_total', { tool: 'finish', outcome: 'success' }), 1);
    assert.ok(sampleSum(text.worker, 'wds_credits_used_total', { kind: 'agent' }) >= 1);
  });

  test('worker: webhook attempts by outcome', () => {
    assert.ok(hooksReceived >= 1, 'the receiver got the crawl’s events');
    assert.ok(sampleSum(text.worker, 'wds_webhook_attempts_total', { outcome: 'delivered' }) >= 1);
    assert.equal(sampleSum(text.worker, 'wds_webhook_attempts_total', { outcome: 'given_up' }), 0);
    const lag = sampleSum(text.worker, 'wds_webhook_delivery_lag_seconds_count');
    assert.ok(lag >= 1 && lag <= sampleSum(text.worker, 'wds_webhook_attempts_total', { outcome: 'delivered' }), 'one lag per delivery');
    assert.ok(sampleSum(text.worker, 'wds_webhook_delivery_lag_seconds_sum') / lag < 30, 'lags are seconds, not the epoch');
  });

  test('worker: task-queue backlog from Temporal (count and oldest age per queue and task type)', () => {
    for (const q of ['wds-control', 'wds-fetch', 'wds-browser', 'wds-llm', 'wds-media']) {
      for (const type of ['workflow', 'activity']) assert.ok(text.worker.includes(`wds_task_queue_backlog_tasks{task_queue="${q}",type="${type}"}`), `${q} ${type} exported`);
    }
    assert.ok(sampleSum(text.worker, 'wds_task_queue_backlog_tasks', { task_queue: 'wds-media', type: 'workflow' }) >= 1, 'the unpolled workflow task is counted');
    assert.ok(sampleSum(text.worker, 'wds_task_queue_backlog_age_seconds', { task_queue: 'wds-media', type: 'workflow' }) > 0, 'and aged');
    assert.equal(sampleSum(text.worker, 'wds_task_queue_backlog_tasks', { task_queue: 'wds-control', type: 'workflow' }), 0, 'a served queue has none waiting');
  });

  test('worker: the Temporal SDK exports its own metrics on its own port', () => {
    for (const n of ['temporal_worker_task_slots_available', 'temporal_activity_execution_latency_bucket', 'temporal_workflow_task_schedule_to_start_latency_bucket']) {
      assert.ok(exportedSamples(text.temporal).has(n), `${n} exported`);
    }
    assert.ok(!text.worker.includes('temporal_worker_task_slots_available'), 'separate from prom-client');
  });

  test('every Grafana panel’s query returns series from a real Prometheus that scraped the stack', async () => {
    const dir = join(root, 'infra/grafana/dashboards');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    assert.ok(files.length >= 3, 'dashboards exist');
    const empty: string[] = [];
    let exprs = 0;
    for (const f of files) {
      const dash = JSON.parse(readFileSync(join(dir, f), 'utf8'));
      const panels = (dash.panels ?? []).flatMap((p: { panels?: unknown[] }) => [p, ...(p.panels ?? [])]);
      for (const p of panels as { title?: string; type?: string; targets?: { expr?: string }[] }[]) {
        if (p.type === 'row') continue;
        assert.ok(p.targets?.length, `${f}: panel "${p.title}" has queries`);
        for (const t of p.targets!) {
          assert.ok(t.expr, `${f}: panel "${p.title}" has a PromQL expr`);
          exprs++;
          // Grafana's variables as Grafana would fill them for a 1 s scrape interval and a short dashboard range.
          const expr = t.expr!.replaceAll('$__rate_interval', '30s').replaceAll('$__range', '5m');
          const series = await prom.query(expr).catch((e: Error) => assert.fail(`${f}: panel "${p.title}": Prometheus refuses ${expr}: ${e.message}`));
          if (series.length === 0) empty.push(`${f}: ${p.title}: ${t.expr}`);
        }
      }
    }
    assert.ok(exprs >= 60, `${exprs} queries`);
    assert.deepEqual(empty.filter((e) => !EMPTY_PANELS.some((allowed) => e.includes(allowed))), [], 'panels with no series');
  });

  test('Prometheus loads every rule file and evaluates every rule without error on the stack’s series', async () => {
    const rules = await prom.rules();
    assert.ok(rules.length >= 25, `${rules.length} rules loaded`);
    for (const r of rules) assert.equal(r.health, 'ok', `${r.name}: ${r.lastError}`);
    // Recording rules give series (the SLO ratios the burn alerts read).
    for (const r of rules.filter((x) => x.type === 'recording')) assert.ok((await prom.query(r.name)).length > 0, `${r.name} recorded`);
  });

  test('every metric the rules’ unit tests feed is one the stack exports (Temporal server series aside)', async () => {
    // A rule's firing case only fires on the series it reads, so the names fed there are the names the rules read.
    const scraped = new Set((await prom.query('group by (__name__) ({__name__=~".+"})')).map((s) => s.metric.__name__!));
    assert.ok(scraped.has('wds_webhook_attempts_total'), 'the webhook rules’ counter is exported');
    // Served by the Temporal server's own metrics endpoint (job `temporal`), which the test dev server does not open.
    const temporalServer = new Set(['poll_success', 'poll_success_sync', 'poll_timeouts']);
    const dir = join(root, 'infra/prometheus/rules/tests');
    let fed = 0;
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.test.yml'))) {
      for (const t of (YAML.parse(readFileSync(join(dir, f), 'utf8')) as { tests: { input_series: { series: string }[] }[] }).tests) {
        for (const { series } of t.input_series) {
          const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(series)![0];
          fed++;
          if (!temporalServer.has(name)) assert.ok(scraped.has(name), `${f} feeds ${name}, which no process exports`);
        }
      }
    }
    assert.ok(fed >= 50, `${fed} series fed`);
  });
});
