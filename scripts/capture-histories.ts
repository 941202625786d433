// `node --import tsx scripts/capture-histories.ts`: runs each kind of job once on a fresh
// embedded stack and writes its workflow history to workflows/src/histories/, for the replay
// test (workflows/src/replay.test.ts). Capture again when a workflow changes on purpose, and
// keep the old files: running workflows still have to replay after a deploy.
// CAPTURE_ONLY=crawl-llm,scrape-llm,crawl-browser,interact,map,extract,crawl-params,parse,agent,monitor captures only those
// (of the jobs with model-made formats, browser pages, or of the kinds captured later); the others stay as they are.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { execFileSync } from 'node:child_process';
import { findTemporalCli, spawnApp } from '@wds/launch';
import { agentStepOf, FAST_MONITOR_ENV, html, startFakeOpenAI, startFixtureSite, toolCall, type FakeChatRequest } from '@wds/test-utils';
import { workflowIds } from '@wds/workflows/common';
import { startBenchStack } from '../bench/stack';

/** Ends the capture early (CAPTURE_ONLY). */
class Done extends Error {}
const out = new URL('../workflows/src/histories/', import.meta.url).pathname;
mkdirSync(out, { recursive: true });
const site = await startFixtureSite({
  '/': html('<html><body><main><h1>Home</h1><a href="/a">a</a> <a href="/b">b</a></main></body></html>'),
  '/a': html('<html><body><main><h1>A</h1><a href="/b">b</a></main></body></html>'),
  '/b': html('<html><body><main><h1>B</h1></main></body></html>'),
  '/slow': (_req, res) => void setTimeout(() => res.end('<html><body>late</body></html>'), 3_000),
  // Script-rendered: the crawl hands it to the browser window, whose rendered DOM links to /js-b (also a shell).
  '/js-a': html(`<html><body><div id="root"></div><script>document.getElementById('root').innerHTML = '<main><h1>JS A</h1><a href="/js-b">b</a></main>';</script></body></html>`),
  '/js-b': html(`<html><body><div id="root"></div><script>document.getElementById('root').innerHTML = '<main><h1>JS B</h1></main>';</script></body></html>`),
});
// A model for the LLM jobs: json replies carry a title, summaries are one line, a crawl prompt
// becomes a page limit; an agent scrapes /a, then finishes.
const model = await startFakeOpenAI({ handler: (r: FakeChatRequest) => {
  if (r.tools?.length) return agentStepOf(r) === 1 ? { toolCalls: [toolCall('scrape', { url: site.url('/a') }, 'c-a')] } : { toolCalls: [toolCall('finish', { data: { title: 'A' } }, 'c-fin')] };
  const system = String(r.messages[0]?.content ?? '');
  if (system.startsWith('You configure a web crawler')) return { content: { limit: 2, sitemap: 'skip' } };
  return system.includes('summarize') ? { content: 'A short summary.' } : { content: { title: 'T' } };
} });
// Monitors tick every second (FAST_MONITOR_ENV), so a tick that starts a run is captured in seconds.
const stack = await startBenchStack({ env: { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'sk-capture-not-a-secret', MODEL_NAME: 'fake-model', ...FAST_MONITOR_ENV } });
const only = process.env.CAPTURE_ONLY?.split(',').filter(Boolean);
const wanted = (name: string) => !only || only.includes(name);
// A second API on the same stack, starting scrapes with a local fetch.
const localApi = await spawnApp('api', {
  DATABASE_URL: stack.databaseUrl,
  TEMPORAL_ADDRESS: stack.temporalAddress,
  PORT: '0',
  HOST: '127.0.0.1',
  WDS_ALLOW_PRIVATE_NETWORK: 'true',
  WDS_SCRAPE_FETCH: 'local',
  WDS_METRICS_PORT: '0',
});
const connection = await Connection.connect({ address: stack.temporalAddress });
const client = new Client({ connection });
const post = async (base: string, path: string, body: unknown) => (await (await fetch(`${base}${path}`, { method: 'POST', headers: stack.headers, body: JSON.stringify(body) })).json()) as any;
async function save(name: string, workflowId: string) {
  const h = client.workflow.getHandle(workflowId);
  await h.result().catch(() => undefined);
  // The CLI's JSON is the format Temporal's tools exchange and historyFromJSON reads.
  const json = execFileSync(findTemporalCli()!, ['workflow', 'show', '--workflow-id', workflowId, '--address', stack.temporalAddress, '--output', 'json'], { encoding: 'utf8' });
  writeFileSync(`${out}${name}.json`, json);
  process.stdout.write(`wrote ${name}.json\n`);
}
/** The first closed workflow of `type` that `accept` takes (visibility lags a little); jobs answered synchronously carry no workflow id. */
async function closedOf(type: string, accept: (id: string) => Promise<boolean> = async () => true): Promise<string> {
  for (let i = 0; i < 300; i++) {
    for await (const w of client.workflow.list({ query: `WorkflowType = '${type}' AND ExecutionStatus != 'Running'` })) if (await accept(w.workflowId)) return w.workflowId;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no closed ${type} showed up in visibility`);
}
try {
  if (wanted('map')) {
    await post(stack.base, '/v2/map', { url: site.url('/'), sitemap: 'skip' });
    await save('map', await closedOf('mapWorkflow'));
  }
  if (wanted('extract')) {
    const extract = await post(stack.base, '/v2/extract', { urls: [site.url('/a'), site.url('/b')], prompt: 'the title' });
    await save('extract', workflowIds.extract(extract.id));
  }
  if (wanted('crawl-params')) {
    await post(stack.base, '/v2/crawl/params-preview', { url: site.url('/'), prompt: 'at most two pages' });
    await save('crawl-params', await closedOf('crawlParamsWorkflow'));
  }
  if (wanted('parse')) {
    const form = new FormData();
    form.append('file', new Blob(['<html><body><main><h1>Parsed</h1></main></body></html>'], { type: 'text/html' }), 'page.html');
    const parsed = await fetch(`${stack.base}/v2/parse`, { method: 'POST', headers: { authorization: stack.headers.authorization! }, body: form });
    if (parsed.status !== 200) throw new Error(`parse: ${parsed.status} ${await parsed.text()}`);
    await save('parse', await closedOf('parseWorkflow'));
  }
  if (wanted('agent')) {
    const agent = await post(stack.base, '/v2/agent', { prompt: 'The title of page A' });
    await save('agent', workflowIds.agent(agent.id));
  }
  if (wanted('monitor')) {
    // A run started by "run now", then a tick that started a run of the (due) monitor.
    const monitor = await post(stack.base, '/v2/monitor', { name: 'capture', schedule: { cron: '* * * * *' }, targets: [{ type: 'scrape', urls: [site.url('/a'), site.url('/b')] }] });
    await post(stack.base, `/v2/monitor/${monitor.id}/run`, {});
    await save('monitor-run', await closedOf('monitorRunWorkflow'));
    const startedRuns = async (id: string) => ((await client.workflow.getHandle(id).result()) as { runs: number }).runs > 0;
    await save('monitor-tick', await closedOf('monitorTickWorkflow', startedRuns));
  }
  if (wanted('scrape-llm')) {
    const llm = await post(stack.base, '/v2/scrape', { url: site.url('/b'), maxAge: 0, formats: ['summary'] });
    await save('scrape-llm', workflowIds.scrape(llm.data.metadata.scrapeId));
  }
  if (wanted('crawl-browser')) {
    const browserWorker = await spawnApp('worker', { ...stack.env, WDS_WORKER_QUEUES: 'wds-browser', WDS_BROWSER_PAGES: '2' });
    try {
      const browserCrawl = await post(stack.base, '/v2/crawl', { url: site.url('/js-a'), limit: 3, sitemap: 'skip', crawlEntireDomain: true, scrapeOptions: { maxAge: 0 } });
      await save('crawl-browser', workflowIds.crawl(browserCrawl.id));
    } finally {
      browserWorker.child.kill('SIGTERM');
    }
  }
  if (wanted('interact')) {
    // A session: the scrape's parked page adopted, two code calls, stopped by DELETE.
    const browserWorker = await spawnApp('worker', { ...stack.env, WDS_WORKER_QUEUES: 'wds-browser', WDS_BROWSER_PAGES: '2' });
    try {
      const scraped = await post(stack.base, '/v2/scrape', { url: site.url('/js-a'), mobile: true, maxAge: 0 });
      const id = scraped.data.metadata.scrapeId as string;
      for (const code of ['await page.title()', `await page.textContent('h1')`]) await post(stack.base, `/v2/scrape/${id}/interact`, { code });
      const stopped = await fetch(`${stack.base}/v2/scrape/${id}/interact`, { method: 'DELETE', headers: { authorization: stack.headers.authorization! } });
      if (stopped.status !== 200) throw new Error(`stop: ${stopped.status} ${await stopped.text()}`);
      await save('interact', workflowIds.interact(id));
    } finally {
      browserWorker.child.kill('SIGTERM');
    }
  }
  if (wanted('crawl-llm')) {
    const llmCrawl = await post(stack.base, '/v2/crawl', { url: site.url('/'), limit: 3, sitemap: 'skip', scrapeOptions: { formats: ['markdown', 'summary'] } });
    await save('crawl-llm', workflowIds.crawl(llmCrawl.id));
  }
  if (only) throw new Done();
  const scraped = await post(stack.base, '/v2/scrape', { url: site.url('/'), maxAge: 0 });
  await save('scrape-queue', workflowIds.scrape(scraped.data.metadata.scrapeId));
  const local = await post(localApi.url!.replace('localhost', '127.0.0.1'), '/v2/scrape', { url: site.url('/a'), maxAge: 0 });
  await save('scrape-local', workflowIds.scrape(local.data.metadata.scrapeId));
  await post(stack.base, '/v2/scrape', { url: site.url('/slow'), timeout: 1_000, maxAge: 0 });
  // The 408 carries no scrape id: the failed run is found through visibility (which lags a little).
  let failed: string | undefined;
  for (let i = 0; i < 100 && !failed; i++) {
    for await (const w of client.workflow.list({ query: `WorkflowType = 'scrapeWorkflow' AND ExecutionStatus = 'Failed'` })) failed = w.workflowId;
    if (!failed) await new Promise((r) => setTimeout(r, 200));
  }
  if (!failed) throw new Error('the failed scrape never showed up in visibility');
  await save('scrape-timeout', failed);
  const crawl = await post(stack.base, '/v2/crawl', { url: site.url('/'), limit: 3, sitemap: 'skip' });
  await save('crawl', workflowIds.crawl(crawl.id));
  const batch = await post(stack.base, '/v2/batch/scrape', { urls: [site.url('/a'), site.url('/b')] });
  await save('batch', workflowIds.batch(batch.id));
} catch (e) {
  if (!(e instanceof Done)) throw e;
} finally {
  await model.close();
  await connection.close();
  localApi.child.kill('SIGTERM');
  await stack.stop();
  await site.close();
}
process.exit(0);
