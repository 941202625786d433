import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { Client, Connection } from '@temporalio/client';
import { setTeamLimits } from '@wds/db';
import {
  call,
  html,
  namespaceFor,
  promptText,
  runningActivities,
  startFakeOpenAI,
  startFakeSearxng,
  startFixtureSite,
  startStack,
  until,
  type FakeChatRequest,
  type FakeOpenAI,
  type FakeReply,
  type FakeSearxng,
  type FixtureSite,
  type Stack,
} from '@wds/test-utils';

// POST /v2/extract and the crawl `prompt` (POST /v2/crawl, POST /v2/crawl/params-preview)
// through the official JS SDK, against the real stack whose workers call a local
// OpenAI-compatible server over HTTP.
let stack: Stack;
let site: FixtureSite;
let model: FakeOpenAI;
let searx: FakeSearxng;
let fc: Firecrawl;

const page = (title: string, body: string) => html(`<html><head><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`);

/** Kind of model call, from its system prompt (packages/llm/src/prompts.ts and tasks.ts). */
function kindOf(r: FakeChatRequest): 'page' | 'merge' | 'crawl' | 'other' {
  const system = String(r.messages[0]?.content ?? '');
  if (system.startsWith('You extract structured data')) return 'page';
  if (system.startsWith('You reconcile data')) return 'merge';
  if (system.startsWith('You configure a web crawler')) return 'crawl';
  return 'other';
}

/** Per-page answers, keyed by a word only that page's text holds: proves the page text reached the model. */
const PAGE_ANSWERS: Array<[RegExp, object]> = [
  [/Rocket skates/, { company: 'Acme', founded: 1949, products: ['Rocket skates', 'Anvil'] }],
  [/Giant magnet/, { company: 'ACME ', founded: null, products: ['anvil', 'Giant magnet'] }],
  [/Earthquake pills/, { company: 'Acme', founded: 1951, products: ['Earthquake pills'] }],
  [/Bird seed/, { company: 'Acme', founded: null, products: ['Bird seed'] }],
];
const overrides = new Map<string, (r: FakeChatRequest) => FakeReply | undefined>();
function reply(r: FakeChatRequest): FakeReply | undefined {
  const kind = kindOf(r);
  const o = overrides.get(kind)?.(r);
  if (o) return o;
  if (kind === 'page') {
    const text = promptText(r);
    const hit = PAGE_ANSWERS.find(([re]) => re.test(text));
    return { content: hit ? hit[1] : { company: null, founded: null, products: [] } };
  }
  if (kind === 'merge') return { content: { choices: [{ path: 'founded', index: 1 }] } };
  if (kind === 'crawl') return { content: { includePaths: ['^/blog/.*'], limit: 3, sitemap: 'skip', excludePaths: null } };
  return undefined;
}

const schema = {
  type: 'object',
  properties: { company: { type: 'string' }, founded: { type: ['integer', 'null'] }, products: { type: 'array', items: { type: 'string' } } },
  required: ['company', 'products'],
};

before(async () => {
  model = await startFakeOpenAI({ handler: reply });
  // enableWebSearch asks the deployment's search: here the own index and (a local) SearXNG, both.
  searx = await startFakeSearxng();
  site = await startFixtureSite({
    '/about': page('About Acme', '<p>Acme makes Rocket skates and anvils. Founded 1949.</p>'),
    '/shop': page('Shop', '<p>Giant magnet, anvil.</p>'),
    '/catalog/': page('Catalog', '<p>Our catalog.</p><a href="/catalog/pills">Pills</a> <a href="/catalog/seed">Seed</a> <a href="/blog/a">Blog</a>'),
    '/catalog/pills': page('Pills', '<p>Earthquake pills. Since 1951.</p>'),
    '/catalog/seed': page('Seed', '<p>Bird seed, for roadrunners.</p>'),
    '/': page('Home', '<a href="/blog/a">A</a> <a href="/blog/b">B</a> <a href="/blog/c">C</a> <a href="/blog/d">D</a> <a href="/about">About</a> <a href="/shop">Shop</a>'),
    '/blog/a': page('Blog A', '<p>Post A</p>'),
    '/blog/b': page('Blog B', '<p>Post B</p>'),
    '/blog/c': page('Blog C', '<p>Post C</p>'),
    '/blog/d': page('Blog D', '<p>Post D</p>'),
  });
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: {
      ...model.env,
      WDS_LLM_CONCURRENCY: '4',
      // The stranded-job sweep looks at jobs this old (a running workflow is never swept).
      WDS_STRANDED_JOB_GRACE_MS: '5000',
      WDS_STRANDED_JOB_SWEEP_MS: '500',
      WDS_CRAWL_PROMPT_TIMEOUT_MS: '8000',
      SEARXNG_ENDPOINT: searx.url,
      WDS_SEARCH_PROVIDER: 'both',
    },
  });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
  await model?.close();
  await searx?.close();
});
beforeEach(() => {
  overrides.clear();
  model.reset();
  searx.reset();
});

const ledger = async (jobId: string) =>
  (await stack.db.pool.query("SELECT idempotency_key, amount FROM credit_ledger WHERE job_id = $1 AND entry = 'charge' ORDER BY idempotency_key", [jobId])).rows as { idempotency_key: string; amount: string }[];

type ExtractResult = { success?: boolean; id?: string; status?: string; data?: any; sources?: Record<string, string[]>; creditsUsed?: number; expiresAt?: string; warning?: string; error?: string };

describe('POST /v2/extract', () => {
  test('a schema over named pages: every page reaches the model, one merged answer, credits by tokens', async () => {
    const r = (await fc.extract({ urls: [site.url('/about'), site.url('/shop')], schema, prompt: 'The company and its products', pollInterval: 1 } as never)) as ExtractResult;
    assert.equal(r.status, 'completed', JSON.stringify(r));
    assert.equal(r.data.company, 'Acme');
    assert.equal(r.data.founded, 1949, 'the value one page gave, the other page had none');
    assert.deepEqual(r.data.products, ['Rocket skates', 'Anvil', 'Giant magnet'], 'arrays concatenated, duplicates (anvil) dropped');
    const pages = model.chatRequests().filter((x) => kindOf(x) === 'page');
    assert.equal(pages.length, 2);
    assert.ok(pages.some((x) => /Rocket skates/.test(promptText(x))) && pages.some((x) => /Giant magnet/.test(promptText(x))), 'both page texts reached the model');
    assert.ok(pages.every((x) => /The company and its products/.test(promptText(x))), "the request's prompt reached the model");
    assert.equal(model.chatRequests().filter((x) => kindOf(x) === 'merge').length, 0, 'no conflict, no merge call');
    assert.equal(r.sources, undefined, 'sources only with showSources');
    const charges = await ledger(r.id!);
    const billed = charges.reduce((n, c) => n + Number(c.amount), 0);
    assert.ok(billed > 0);
    assert.equal(r.creditsUsed, billed, 'creditsUsed is what the ledger holds');
    assert.ok(Date.parse(r.expiresAt!) > Date.now() + 23 * 3_600_000);
    assert.match(r.warning!, /deprecated/);
  });

  test('wildcard expansion through map, showSources, a conflict settled by one model call', async () => {
    const r = (await fc.extract({ urls: [site.url('/about'), site.url('/catalog/*')], schema, showSources: true, pollInterval: 1 } as never)) as ExtractResult;
    assert.equal(r.status, 'completed', JSON.stringify(r));
    const read = model.chatRequests().filter((x) => kindOf(x) === 'page').map(promptText);
    assert.ok(read.some((t) => /Earthquake pills/.test(t)) && read.some((t) => /Bird seed/.test(t)), 'pages under /catalog/ were found and read');
    assert.ok(!read.some((t) => /Post A/.test(t)), 'a page outside the wildcard was not read');
    assert.deepEqual(r.data.products, ['Rocket skates', 'Anvil', 'Earthquake pills', 'Bird seed']);
    // /about (named) said 1949, /catalog/pills (found) 1951: the model was asked, and chose index 1.
    const merges = model.chatRequests().filter((x) => kindOf(x) === 'merge');
    assert.equal(merges.length, 1);
    assert.match(promptText(merges[0]!), /1949[\s\S]*1951/);
    assert.equal(r.data.founded, 1951);
    assert.deepEqual(r.sources!.founded, [site.url('/catalog/pills')]);
    assert.deepEqual(r.sources!['products[0]'], [site.url('/about')]);
    assert.deepEqual(r.sources!['products[3]'], [site.url('/catalog/seed')]);
  });

  test('processing: data [] while the model works; Deprecation and Link headers', async () => {
    overrides.set('page', () => ({ content: { company: 'Acme', founded: null, products: [] }, delayMs: 3_000 }));
    const start = await call(stack, 'POST', '/v2/extract', { urls: [site.url('/about')], prompt: 'the company' });
    assert.equal(start.status, 200, start.text);
    assert.equal(start.headers.get('deprecation'), 'true');
    assert.equal(start.headers.get('link'), '</v2/agent>; rel="successor-version"');
    assert.match(start.json.url, new RegExp(`/v2/extract/${start.json.id}$`));
    const first = await call(stack, 'GET', `/v2/extract/${start.json.id}`);
    assert.equal(first.json.status, 'processing');
    assert.deepEqual(first.json.data, []);
    assert.equal(first.headers.get('deprecation'), 'true');
    const done = await until(async () => {
      const s = await call(stack, 'GET', `/v2/extract/${start.json.id}`);
      return s.json.status === 'processing' ? undefined : s.json;
    }, 'the extract to end', { timeoutMs: 60_000, everyMs: 500 });
    assert.equal(done.status, 'completed');
    assert.equal(done.data.company, 'Acme');
  });

  test('bad requests: invalid schema 422, neither prompt nor schema 400, bad URLs, unknown id', async () => {
    const bad = await call(stack, 'POST', '/v2/extract', { urls: [site.url('/about')], schema: { type: 'object', properties: { a: { type: 'no-such-type' } } } });
    assert.equal(bad.status, 422, bad.text);
    assert.equal(bad.json.success, false);
    assert.equal(bad.json.code, 'LLM_INVALID_SCHEMA');
    const none = await call(stack, 'POST', '/v2/extract', { urls: [site.url('/about')] });
    assert.equal(none.status, 400, none.text);
    const strict = await call(stack, 'POST', '/v2/extract', { urls: ['not a url'], prompt: 'x', ignoreInvalidURLs: false });
    assert.equal(strict.status, 400, strict.text);
    const empty = await call(stack, 'POST', '/v2/extract', { urls: ['not a url'], prompt: 'x' });
    assert.equal(empty.status, 400, empty.text);
    assert.match(JSON.stringify(empty.json.details), /at least one valid URL/);
    const nothing = await call(stack, 'POST', '/v2/extract', { prompt: 'Extract all the data from the page', enableWebSearch: true });
    assert.equal(nothing.status, 400, nothing.text);
    assert.match(JSON.stringify(nothing.json.details), /nothing to search for/);
    assert.equal((await call(stack, 'GET', '/v2/extract/not-a-uuid')).status, 400);
    assert.equal((await call(stack, 'GET', '/v2/extract/00000000-0000-4000-8000-000000000000')).status, 404);
    assert.equal(model.chatRequests().length, 0, 'nothing reached the model');
  });

  test('a page the model cannot read is left out with a warning; all pages failing fails the job', async () => {
    overrides.set('page', (r) => (/Giant magnet/.test(promptText(r)) ? { content: { company: 7 } } : undefined));
    const r = (await fc.extract({ urls: [site.url('/about'), site.url('/shop'), site.url('/missing')], schema, pollInterval: 1 } as never)) as ExtractResult;
    assert.equal(r.status, 'completed', JSON.stringify(r));
    assert.deepEqual(r.data.products, ['Rocket skates', 'Anvil']);
    assert.match(r.warning!, /could not extract from 1 page/);
    assert.match(r.warning!, /\/missing/, 'the 404 page was left out, and said so');
    overrides.set('page', () => ({ content: { company: 7 } }));
    const all = (await fc.extract({ urls: [site.url('/about')], schema, pollInterval: 1 } as never)) as ExtractResult;
    assert.equal(all.status, 'failed');
    assert.match(all.error!, /found nothing to answer from/);
  });

  test("the team's credit limit stops the page steps: partial data with a warning, live credits within the limit", async () => {
    const team = await stack.newTeam();
    // One page step reserves ~190 credits (page tokens + prompt + expected reply, 15 tokens a credit): room for one.
    await setTeamLimits(stack.db.db, team.teamId, { creditLimit: 250 });
    overrides.set('page', (r) => {
      const hit = PAGE_ANSWERS.find(([re]) => re.test(promptText(r)));
      return { content: hit ? hit[1] : {}, delayMs: 1_500 };
    });
    const mine = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
    const r = (await mine.extract({ urls: [site.url('/about'), site.url('/shop')], schema, pollInterval: 1 } as never)) as ExtractResult;
    assert.equal(r.status, 'completed', JSON.stringify(r));
    assert.equal(r.data.products.length, 2, 'one page read');
    assert.match(r.warning!, /1 page\(s\) were not read: the team's credit limit was reached; the data is partial/);
    assert.equal(model.chatRequests().filter((x) => kindOf(x) === 'page').length, 1, 'the refused page never reached the model');
    assert.ok(r.creditsUsed! > 0 && r.creditsUsed! <= 250, String(r.creditsUsed));
    const open = await stack.db.pool.query(
      "SELECT count(*)::int AS n FROM credit_ledger r WHERE r.job_id = $1 AND r.entry = 'reservation' AND NOT EXISTS (SELECT 1 FROM credit_ledger s WHERE s.reservation_key = r.idempotency_key)",
      [r.id],
    );
    assert.equal(open.rows[0].n, 0, 'no reservation left open');
  });

  test('a worker SIGKILLed during a page step: the extract completes, each page billed once', { timeout: 180_000 }, async () => {
    const second = await stack.addWorker();
    const workers = [stack.worker, second];
    let hung = false;
    // The first call for /shop hangs until its worker is gone; the retry on the survivor answers.
    overrides.set('page', (r) => {
      if (!hung && /Giant magnet/.test(promptText(r))) {
        hung = true;
        return { content: 'never sent', delayMs: 120_000 };
      }
      return undefined;
    });
    const start = await fc.startExtract({ urls: [site.url('/about'), site.url('/shop')], schema } as never);
    const id = start.id!;
    await until(() => hung && model.inFlight > 0, 'the /shop model call in flight', { timeoutMs: 60_000, everyMs: 50 });
    // The /about step answers at once: once it is done, the one page step running is the hung one.
    const running = await until(
      async () => {
        const acts = (await runningActivities(stack.namespace, `extract-${id}`)).filter((a) => a.type === 'extractPage');
        return acts.length === 1 ? acts[0] : undefined;
      },
      'the hung page step alone on a worker',
      { timeoutMs: 30_000, everyMs: 100 },
    );
    const victim = workers.find((w) => w.child.pid === running.pid)!;
    victim.child.kill('SIGKILL');
    if (victim === stack.worker) stack.worker = second;
    const done = await until(async () => {
      const s = (await fc.getExtractStatus(id)) as ExtractResult;
      return s.status === 'processing' ? undefined : s;
    }, 'the extract to end', { timeoutMs: 150_000, everyMs: 1_000 });
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.data.products, ['Rocket skates', 'Anvil', 'Giant magnet']);
    const shopCalls = model.chatRequests().filter((x) => kindOf(x) === 'page' && /Giant magnet/.test(promptText(x)));
    assert.equal(shopCalls.length, 2, 'the hung call was made again by the survivor');
    const keys = (await ledger(id)).map((c) => c.idempotency_key);
    assert.equal(keys.length, 2, `one charge per page: ${keys.join(', ')}`);
    assert.equal(new Set(keys).size, 2);
    assert.equal(done.creditsUsed, (await ledger(id)).reduce((n, c) => n + Number(c.amount), 0));
  });

  test('an extract whose workflow was terminated while the model read its pages is failed by the workers', async () => {
    overrides.set('page', () => ({ content: {}, delayMs: 30_000 }));
    const { id } = await fc.startExtract({ urls: [site.url('/about')], schema } as never);
    await until(async () => (await runningActivities(stack.namespace, `extract-${id}`)).some((a) => a.type === 'extractPage'), 'the page step', { timeoutMs: 60_000, everyMs: 100 });
    const connection = await Connection.connect({ address: stack.env.TEMPORAL_ADDRESS! });
    try {
      await new Client({ connection, namespace: stack.namespace }).workflow.getHandle(`extract-${id}`).terminate('an operator stopped it');
    } finally {
      await connection.close();
    }
    const ended = await until(async () => {
      const s = (await fc.getExtractStatus(id!)) as ExtractResult;
      return s.status === 'processing' ? undefined : s;
    }, 'the extract to be failed', { timeoutMs: 60_000, everyMs: 250 });
    assert.equal(ended.status, 'failed');
    assert.match(ended.error!, /ended without finishing/);
  });
});

describe('retention', () => {
  test("an extract whose results expired is deleted by the workers' retention sweep, whole; an unexpired one is kept", async () => {
    const run = async () => (await fc.extract({ urls: [site.url('/about')], schema, prompt: 'The company', pollInterval: 1 } as never)) as ExtractResult;
    const [old, fresh] = [await run(), await run()];
    assert.equal(old.status, 'completed', JSON.stringify(old));
    assert.equal(fresh.status, 'completed', JSON.stringify(fresh));
    const rows = async (id: string) => (await stack.db.pool.query(
      `SELECT (SELECT count(*) FROM extract_jobs WHERE id = $1)::int AS job, (SELECT count(*) FROM extract_pages WHERE job_id = $1)::int AS pages,
              (SELECT count(*) FROM crawl_jobs WHERE id = $1)::int AS frontier, (SELECT count(*) FROM crawl_documents WHERE job_id = $1)::int AS docs,
              (SELECT count(*) FROM credit_ledger WHERE job_id = $1)::int AS ledger`, [id])).rows[0] as Record<string, number>;
    const kept = await rows(fresh.id!);
    assert.ok(kept.job === 1 && kept.pages > 0 && kept.frontier === 1 && kept.docs > 0, JSON.stringify(kept));
    const billed = (await rows(old.id!)).ledger;
    assert.ok(billed > 0);
    // Its 24 hours are up: the sweep (every 500 ms here) takes it.
    await stack.db.pool.query(`UPDATE jobs SET expires_at = now() - interval '1 second' WHERE id = $1`, [old.id]);
    await until(async () => ((await rows(old.id!)).job === 0 ? true : null), 'the sweep to delete the expired extract', { timeoutMs: 60_000 });
    assert.deepEqual(await rows(old.id!), { job: 0, pages: 0, frontier: 0, docs: 0, ledger: billed }, 'its pages and frontier went with it; its bill stays');
    assert.equal((await call(stack, 'GET', `/v2/extract/${old.id}`)).status, 404);
    assert.deepEqual(await rows(fresh.id!), kept, 'the sweep that took the expired one left this one');
    assert.equal(((await fc.getExtractStatus(fresh.id!)) as ExtractResult).data.company, 'Acme');
  });
});

describe('enableWebSearch', () => {
  test('the pages the search finds (the own index and SearXNG) are read with the named ones; no urls needed', async () => {
    // The own index holds what the team stored (a scrape of /about); SearXNG knows /catalog/pills.
    await fc.scrape(site.url('/about'), { formats: ['markdown'] });
    searx.corpus.general = [{ url: site.url('/catalog/pills'), title: 'Acme pills', content: 'What Acme makes: earthquake pills.' }];
    const r = (await fc.extract({ prompt: 'What Acme makes', schema, enableWebSearch: true, showSources: true, pollInterval: 1 } as never)) as ExtractResult;
    assert.equal(r.status, 'completed', JSON.stringify(r));
    assert.deepEqual([...new Set(searx.requests.map((q) => q.q))], ['Acme makes'], "the prompt's subject words were searched for");
    const read = model.chatRequests().filter((x) => kindOf(x) === 'page').map(promptText);
    assert.ok(read.some((t) => /Rocket skates/.test(t)), 'the page found in the own index was read');
    assert.ok(read.some((t) => /Earthquake pills/.test(t)), 'the page SearXNG found was read');
    assert.ok(r.data.products.includes('Rocket skates') && r.data.products.includes('Earthquake pills'), JSON.stringify(r.data));
    assert.deepEqual(r.sources!['products[0]'], [site.url('/about')]);

    // Beside named pages; a search that finds nothing is said in the warning, the named page is read.
    const named = (await fc.extract({ urls: [site.url('/shop')], prompt: 'Zanzibar quokkas', schema, enableWebSearch: true, pollInterval: 1 } as never)) as ExtractResult;
    assert.equal(named.status, 'completed', JSON.stringify(named));
    assert.deepEqual(named.data.products, ['anvil', 'Giant magnet']);
    assert.match(named.warning!, /Web search for "Zanzibar quokkas" found no pages/);
    assert.deepEqual(searx.requests.map((q) => q.q).slice(-2), ['Zanzibar quokkas', 'Zanzibar or quokkas'], 'then any of the words');
  });
});

describe('crawl prompt', () => {
  test('params-preview: the options the prompt turns into, validated, in the SDK shape; its tokens billed once', async () => {
    const before = await fc.getCreditUsage();
    const data = (await fc.crawlParamsPreview(site.url('/'), 'Only the blog posts, at most three')) as Record<string, unknown>;
    assert.deepEqual(data, { url: site.url('/'), includePaths: ['^/blog/.*'], limit: 3, sitemap: 'skip' });
    const asked = model.chatRequests().filter((x) => kindOf(x) === 'crawl');
    assert.equal(asked.length, 1);
    assert.match(promptText(asked[0]!), /Only the blog posts, at most three/);
    assert.match(promptText(asked[0]!), new RegExp(site.url('/').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    // Billed like extract: the model's tokens, 15 a credit, under the preview's own key.
    const bills = (await stack.db.pool.query(
      `SELECT l.idempotency_key, l.amount::int AS amount, p.tokens_used FROM crawl_param_previews p JOIN credit_ledger l ON l.job_id = p.id AND l.entry = 'charge'
       WHERE p.prompt = 'Only the blog posts, at most three'`)).rows as { idempotency_key: string; amount: number; tokens_used: number }[];
    assert.equal(bills.length, 1, JSON.stringify(bills));
    assert.ok(bills[0]!.tokens_used > 0);
    assert.equal(bills[0]!.amount, Math.ceil(bills[0]!.tokens_used / 15));
    assert.match(bills[0]!.idempotency_key, /^crawl-params:/);
    const after = await fc.getCreditUsage();
    assert.equal(before.remainingCredits - after.remainingCredits, bills[0]!.amount, 'the team pays what the ledger says');
  });

  test('crawl with prompt: options derived, the crawl completes within them; explicit fields win', async () => {
    const job = await fc.crawl(site.url('/'), { prompt: 'Only the blog posts', pollInterval: 1 } as never);
    assert.equal(job.status, 'completed');
    const urls = job.data.map((d) => new URL(String(d.metadata?.sourceURL ?? d.metadata?.url)).pathname);
    assert.ok(urls.length > 0 && urls.length <= 3, `within the derived limit: ${urls.join(', ')}`);
    assert.ok(urls.filter((p) => p !== '/').every((p) => p.startsWith('/blog/')), `only blog pages beyond the start: ${urls.join(', ')}`);
    const explicit = await fc.crawl(site.url('/'), { prompt: 'Only the blog posts', includePaths: ['^/about$'], pollInterval: 1 } as never);
    const paths = explicit.data.map((d) => new URL(String(d.metadata?.sourceURL ?? d.metadata?.url)).pathname);
    assert.deepEqual(paths, ['/about'], 'the request’s includePaths won over the model’s');
  });

  test('model output the crawl schema refuses: one repair, then a clear 422 and no crawl', async () => {
    // A regular expression RE2 cannot compile passes the JSON Schema but not the crawl's validation.
    overrides.set('crawl', () => ({ content: { includePaths: ['^/blog/(?=x)'] } }));
    const before = (await stack.db.pool.query("SELECT count(*)::int AS n FROM jobs WHERE kind = 'crawl'")).rows[0].n as number;
    const r = await call(stack, 'POST', '/v2/crawl', { url: site.url('/'), prompt: 'blog posts' });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.json.success, false);
    assert.match(r.json.error, /could not turn the prompt into valid crawl options/);
    assert.match(r.json.error, /includePaths/);
    assert.equal(model.chatRequests().filter((x) => kindOf(x) === 'crawl').length, 2, 'the answer and one repair');
    assert.match(promptText(model.chatRequests().at(-1)!), /includePaths/, 'the repair turn named the problem');
    const afterCount = (await stack.db.pool.query("SELECT count(*)::int AS n FROM jobs WHERE kind = 'crawl'")).rows[0].n as number;
    assert.equal(afterCount, before, 'no crawl was started with garbage options');
    const preview = await call(stack, 'POST', '/v2/crawl/params-preview', { url: site.url('/'), prompt: 'blog posts' });
    assert.equal(preview.status, 422, preview.text);
  });

  test('a provider failing for longer than the prompt budget: retried meanwhile, then 408 saying so', async () => {
    overrides.set('crawl', () => ({ error: { status: 503, message: 'overloaded', type: 'server_error' } }));
    const t0 = Date.now();
    const r = await call(stack, 'POST', '/v2/crawl/params-preview', { url: site.url('/'), prompt: 'blog posts' });
    assert.equal(r.status, 408, r.text);
    assert.match(r.json.error, /did not turn the prompt into crawl options within 8 s/);
    assert.match(r.json.error, /HTTP 503/, 'the last provider error is named');
    // Temporal stops retrying once the next backoff would end past the budget.
    assert.ok(Date.now() - t0 >= 5_000, 'failed only near the budget');
    assert.ok(model.chatRequests().filter((x) => kindOf(x) === 'crawl').length >= 2, 'retried while waiting');
  });
});
