import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { sampleSum } from '@wds/metrics/promql';
import type { AppProcess } from '@wds/launch';
import {
  activityStarts,
  exitOf,
  namespaceFor,
  runningActivities,
  startCrawlSite,
  startFixtureSite,
  startStack,
  until,
  type CrawlSite,
  type FixtureSite,
  type Stack,
} from '@wds/test-utils';

// A fleet as deployed: two API processes and three workers (control + fetch), separate OS
// processes on one Postgres database and Temporal namespace. A crawl and a steady stream of
// scrapes spread over both APIs run while one worker is SIGKILLed (holding a crawl batch) and
// one API is restarted (SIGTERM with scrapes in flight, then started again on its port). Every
// job must complete with exactly one document per URL, and the survivors' /metrics must show it.
const PAGES = 200;
const SCRAPE_MS = 500;
const LANES = 3;
let stack: Stack;
let crawlSite: CrawlSite;
let scrapeSite: FixtureSite;
let workers: AppProcess[];
let api2: AppProcess;

/** Scrapes whose page a worker has requested: the API had certainly accepted them. */
const reached = new Set<number>();
/** /item?n=N answers after SCRAPE_MS, so scrapes are in flight whenever a process is disturbed. */
function item(req: IncomingMessage, res: ServerResponse) {
  const n = new URL(req.url!, 'http://x').searchParams.get('n');
  reached.add(Number(n));
  const t = setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><head><title>Item ${n}</title></head><body><p>Item body ${n}</p></body></html>`), SCRAPE_MS);
  res.on('close', () => clearTimeout(t));
}

before(async () => {
  crawlSite = await startCrawlSite({ genPages: PAGES, genDelayMs: 80 });
  scrapeSite = await startFixtureSite({ '/item': item });
  // The APIs' drain time covers a scrape whose worker is killed (retried after a 10 s heartbeat timeout).
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_HOST_OVERRIDES: crawlSite.hostOverrides, WDS_SHUTDOWN_GRACE_MS: '60000' } });
  const [w2, w3, a2] = await Promise.all([stack.addWorker(), stack.addWorker(), stack.addApi()]);
  workers = [stack.worker, w2, w3];
  api2 = a2;
});
after(async () => {
  await stack?.stop();
  await crawlSite?.close();
  await scrapeSite?.close();
});

/** The test's load balancer: round robin over the API processes in rotation. */
class Balancer {
  private turn = 0;
  readonly inFlight = new Map<AppProcess, Set<number>>();
  readonly served = new Map<AppProcess, number>();
  constructor(private live: AppProcess[]) {}
  next(): AppProcess {
    return this.live[this.turn++ % this.live.length]!;
  }
  remove(a: AppProcess) {
    this.live = this.live.filter((x) => x !== a);
  }
  add(a: AppProcess) {
    this.live.push(a);
  }
}

test('crawl and scrapes survive a SIGKILLed worker and a restarted API; survivors report the work', { timeout: 420_000 }, async (t) => {
  const sdk = (a: AppProcess) => new Firecrawl({ apiKey: stack.apiKey, apiUrl: a.url! });
  const lb = new Balancer([stack.api, api2]);
  const { id: crawlId } = await sdk(api2).startCrawl(crawlSite.url('/gen/0'), {
    limit: PAGES,
    sitemap: 'skip',
    crawlEntireDomain: true,
    includePaths: ['^/gen/'],
    maxConcurrency: 10,
  } as never);

  // Scrape lanes: each sends its next scrape when the last one answered, to the next API. Like a
  // load balancer, a lane resends a request whose connection closed before any answer: the API
  // never read it (a draining API finishes what it has read), so no job exists for it yet — the
  // one-job-per-scrape check below would catch it if one did.
  const results: { n: number; api: AppProcess; resent: number; ms: number; title?: string; scrapeId?: string; error?: string }[] = [];
  let issued = 0;
  let stop = false;
  const scrapeOnce = async (n: number) => {
    const t0 = Date.now();
    for (let resent = 0; ; resent++) {
      const api = lb.next();
      const mine = lb.inFlight.get(api) ?? new Set<number>();
      lb.inFlight.set(api, mine.add(n));
      try {
        const doc = await sdk(api).scrape(scrapeSite.url(`/item?n=${n}`), { formats: ['markdown'], maxAge: 0 });
        lb.served.set(api, (lb.served.get(api) ?? 0) + 1);
        return { n, api, resent, ms: Date.now() - t0, title: doc.metadata?.title, scrapeId: doc.metadata?.scrapeId };
      } catch (e) {
        const msg = (e as Error).message;
        if (resent < 3 && /socket hang up|ECONNRESET|ECONNREFUSED/.test(msg)) continue;
        return { n, api, resent, ms: Date.now() - t0, error: msg };
      } finally {
        mine.delete(n);
      }
    }
  };
  const lane = async () => {
    while (!stop) results.push(await scrapeOnce(issued++));
  };
  const lanes = Promise.all(Array.from({ length: LANES }, lane));
  const status = () => sdk(stack.api).getCrawlStatus(crawlId, { autoPaginate: false });

  try {
    // 1. SIGKILL the worker that is running a crawl batch right now, mid-crawl.
    await until(async () => (await status()).completed >= 15, 'the crawl to get going', { timeoutMs: 120_000, everyMs: 200 });
    const pids = new Set(workers.map((w) => w.child.pid));
    const holder = await until(
      async () => (await runningActivities(stack.namespace, `crawl-${crawlId}`)).find((a) => a.type === 'processBatch' && pids.has(a.pid)),
      'a crawl batch running on a worker',
      { timeoutMs: 60_000, everyMs: 100 },
    );
    const victim = workers.find((w) => w.child.pid === holder.pid)!;
    const atKill = await status();
    assert.ok(atKill.completed < PAGES * 0.8, `the kill must happen mid-crawl (completed ${atKill.completed})`);
    victim.child.kill('SIGKILL');
    const survivors = workers.filter((w) => w !== victim);

    // 2. Restart api2 while it serves scrapes: out of rotation, SIGTERM, drain, start again.
    const accepted = () => [...(lb.inFlight.get(api2) ?? [])].filter((n) => reached.has(n));
    await until(() => accepted().length > 0, 'a scrape on api2 at the worker', { timeoutMs: 60_000, everyMs: 10 });
    lb.remove(api2);
    const draining = accepted();
    assert.equal((await status()).status, 'scraping', 'the restart happens mid-crawl');
    const exited = exitOf(api2.child);
    api2.child.kill('SIGTERM');
    assert.equal((await exited).code, 0, api2.output());
    const port = new URL(api2.url!).port;
    // Same port as a real restart; a free one if something took it meanwhile.
    const api2b = await stack.addApi({ PORT: port }).catch(() => stack.addApi());
    lb.add(api2b);
    await until(() => draining.every((n) => results.some((r) => r.n === n)), 'the drained scrapes to be answered', { timeoutMs: 60_000 });
    for (const n of draining) {
      const r = results.find((x) => x.n === n)!;
      assert.ok(!r.error && r.api === api2 && r.resent === 0, `scrape ${n}, in flight on api2 at SIGTERM, answered by it (${r.error ?? `resent ${r.resent}`})`);
    }

    // 3. Keep the load on until the crawl is done and the restarted API served some scrapes.
    const final = await until(
      async () => {
        const s = await status();
        return s.status !== 'scraping' && (lb.served.get(api2b) ?? 0) >= 3 ? s : null;
      },
      'the crawl to finish and api2b to serve scrapes',
      { timeoutMs: 240_000, everyMs: 500 },
    );
    stop = true;
    await lanes;
    t.diagnostic(
      `killed worker ${victim.child.pid} at ${atKill.completed}/${PAGES} pages; api2 drained ${draining.length} scrape(s); ` +
        `${issued} scrapes (${results.filter((r) => r.resent).length} resent, slowest ${Math.max(...results.map((r) => r.ms))} ms); ` +
        `served by api1/api2/api2b: ${[stack.api, api2, api2b].map((a) => lb.served.get(a) ?? 0).join('/')}`,
    );

    // Crawl: complete, exactly the fixture's page set, one document each.
    assert.equal(final.status, 'completed');
    const all = await sdk(api2b).getCrawlStatus(crawlId);
    const urls = all.data.map((d) => d.metadata!.sourceURL!);
    const expected = Array.from({ length: PAGES }, (_, i) => crawlSite.url(`/gen/${i}`));
    assert.equal(urls.length, PAGES, 'one document per page');
    assert.deepEqual([...new Set(urls)].sort(), expected.sort(), 'exactly the fixture pages');
    const docs = await stack.db.pool.query('SELECT count(*)::int AS n FROM crawl_documents WHERE job_id = $1', [crawlId]);
    assert.equal(docs.rows[0].n, PAGES);
    // The kill interrupted real work: the killed batch was retried on a survivor.
    const starts = await activityStarts(stack.namespace, `crawl-${crawlId}`, { closed: true });
    assert.ok(starts.some((s) => s.type === 'processBatch' && s.attempt > 1), 'a batch of the killed worker was retried');

    // Scrapes: all answered with their own page, one completed job each, none left over.
    const failed = results.filter((r) => r.error);
    assert.deepEqual(failed, [], 'every scrape succeeded');
    assert.equal(results.length, issued);
    for (const r of results) assert.equal(r.title, `Item ${r.n}`);
    const ids = new Set(results.map((r) => r.scrapeId));
    assert.equal(ids.size, issued, 'a distinct scrape job per request');
    const jobs = await stack.db.pool.query('SELECT id, status FROM scrape_jobs WHERE team_id = $1', [stack.teamId]);
    assert.equal(jobs.rows.length, issued, 'no scrape job without a request, none missing');
    assert.ok(jobs.rows.every((j: { id: string; status: string }) => j.status === 'completed' && ids.has(j.id)));
    assert.ok((lb.served.get(stack.api) ?? 0) > 0 && (lb.served.get(api2) ?? 0) > 0, 'both original APIs served scrapes');

    // Metrics of the survivors: each API counts exactly the scrapes it answered; workers the crawl.
    const text = async (url: string) => (await fetch(url)).text();
    for (const a of [stack.api, api2b]) {
      const m = await text(`${a.url}/metrics`);
      const served = lb.served.get(a) ?? 0;
      assert.equal(sampleSum(m, 'wds_http_requests_total', { method: 'POST', route: '/v2/scrape', status: '200' }), served, `${a.url} POST /v2/scrape 200`);
      assert.equal(sampleSum(m, 'wds_jobs_finished_total', { kind: 'scrape', status: 'completed' }), served);
    }
    const wm = await Promise.all(survivors.map((w) => text(w.metricsUrl!)));
    const sum = (name: string, labels: Record<string, string> = {}) => wm.reduce((n, t) => n + sampleSum(t, name, labels), 0);
    assert.ok(sum('wds_crawl_pages_total', { kind: 'crawl' }) > 0, 'survivors stored crawl pages');
    assert.ok(sum('wds_crawl_pages_total', { kind: 'crawl' }) <= PAGES);
    assert.ok(sum('wds_scrape_duration_seconds_count', { engine: 'http', outcome: 'success' }) > 0, 'survivors scraped');
    assert.ok(sum('wds_jobs_finished_total', { kind: 'crawl', status: 'completed' }) >= 1, 'a survivor finished the crawl');
  } finally {
    stop = true;
    await lanes;
  }
});
