import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import Firecrawl from '@mendable/firecrawl-js';
import {
  call, html, until, namespaceFor, scanFiles, scanTables, scanTemporalHistories, startFakeSearxng, startFixtureSite, startStack, tableNames, testInfra,
  type FakeSearxng, type FixtureSite, type Handler, type Stack,
} from '@wds/test-utils';

// Zero data retention end to end: after ZDR requests of every kind (scrape over HTTP and in the
// browser, crawl, batch scrape, parse, search with scrapeOptions) nothing of them is left: no
// table of the stack's database, no file of the file store, no log line of any process and no
// Temporal history holds the pages' marker, which every ZDR page carries in its URL path and its
// text. A control request without ZDR, made the same way, proves the searches find what is there.
const run = promisify(execFile);
const M = `zdrmark${randomBytes(6).toString('hex')}`;
const C = `ctrlmark${randomBytes(6).toString('hex')}`;
const dataDir = mkdtempSync(join(tmpdir(), 'wds-zdr-e2e-'));
let stack: Stack;
let site: FixtureSite;
let searx: FakeSearxng;
let team: { teamId: string; apiKey: string; name: string };
let fc: Firecrawl;
/** An API that runs every scrape as a workflow (WDS_SCRAPE_FETCH=queue): the direct path writes no Temporal history, so the history scan needs this one. */
let queueApi: { url: string };
const logs: { name: string; text: () => string }[] = [];
/** Every test's limit: a hang fails with a message instead of holding a test slot. */
const T = { timeout: 120_000 };

const page = (mark: string, title: string, body: string) =>
  `<!doctype html><html lang="en"><head><title>${title} ${mark}</title><meta name="description" content="about ${mark}"></head>` +
  `<body><main><h1>${title}</h1><p>Secret text ${mark} for nobody.</p>${body}</main></body></html>`;

/** Everything a process prints from now on. */
function capture(name: string, child: ChildProcess) {
  let text = '';
  const on = (d: Buffer) => void (text += d.toString());
  child.stdout!.on('data', on);
  child.stderr!.on('data', on);
  logs.push({ name, text: () => text });
}

before(async () => {
  const routes = (mark: string): Record<string, Handler> => ({
    [`/${mark}/page`]: html(page(mark, 'Start', `<a href="/${mark}/next">next</a><img src="/${mark}/pic.png" alt="pic">`)),
    [`/${mark}/next`]: html(page(mark, 'Next', '<p>second page</p>')),
    [`/${mark}/found`]: html(page(mark, 'Found', '<p>a search result</p>')),
    // A redirect loop: its error message names the URL it started from.
    [`/${mark}/loop`]: (_q, r) => void r.writeHead(302, { location: `/${mark}/loop` }).end(),
    [`/${mark}/js`]: html(page(mark, 'Scripted', `<div id="x"></div><script>document.getElementById('x').textContent = 'rendered ${mark}';</script>`)),
  });
  site = await startFixtureSite({ ...routes(M), ...routes(C) });
  searx = await startFakeSearxng({
    corpus: { general: [{ url: site.url(`/${M}/found`), title: 'Kettle result', content: 'A kettle page.' }, { url: site.url(`/${C}/found`), title: 'Kettle control', content: 'A kettle page.' }] },
  });
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: { LOG_LEVEL: 'debug', WDS_DATA_DIR: dataDir, SEARXNG_ENDPOINT: searx.url, WDS_SEARCH_PROVIDER: 'searxng', WDS_STRANDED_JOB_SWEEP_MS: '1000' },
  });
  capture('api', stack.api.child);
  capture('worker', stack.worker.child);
  capture('browser worker', (await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-browser', WDS_PUBLIC_URL: stack.url, WDS_BROWSER_PAGES: '2' })).child);
  const q = await stack.addApi({ WDS_SCRAPE_FETCH: 'queue' });
  capture('queue api', q.child);
  queueApi = { url: q.url! };
  const t = await stack.newTeam();
  const name = (await stack.db.pool.query('SELECT name FROM teams WHERE id = $1', [t.teamId])).rows[0].name as string;
  team = { ...t, name };
  fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
}, { timeout: 180_000 });
after(async () => {
  await stack?.stop();
  await site?.close();
  await searx?.close();
  rmSync(dataDir, { recursive: true, force: true });
}, { timeout: 60_000 });

const as = () => ({ url: stack.url, apiKey: team.apiKey });
const keysCli = (...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'apps/server/src/keys.ts', ...args], {
    env: { ...process.env, DATABASE_URL: stack.env.DATABASE_URL },
    cwd: new URL('../../../../', import.meta.url).pathname,
  });

describe('zero data retention', () => {
  test('403 until the operator enables it for the team (npm run keys -- flags)', T, async () => {
    const denied = await call(as(), 'POST', '/v2/scrape', { url: site.url(`/${M}/page`), zeroDataRetention: true });
    assert.equal(denied.status, 403, denied.text);
    assert.equal(denied.json.code, 'ZDR_NOT_ENABLED');
    for (const [path, body] of [
      ['/v2/crawl', { url: site.url(`/${M}/page`), zeroDataRetention: true }],
      ['/v2/batch/scrape', { urls: [site.url(`/${M}/page`)], zeroDataRetention: true }],
      ['/v2/search', { query: 'kettle', scrapeOptions: { zeroDataRetention: true } }],
    ] as const) {
      assert.equal((await call(as(), 'POST', path, body)).status, 403, path);
    }
    const on = await keysCli('flags', '--team', team.name, '--enable', 'zeroDataRetention');
    assert.deepEqual(JSON.parse(on.stdout), { zeroDataRetention: true });
    await assert.rejects(keysCli('flags', '--team', team.name, '--enable', 'zdr'), /unknown flag: zdr/);
  });

  test('scrape over HTTP: the page comes back, billed 1 + 1 (Firecrawl: ZDR +1 credit per page); a repeat is fetched again', T, async () => {
    const url = site.url(`/${M}/page`);
    const doc = await fc.scrape(url, { formats: ['markdown', 'html', 'rawHtml', 'links', 'images'], zeroDataRetention: true } as never);
    assert.match(doc.markdown!, new RegExp(`Secret text ${M}`));
    assert.equal(doc.metadata?.creditsUsed, 2);
    await fc.scrape(url, { zeroDataRetention: true } as never);
    assert.equal(site.hits(`/${M}/page`), 2, 'no cache entry was kept: the second scrape fetched the page again');
    const gone = await call(as(), 'GET', `/v2/scrape/${doc.metadata!.scrapeId}`);
    assert.equal(gone.status, 404, 'the scrape is not kept for GET /v2/scrape/{id}');
  });

  test('failing ZDR scrapes (unreachable host, redirect loop) answer their error and keep nothing either', T, async () => {
    const down = await call(as(), 'POST', '/v2/scrape', { url: `http://127.0.0.1:9/${M}/down`, zeroDataRetention: true, timeout: 5000 });
    assert.ok(down.status >= 400, down.text);
    // Both dispatch paths: the direct one (the default) and the workflow, whose failure Temporal keeps.
    for (const api of [stack.url, queueApi.url]) {
      const loop = await call({ url: api, apiKey: team.apiKey }, 'POST', '/v2/scrape', { url: site.url(`/${M}/loop`), zeroDataRetention: true, timeout: 10000 });
      assert.ok(loop.status >= 400, loop.text);
      assert.match(loop.json.error, /Too many redirects/);
    }
  });

  test('scrape in the browser (actions, script-rendered text): nothing stored', T, async () => {
    const r = await call(as(), 'POST', '/v2/scrape', {
      url: site.url(`/${M}/js`),
      zeroDataRetention: true,
      actions: [{ type: 'wait', milliseconds: 50 }, { type: 'executeJavascript', script: `return document.title` }, { type: 'scrape' }],
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.metadata.engine, 'browser');
    assert.match(r.json.data.markdown, new RegExp(`rendered ${M}`));
    assert.equal(r.json.data.actions.javascriptReturns[0].value, `Scripted ${M}`);
  });

  test('formats and actions that need stored files are refused (Firecrawl: SCRAPE_ZDR_VIOLATION_ERROR), as is saving a profile', T, async () => {
    for (const extra of [
      { formats: ['screenshot'] },
      { formats: [{ type: 'screenshot', fullPage: true }] },
      { actions: [{ type: 'screenshot' }] },
      { actions: [{ type: 'pdf' }] },
      { profile: { name: 'p1' } },
    ]) {
      const r = await call(as(), 'POST', '/v2/scrape', { url: site.url(`/${M}/page`), zeroDataRetention: true, ...extra });
      assert.equal(r.status, 400, `${JSON.stringify(extra)}: ${r.text}`);
      assert.equal(r.json.code, 'SCRAPE_ZDR_VIOLATION_ERROR', r.text);
    }
    const readOnly = await call(as(), 'POST', '/v2/scrape', { url: site.url(`/${M}/page`), zeroDataRetention: true, profile: { name: 'p1', saveChanges: false } });
    assert.equal(readOnly.status, 200, readOnly.text);
  });

  test('crawl: pages come back through the SDK, each billed 1 + 1; the job keeps no page once read', T, async () => {
    const job = await fc.crawl(site.url(`/${M}/page`), { limit: 5, sitemap: 'skip', crawlEntireDomain: true, zeroDataRetention: true, pollInterval: 1 } as never);
    assert.equal(job.status, 'completed');
    assert.equal(job.data.length, 2);
    assert.ok(job.data.every((d) => d.markdown!.includes(M)));
    assert.equal(job.creditsUsed, 4);
    // The read's response went out; its pages are deleted right after (on the response's finish).
    let again = await fc.getCrawlStatus(job.id!);
    for (let i = 0; again.data.length && i < 50; i++) again = await fc.getCrawlStatus(job.id!);
    assert.equal(again.status, 'completed');
    assert.equal(again.data.length, 0, 'pages are handed out until a read has returned them all, then deleted');
    assert.equal(again.completed, 2, 'the counters stay');
    assert.equal(again.creditsUsed, 4);
  });

  test('batch scrape: the same', T, async () => {
    const job = await fc.batchScrape([site.url(`/${M}/page`), site.url(`/${M}/next`)], { options: { formats: ['markdown'] }, zeroDataRetention: true, pollInterval: 1 } as never);
    assert.equal(job.data.length, 2);
    assert.ok(job.data.every((d) => d.markdown!.includes(M)));
    assert.equal(job.creditsUsed, 4);
  });

  test('parse: the upload comes back converted and is not kept', T, async () => {
    const doc = await fc.parse({ data: Buffer.from(`# Upload ${M}\n\nParsed secret ${M}.`), filename: `${M}.md`, contentType: 'text/markdown' }, { zeroDataRetention: true } as never);
    assert.match(doc.markdown!, new RegExp(`Parsed secret ${M}`));
  });

  test('search with scrapeOptions.zeroDataRetention: results scraped, nothing kept', T, async () => {
    const r = await fc.search('kettle', { limit: 2, scrapeOptions: { formats: ['markdown'], zeroDataRetention: true } } as never);
    const hit = (r.web as { url: string; markdown?: string }[]).find((w) => w.url.includes(M));
    assert.ok(hit?.markdown?.includes(`Secret text ${M}`), JSON.stringify(r.web).slice(0, 500));
  });

  test('batch scrape with a webhook: page events carry the pages; the data stays until they are delivered and read', T, async () => {
    const hooks: { type: string; data: { markdown?: string }[] }[] = [];
    site.route(`/hook-${M.slice(-6)}`, (q, r) => {
      let raw = '';
      q.on('data', (c) => (raw += c));
      q.on('end', () => {
        hooks.push(JSON.parse(raw));
        r.writeHead(200).end('ok');
      });
    });
    const hook = site.url(`/hook-${M.slice(-6)}`);
    const start = await call(as(), 'POST', '/v2/batch/scrape', { urls: [site.url(`/${M}/page`)], zeroDataRetention: true, webhook: { url: hook, events: ['page', 'completed'] } });
    assert.equal(start.status, 200, start.text);
    const id = start.json.id as string;
    await until(() => hooks.some((h) => h.type === 'batch_scrape.completed'), 'the completed webhook', { timeoutMs: 30_000 });
    assert.ok(hooks.find((h) => h.type === 'batch_scrape.page')?.data[0]?.markdown?.includes(M), 'the page webhook carries the page');
    const read = await call(as(), 'GET', `/v2/batch/scrape/${id}`);
    assert.equal(read.json.data.length, 1);
    await until(async () => (await stack.db.pool.query('SELECT count(*)::int AS n FROM crawl_documents WHERE job_id = $1', [id])).rows[0].n === 0, 'the pages to go after the read');
    const row = (await stack.db.pool.query('SELECT c.url, j.options, c.delivered_at FROM crawl_jobs c JOIN jobs j ON j.id = c.id WHERE c.id = $1', [id])).rows[0];
    assert.deepEqual({ url: row.url, options: row.options }, { url: null, options: { zeroDataRetention: true } });
    assert.ok(row.delivered_at);
  });

  test('results never read are deleted by the retention sweep after WDS_ZDR_RESULT_TTL_MS; rows a dead API left behind too', T, async () => {
    const start = await call(as(), 'POST', '/v2/batch/scrape', { urls: [site.url(`/${M}/next`)], zeroDataRetention: true });
    const id = start.json.id as string;
    await until(async () => (await stack.db.pool.query(`SELECT status FROM jobs WHERE id = $1 AND finished_at IS NOT NULL`, [id])).rows[0]?.status === 'completed', 'the batch to end');
    const docs = async () => (await stack.db.pool.query('SELECT count(*)::int AS n FROM crawl_documents WHERE job_id = $1', [id])).rows[0].n as number;
    assert.equal(await docs(), 1, 'unread results wait for their reader');
    // A scrape and a parse whose API died before deleting them (their requests' time is long up).
    const stranded = [randomUUID(), randomUUID()];
    await stack.db.pool.query(`INSERT INTO scrape_jobs (id, team_id, url, options, created_at) VALUES ($1, $2, NULL, $3, now() - interval '1 hour')`, [stranded[0], team.teamId, { url: site.url(`/${M}/page`), zeroDataRetention: true, timeout: 30000 }]);
    // A parse is a job of the kernel table: its row says when the request's time is up.
    await stack.db.pool.query(
      `WITH j AS (INSERT INTO jobs (id, team_id, kind, status, options, zero_data_retention, created_at, expires_at) VALUES ($1, $2, 'parse', 'running', $4, true, now() - interval '1 hour', now() - interval '50 minutes') RETURNING id)
       INSERT INTO parse_jobs (id, filename, upload, upload_bytes) SELECT id, $3, $5, 3 FROM j`,
      [stranded[1], team.teamId, `${M}.txt`, { zeroDataRetention: true }, Buffer.from(M)],
    );
    await until(async () => (await stack.db.pool.query('SELECT count(*)::int AS n FROM scrape_jobs WHERE id = ANY($1)', [stranded])).rows[0].n === 0, 'the worker to delete the stranded scrape', { timeoutMs: 20_000 });
    await until(async () => (await stack.db.pool.query('SELECT count(*)::int AS n FROM parse_jobs WHERE id = ANY($1)', [stranded])).rows[0].n === 0, 'the worker to delete the stranded parse', { timeoutMs: 20_000 });
    // The TTL is an hour here: its expiry is the same statement with the clock moved on.
    await stack.db.pool.query(`UPDATE jobs SET finished_at = now() - interval '2 hours' WHERE id = $1`, [id]);
    await until(async () => (await docs()) === 0, 'the retention sweep to delete the unread results', { timeoutMs: 20_000 });
  });

  test('control: the same requests without ZDR leave their marker where the scans look', T, async () => {
    const ctl = await stack.newTeam();
    const fcc = new Firecrawl({ apiKey: ctl.apiKey, apiUrl: stack.url });
    await fcc.scrape(site.url(`/${C}/page`), { formats: ['markdown', { type: 'screenshot' }] } as never);
    await fcc.crawl(site.url(`/${C}/page`), { limit: 2, sitemap: 'skip', crawlEntireDomain: true, pollInterval: 1 } as never);
    for (const api of [stack.url, queueApi.url]) {
      const loop = await call({ url: api, apiKey: ctl.apiKey }, 'POST', '/v2/scrape', { url: site.url(`/${C}/loop`), timeout: 10000 });
      assert.match(loop.json.error, new RegExp(`Too many redirects.*${C}`));
    }
    await new Promise((r) => setTimeout(r, 1000));
    const tables = (await scanTables(stack.db, C)).map((h) => h.where);
    for (const t of ['scrape_jobs.url', 'scrape_jobs.document', 'page_cache.body', 'crawl_documents.document', 'crawl_urls.url', 'search_pages.url']) {
      assert.ok(tables.some((w) => w === t), `the control's ${t} (found in: ${tables.join(', ')})`);
    }
    assert.ok(scanFiles(join(dataDir, 'files'), '').files.length >= 1, 'the control screenshot is a file');
    assert.ok(logs.some((l) => l.text().includes(C)), 'the control URL appears in a log line (the failure of its redirect loop)');
    const history = await scanTemporalHistories(testInfra().temporalAddress, stack.namespace, C);
    assert.ok(history.hits.length >= 1, 'the control URL appears in a Temporal history (the same failure, through the workflow path)');
  });

  test('afterwards: no table, file, log line or Temporal history holds the ZDR marker; the bills do', T, async () => {
    // Workers finish their bookkeeping (webhook-free here) and the SDK's failure lines come after an activity.
    await new Promise((r) => setTimeout(r, 1500));
    const names = await tableNames(stack.db);
    assert.ok(names.length >= 25, `all ${names.length} tables are searched`);
    assert.deepEqual(await scanTables(stack.db, M), [], 'a table holds the ZDR marker');
    const files = scanFiles(dataDir, M);
    assert.deepEqual(files.hits, [], 'a file holds the ZDR marker');
    for (const l of logs) assert.ok(!l.text().includes(M), `the ${l.name} log holds the ZDR marker:\n${l.text().split('\n').filter((x) => x.includes(M)).slice(0, 5).join('\n')}`);
    const history = await scanTemporalHistories(testInfra().temporalAddress, stack.namespace, M);
    assert.ok(history.workflows >= 8, `${history.workflows} workflows searched`);
    assert.deepEqual(history.hits, [], 'a Temporal history holds the ZDR marker');
    const bills = await stack.db.pool.query(`SELECT job_kind, sum(amount)::int AS credits FROM credit_ledger WHERE team_id = $1 AND entry = 'charge' GROUP BY 1 ORDER BY 1`, [team.teamId]);
    assert.ok(bills.rows.length >= 3, `the ZDR team's work is billed: ${JSON.stringify(bills.rows)}`);
  });
});

describe('auditMetadata and threatProtection', () => {
  test('auditMetadata is {username} (Firecrawl: required, up to 1024 characters, nothing else): anything else is a 400 naming it', T, async () => {
    for (const bad of ['alice', {}, { username: '' }, { username: 'x'.repeat(1025) }, { username: 'alice', role: 'admin' }, { username: 7 }]) {
      const r = await call(stack, 'POST', '/v2/scrape', { url: site.url(`/${C}/page`), auditMetadata: bad });
      assert.equal(r.status, 400, `${JSON.stringify(bad)}: ${r.text}`);
      assert.equal(r.json.details[0].path[0], 'auditMetadata', r.text);
    }
  });

  test('auditMetadata is stored with the job, comes back in its webhooks and is in the request log line', T, async () => {
    const fcm = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
    const doc = await fcm.scrape(site.url(`/${C}/next`), { auditMetadata: { username: 'alice@example.test' } });
    const row = (await stack.db.pool.query('SELECT options FROM scrape_jobs WHERE id = $1', [doc.metadata!.scrapeId])).rows[0];
    assert.deepEqual(row.options.auditMetadata, { username: 'alice@example.test' });
    const api = logs.find((l) => l.name === 'api')!;
    // The request line is written when the response has gone out: it may reach the pipe after the SDK has the answer.
    const requestLine = () => api.text().split('\n').filter(Boolean).map((l) => { try { return JSON.parse(l); } catch { return {}; } }).find((l) => l.msg === 'request' && l.scrapeId === doc.metadata!.scrapeId);
    await until(() => !!requestLine(), 'the request log line', { timeoutMs: 10_000 }).catch(() => undefined);
    const line = requestLine();
    assert.deepEqual(line?.auditMetadata, { username: 'alice@example.test' }, 'the request line names who it was for');

    const hooks: { type: string; auditMetadata?: unknown }[] = [];
    site.route('/audit-hook', (q, r) => {
      let raw = '';
      q.on('data', (c) => (raw += c));
      q.on('end', () => void (hooks.push(JSON.parse(raw)), r.writeHead(200).end()));
    });
    const job = await fcm.startCrawl(site.url(`/${C}/page`), { limit: 2, sitemap: 'skip', crawlEntireDomain: true, scrapeOptions: { auditMetadata: { username: 'bob' } }, webhook: { url: site.url('/audit-hook') } } as never);
    await until(() => hooks.some((h) => h.type === 'crawl.completed'), 'the crawl.completed webhook', { timeoutMs: 30_000 });
    assert.deepEqual([...new Set(hooks.map((h) => h.type))].sort(), ['crawl.completed', 'crawl.page', 'crawl.started']);
    assert.ok(hooks.every((h) => JSON.stringify(h.auditMetadata) === JSON.stringify({ username: 'bob' })), JSON.stringify(hooks.map((h) => h.auditMetadata)));
    const stored = (await stack.db.pool.query('SELECT options FROM jobs WHERE id = $1', [job.id])).rows[0];
    assert.deepEqual(stored.options.scrapeOptions.auditMetadata, { username: 'bob' });
  });

  test('threatProtection: 403 unless enabled for the team; validated against the documented fields; recorded with the job', T, async () => {
    const tp = { mode: 'manual-only', riskScoreThreshold: 50, blacklist: ['*.risky.example'], whitelist: ['example.com'], blockedTlds: ['zip'], failurePolicy: 'closed' };
    const denied = await call(stack, 'POST', '/v2/scrape', { url: site.url(`/${C}/page`), threatProtection: tp });
    assert.equal(denied.status, 403, denied.text);
    assert.equal(denied.json.code, 'THREAT_PROTECTION_NOT_ENABLED');
    const t = await stack.newTeam({ flags: { threatProtection: true } });
    const fct = new Firecrawl({ apiKey: t.apiKey, apiUrl: stack.url });
    const doc = await fct.scrape(site.url(`/${C}/page`), { threatProtection: tp } as never);
    const row = (await stack.db.pool.query('SELECT options FROM scrape_jobs WHERE id = $1', [doc.metadata!.scrapeId])).rows[0];
    assert.deepEqual(row.options.threatProtection, tp);
    for (const [bad, field] of [
      [{ mode: 'paranoid' }, 'mode'],
      [{ riskScoreThreshold: 101 }, 'riskScoreThreshold'],
      [{ blacklist: ['https://risky.example/path'] }, 'blacklist'],
      [{ blockedTlds: ['.zip'] }, 'blockedTlds'],
      [{ failurePolicy: 'maybe' }, 'failurePolicy'],
      [{ scanEverything: true }, ''],
    ] as const) {
      const r = await call({ url: stack.url, apiKey: t.apiKey }, 'POST', '/v2/scrape', { url: site.url(`/${C}/page`), threatProtection: bad });
      assert.equal(r.status, 400, `${JSON.stringify(bad)}: ${r.text}`);
      assert.equal(r.json.details[0].path[0], 'threatProtection', r.text);
      if (field) assert.equal(r.json.details[0].path[1], field, r.text);
    }
    for (const [path, body] of [
      ['/v2/map', { url: site.url(`/${C}/page`), threatProtection: tp }],
      ['/v2/crawl', { url: site.url(`/${C}/page`), limit: 1, scrapeOptions: { threatProtection: tp } }],
      ['/v2/search', { query: 'kettle', threatProtection: tp }],
    ] as const) {
      assert.equal((await call(stack, 'POST', path, body)).status, 403, path);
      assert.equal((await call({ url: stack.url, apiKey: t.apiKey }, 'POST', path, body)).status, 200, path);
    }
  });
});
