import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import {
  namespaceFor,
  promptText,
  runningActivities,
  startCrawlSite,
  startFakeOpenAI,
  startStack,
  until,
  type CrawlSite,
  type FakeChatRequest,
  type FakeOpenAI,
  type FakeReply,
  type Stack,
} from '@wds/test-utils';

// Model-made formats on every page of crawls and batch scrapes, through the JS SDK, against the
// real stack whose wds-llm workers call a local OpenAI-compatible server over HTTP. The model
// step is its own activity window (LLM batches on wds-llm); a page is seen (status, WebSocket,
// webhook) only once its model-made fields are in, and billed once, per page.
let stack: Stack;
let site: CrawlSite;
let model: FakeOpenAI;
let fc: Firecrawl;

const TOKENS_PER_MINUTE = 1_000_000_000;
const PATIENCE_MS = 30_000;

/** What kind of call a request is, from its system prompt (packages/llm/src/prompts.ts). */
function kindOf(r: FakeChatRequest): string {
  const system = String(r.messages[0]?.content ?? '');
  if (system.includes('summarize web pages')) return 'summary';
  if (system.includes('answer questions')) return 'question';
  return 'json';
}
/** The page the model was shown: "Gen 7" for /gen/7 (its <h1>). */
const pageOf = (r: FakeChatRequest) => /# (Gen \d+)/.exec(promptText(r))?.[1] ?? 'unknown';

/** A model that reads the page's title; tests replace `behaviour` for their own failures and delays. */
let behaviour: (r: FakeChatRequest) => FakeReply | undefined = () => undefined;
function reply(r: FakeChatRequest): FakeReply {
  const own = behaviour(r);
  if (own) return own;
  const title = pageOf(r);
  if (kindOf(r) === 'summary') return { content: `Summary of ${title}.` };
  return { content: { title } };
}
const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] };

before(async () => {
  model = await startFakeOpenAI({ handler: reply });
  site = await startCrawlSite({ genPages: 40 });
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: {
      WDS_HOST_OVERRIDES: site.hostOverrides,
      ...model.env,
      WDS_LLM_CONCURRENCY: '8',
      WDS_LLM_TIMEOUT_MS: '3000',
      // On for every test (reserve and correct around each step); the token test fills the window.
      WDS_LLM_TOKENS_PER_MINUTE: String(TOKENS_PER_MINUTE),
      // A page whose provider keeps failing fails after this long (the outage test outlasts it).
      WDS_LLM_PAGE_PATIENCE_MS: String(PATIENCE_MS),
    },
  });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
  await model?.close();
});
beforeEach(() => {
  behaviour = () => undefined;
  model.reset();
});

type Doc = { json?: { title?: string }; summary?: string; markdown?: string; metadata: { title?: string; sourceURL: string; creditsUsed?: number } };

const genCrawl = (limit: number, more: Record<string, unknown> = {}) =>
  fc.startCrawl(site.url('/gen/0'), { limit, sitemap: 'skip', crawlEntireDomain: true, includePaths: ['^/gen/'], ...more } as never);

async function waitDone(id: string, kind: 'crawl' | 'batch' = 'crawl', timeoutMs = 120_000) {
  return until(
    async () => {
      const s = kind === 'crawl' ? await fc.getCrawlStatus(id, { autoPaginate: false }) : await fc.getBatchScrapeStatus(id, { autoPaginate: false });
      return s.status === 'scraping' ? null : s;
    },
    `job ${id} to end`,
    { timeoutMs, everyMs: 100 },
  );
}

const charges = async (jobId: string) =>
  (await stack.db.pool.query("SELECT idempotency_key AS key, amount FROM credit_ledger WHERE job_id = $1 AND entry = 'charge' ORDER BY idempotency_key", [jobId])).rows.map(
    (r: { key: string; amount: string | number }) => ({ key: r.key, amount: Number(r.amount) }),
  );

/** A webhook receiver on 127.0.0.1 recording every delivery. */
async function receiver(): Promise<{ url: string; bodies: any[]; close(): void }> {
  const bodies: any[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      bodies.push(JSON.parse(raw));
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies, close: () => server.close() };
}

describe('model-made formats on crawl and batch pages', () => {
  test('crawl with json + summary: every page enriched, 9 credits a page in the ledger; status, WebSocket and webhooks only ever show complete documents', async () => {
    const PAGES = 12;
    // Slow enough replies that the crawl is caught half-done.
    behaviour = (r) => {
      const title = pageOf(r);
      return kindOf(r) === 'summary' ? { content: `Summary of ${title}.`, delayMs: 800 } : { content: { title }, delayMs: 800 };
    };
    const hook = await receiver();
    try {
      // maxConcurrency 4: four model steps at a time, so pages complete over a few seconds.
      const { id } = await genCrawl(PAGES, { maxConcurrency: 4, scrapeOptions: { formats: ['markdown', { type: 'json', schema }, 'summary'] }, webhook: { url: hook.url } });
      const watcher = fc.watcher(id, { kind: 'crawl', pollInterval: 1 });
      const streamed: Doc[] = [];
      watcher.on('document', (d: Doc) => streamed.push(d));
      const watched = new Promise<{ status: string }>((resolve) => watcher.on('done', resolve));
      // start() resolves when the job is done: the status is polled meanwhile.
      const watching = watcher.start();

      // While the crawl runs, every document the status shows is complete.
      let sawPartial = false;
      let polls = 0;
      const seen: number[] = [];
      for (;;) {
        const s = await fc.getCrawlStatus(id, { autoPaginate: false });
        polls++;
        seen.push(s.completed);
        for (const d of s.data as Doc[]) {
          assert.equal(d.json?.title, d.metadata.title, 'status shows a document only with its json');
          assert.equal(d.summary, `Summary of ${d.metadata.title}.`);
        }
        if (s.status !== 'scraping') break;
        if (s.completed > 0 && s.completed < PAGES) sawPartial = true;
        await new Promise((r) => setTimeout(r, 150));
      }
      assert.ok(polls > 3 && sawPartial, `the crawl was watched while partly done (completed at each poll: ${seen.join(' ')})`);
      await watching;
      assert.equal((await watched).status, 'completed');

      const all = await fc.getCrawlStatus(id);
      assert.equal(all.status, 'completed');
      assert.equal(all.completed, PAGES);
      assert.equal(all.data.length, PAGES);
      for (const d of all.data as Doc[]) {
        assert.equal(d.json?.title, d.metadata.title);
        assert.equal(d.summary, `Summary of ${d.metadata.title}.`);
        assert.match(d.markdown ?? '', /Generated text/);
        assert.equal(d.metadata.creditsUsed, 9);
      }
      assert.equal(new Set(all.data.map((d) => d.metadata!.sourceURL)).size, PAGES);
      assert.equal(all.creditsUsed, PAGES * 9, '1 + 4 (json) + 4 (summary) per page');

      // The ledger: one charge per page, with its model-made formats.
      const billed = await charges(id);
      assert.equal(billed.length, PAGES);
      assert.ok(billed.every((c) => c.amount === 9 && c.key.startsWith(`page:${id}:`)), JSON.stringify(billed));

      // The model saw every page once per format, with the page text in the prompt.
      const chats = model.chatRequests();
      assert.equal(chats.filter((r) => kindOf(r) === 'json').length, PAGES);
      assert.equal(chats.filter((r) => kindOf(r) === 'summary').length, PAGES);
      assert.ok(chats.every((r) => /Generated text/.test(promptText(r))));

      // WebSocket: every page once, each complete.
      assert.equal(streamed.length, PAGES);
      for (const d of streamed) assert.equal(d.json?.title, d.metadata.title, 'the stream carries complete documents');

      // Webhooks: a crawl.page per page, each with its complete document.
      await until(() => hook.bodies.some((b) => b.type === 'crawl.completed'), 'the completed webhook', { timeoutMs: 30_000 });
      const pages = hook.bodies.filter((b) => b.type === 'crawl.page');
      assert.equal(pages.length, PAGES);
      for (const p of pages) assert.equal(p.data[0].json.title, p.data[0].metadata.title, 'the page webhook carries the complete document');
    } finally {
      hook.close();
    }
  });

  test('batch scrape with json: every page enriched, 5 credits a page', async () => {
    const urls = [3, 4, 5, 6, 7].map((i) => site.url(`/gen/${i}`));
    const job = await fc.batchScrape(urls, { options: { formats: [{ type: 'json', prompt: 'The page title' }] } as never, pollInterval: 1 });
    assert.equal(job.status, 'completed');
    assert.equal(job.data.length, urls.length);
    for (const d of job.data as Doc[]) {
      assert.equal(d.json?.title, d.metadata.title);
      assert.equal(d.markdown, undefined, 'markdown was only read by the model, not asked for');
      assert.equal(d.metadata.creditsUsed, 5);
    }
    assert.equal(job.creditsUsed, urls.length * 5);
    assert.ok(model.chatRequests().every((r) => /The page title/.test(promptText(r))), "the user's prompt reached the model");
  });

  test('a page whose model step fails for good is a failed page in /errors; the others complete', async () => {
    // Gen 3's reply never fits the schema: the extraction and its one repair fail (422).
    behaviour = (r) => (pageOf(r) === 'Gen 3' ? { content: { title: 3 } } : undefined);
    const { id } = await genCrawl(7, { scrapeOptions: { formats: [{ type: 'json', schema }] } });
    const s = await waitDone(id);
    assert.equal(s.status, 'completed');
    assert.equal(s.completed, 6);
    const errors = await fc.getCrawlErrors(id);
    assert.equal(errors.errors.length, 1, JSON.stringify(errors));
    assert.match(errors.errors[0]!.url, /\/gen\/3$/);
    assert.match(errors.errors[0]!.error, /schema|conform/i);
    const docs = (await fc.getCrawlStatus(id)).data as Doc[];
    assert.deepEqual(docs.map((d) => d.json?.title).sort(), ['Gen 0', 'Gen 1', 'Gen 2', 'Gen 4', 'Gen 5', 'Gen 6']);
    assert.equal((await charges(id)).length, 6, 'the failed page is not billed');
    assert.equal(model.chatRequests().filter((r) => pageOf(r) === 'Gen 3').length, 2, 'one attempt and one repair; a 422 is not retried');
  });

  test('a provider down for a while, then back: the crawl waits for it and completes', async () => {
    const downUntil = Date.now() + 5_000;
    let refused = 0;
    behaviour = () => (Date.now() < downUntil ? (refused++, { error: { status: 503, message: 'overloaded', type: 'server_error' } }) : undefined);
    const { id } = await genCrawl(7, { scrapeOptions: { formats: ['summary'] } });
    const s = await waitDone(id);
    assert.equal(s.status, 'completed');
    assert.ok(Date.now() >= downUntil, 'it completed only after the provider came back');
    assert.ok(refused >= 3, `retried while the provider was down (${refused} refusals)`);
    const docs = (await fc.getCrawlStatus(id)).data as Doc[];
    assert.equal(docs.length, 7);
    assert.ok(docs.every((d) => d.summary === `Summary of ${d.metadata.title}.`));
    assert.equal((await fc.getCrawlErrors(id)).errors.length, 0);
  });
});

describe('a provider down for longer than the patience', () => {
  test('each page fails with the last error after WDS_LLM_PAGE_PATIENCE_MS from its first failure; the crawl completes, nothing billed', { timeout: 150_000 }, async () => {
    const t0 = Date.now();
    behaviour = () => ({ error: { status: 503, message: 'overloaded for good', type: 'server_error' } });
    const { id } = await genCrawl(3, { scrapeOptions: { formats: ['summary'] } });
    const s = await waitDone(id, 'crawl', 120_000);
    assert.equal(s.status, 'completed');
    assert.equal(s.completed, 0);
    assert.ok(Date.now() - t0 >= PATIENCE_MS, 'the pages were retried for the whole patience');
    const errors = (await fc.getCrawlErrors(id)).errors;
    assert.equal(errors.length, 3, JSON.stringify(errors));
    for (const e of errors) assert.match(e.error, /^The model step kept failing for 30 s \(WDS_LLM_PAGE_PATIENCE_MS\): .*HTTP 503/);
    assert.ok(model.chatRequests().length >= 3 * 4, `retried with back-off (${model.chatRequests().length} calls)`);
    assert.equal((await charges(id)).length, 0);
  });
});

describe('isolation', () => {
  test('while the provider hangs, the LLM crawl fetches all its pages and a plain crawl runs at full speed; then the LLM crawl completes', { timeout: 240_000 }, async () => {
    const other = await startCrawlSite({ genPages: 60, genDelayMs: 30 });
    // The plain crawl's site is reached by a second host name (overrides are fixed per worker): its own port.
    const plain = async () => {
      const t0 = Date.now();
      const { id } = await fc.startCrawl(`http://127.0.0.1:${other.port}/gen/0`, { limit: 60, sitemap: 'skip', crawlEntireDomain: true, includePaths: ['^/gen/'], maxConcurrency: 10, scrapeOptions: { maxAge: 0 } } as never);
      const s = await waitDone(id);
      assert.equal(s.status, 'completed');
      assert.equal(s.completed, 60);
      return Date.now() - t0;
    };
    try {
      const alone = await plain();

      let hanging = true;
      behaviour = () => (hanging ? { hang: true } : undefined);
      const { id } = await genCrawl(20, { scrapeOptions: { formats: ['summary'] } });
      await until(() => model.inFlight > 0, 'model calls hanging', { timeoutMs: 30_000, everyMs: 20 });
      const beside = await plain();

      // Every page of the LLM crawl was fetched although no model call has answered; none is shown.
      const fetched = await until(
        async () => {
          const r = await stack.db.pool.query("SELECT count(*)::int AS n FROM crawl_urls WHERE job_id = $1 AND status = 'llm'", [id]);
          return r.rows[0].n === 20 ? r.rows[0].n : null;
        },
        'all 20 pages fetched and waiting for the model',
        { timeoutMs: 30_000 },
      );
      assert.equal(fetched, 20);
      const mid = await fc.getCrawlStatus(id, { autoPaginate: false });
      assert.equal(mid.status, 'scraping');
      assert.equal(mid.completed, 0);
      assert.equal(mid.data.length, 0, 'nothing half-done is shown');

      console.log(`plain crawl of 60 pages: ${alone} ms alone, ${beside} ms beside the hanging LLM crawl`);
      assert.ok(beside <= alone * 1.5 + 2_000, `the plain crawl kept its speed (${alone} ms alone, ${beside} ms beside)`);

      hanging = false;
      const s = await waitDone(id);
      assert.equal(s.status, 'completed');
      const docs = (await fc.getCrawlStatus(id)).data as Doc[];
      assert.equal(docs.length, 20);
      assert.ok(docs.every((d) => d.summary === `Summary of ${d.metadata.title}.`));
    } finally {
      await other.close();
    }
  });
});

describe('cancellation', () => {
  test('cancelling a crawl whose model calls hang stops both windows: calls aborted, nothing stored or billed, nothing pending', async () => {
    behaviour = () => ({ hang: true });
    const { id } = await genCrawl(10, { maxConcurrency: 2, scrapeOptions: { formats: ['summary'] } });
    await until(() => model.inFlight >= 2, 'model calls hanging', { timeoutMs: 30_000, everyMs: 20 });
    assert.equal(await fc.cancelCrawl(id), true);
    const s = await waitDone(id, 'crawl', 30_000);
    assert.equal(s.status, 'cancelled');
    await until(() => model.inFlight === 0, 'the hanging calls aborted', { timeoutMs: 15_000, everyMs: 50 });
    const calls = model.chatRequests().length;
    await new Promise((r) => setTimeout(r, 4_000));
    assert.equal(model.chatRequests().length, calls, 'no model call after the cancel');
    assert.equal(s.data.length, 0);
    assert.equal((await charges(id)).length, 0);
    const pending = await stack.db.pool.query('SELECT count(*)::int AS n FROM crawl_llm_pages WHERE job_id = $1', [id]);
    assert.equal(pending.rows[0].n, 0);
    const left = await stack.db.pool.query("SELECT count(*)::int AS n FROM crawl_urls WHERE job_id = $1 AND status IN ('queued', 'leased', 'llm')", [id]);
    assert.equal(left.rows[0].n, 0);
  });
});

describe('durability', () => {
  test('a worker SIGKILLed during an LLM batch: every page enriched once and billed once', { timeout: 240_000 }, async () => {
    const second = await stack.addWorker();
    const workers = [stack.worker, second];
    let stall = true;
    // Model calls hang (until WDS_LLM_TIMEOUT_MS) until the batch's worker is gone; then the survivor's retry answers.
    behaviour = () => (stall ? { hang: true } : undefined);
    // maxConcurrency 1: one LLM batch at a time, so the kill lands on the one running.
    const { id } = await genCrawl(6, { maxConcurrency: 1, scrapeOptions: { formats: ['summary'] } });
    const running = await until(
      async () => (await runningActivities(stack.namespace, `crawl-${id}`)).find((a) => a.type === 'runLlmBatch'),
      'an LLM batch running',
      { timeoutMs: 60_000, everyMs: 100 },
    );
    await until(() => model.inFlight > 0, 'its model call in flight', { timeoutMs: 20_000, everyMs: 20 });
    const victim = workers.find((w) => w.child.pid === running.pid)!;
    assert.ok(victim, 'the batch runs on one of the two workers');
    const stalledCalls = model.chatRequests().length;
    const interrupted = pageOf(model.lastChat()!);
    stall = false;
    victim.child.kill('SIGKILL');
    if (victim === stack.worker) stack.worker = second;

    const s = await waitDone(id, 'crawl', 180_000);
    assert.equal(s.status, 'completed');
    const docs = (await fc.getCrawlStatus(id)).data as Doc[];
    assert.equal(docs.length, 6);
    assert.equal(new Set(docs.map((d) => d.metadata.sourceURL)).size, 6, 'one document per page');
    assert.ok(docs.every((d) => d.summary === `Summary of ${d.metadata.title}.`), 'every page enriched');
    const billed = await charges(id);
    assert.equal(billed.length, 6, 'one charge per page');
    assert.ok(billed.every((c) => c.amount === 5));
    assert.equal(s.creditsUsed, 30);
    const db = await stack.db.pool.query('SELECT count(*)::int AS n FROM crawl_documents WHERE job_id = $1', [id]);
    assert.equal(db.rows[0].n, 6);
    assert.ok(stalledCalls >= 1 && model.chatRequests().length > stalledCalls);
    assert.ok(model.chatRequests().filter((r) => pageOf(r) === interrupted).length >= 2, `the interrupted page (${interrupted}) was asked again by the survivor`);
  });
});

describe('the token limit (WDS_LLM_TOKENS_PER_MINUTE)', () => {
  test('with the minute window full, a scrape and a batch wait for the next window, then complete; usage is corrected to the real tokens', { timeout: 150_000 }, async () => {
    // At least 15 s left in this minute, so the wait is seen clearly.
    const leftInMinute = () => 60_000 - (Date.now() % 60_000);
    if (leftInMinute() < 15_000) await new Promise((r) => setTimeout(r, leftInMinute() + 500));
    // Another worker of the deployment used the whole minute.
    await stack.db.pool.query(
      `INSERT INTO llm_token_windows (window_start, tokens) VALUES (date_trunc('minute', now()), $1)
       ON CONFLICT (window_start) DO UPDATE SET tokens = $1`,
      [TOKENS_PER_MINUTE],
    );
    const windowEnds = Date.now() + leftInMinute();
    behaviour = (r) => (kindOf(r) === 'summary' ? { content: `Summary of ${pageOf(r)}.`, usage: { prompt_tokens: 100, completion_tokens: 20 } } : undefined);

    const scrape = fc.scrape(site.url('/gen/9'), { formats: ['summary'], maxAge: 0, timeout: 120_000 } as never);
    const batch = fc.batchScrape([site.url('/gen/10'), site.url('/gen/11')], { options: { formats: ['summary'], maxAge: 0 } as never, pollInterval: 1 });
    await new Promise((r) => setTimeout(r, 3_000));
    assert.equal(model.chatRequests().length, 0, 'no model call while the window is full');

    const [doc, job] = await Promise.all([scrape, batch]);
    const waited = Date.now();
    assert.ok(waited >= windowEnds - 50, `completed after the window ended (${windowEnds - waited} ms early)`);
    assert.ok(model.requests[0]!.at >= windowEnds - 50, 'the first model call went out in the next window');
    assert.equal((doc as Doc).summary, 'Summary of Gen 9.');
    assert.equal(job.status, 'completed');
    assert.deepEqual((job.data as Doc[]).map((d) => d.summary).sort(), ['Summary of Gen 10.', 'Summary of Gen 11.']);

    // The reservations (page + instructions + 1,024 output tokens each) were corrected to the
    // provider's usage: 3 calls × 120 tokens.
    if (Date.now() % 60_000 < 55_000 && Math.floor(Date.now() / 60_000) === Math.floor(windowEnds / 60_000)) {
      const tokens = await stack.db.pool.query("SELECT tokens FROM llm_token_windows WHERE window_start = date_trunc('minute', now())");
      assert.equal(Number(tokens.rows[0]?.tokens), 3 * 120);
    }
  });
});
