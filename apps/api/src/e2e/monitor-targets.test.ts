import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { call, namespaceFor, promptText, startFakeOpenAI, startFakeSearxng, startFakeSmtp, startStack, type FakeChatRequest, type FakeOpenAI, type FakeSearxng, type FakeSmtp, type Stack, until, FAST_MONITOR_ENV } from '@wds/test-utils';
import { confirmAddress, PUBLIC_URL } from './monitor-mail';
import { page, startMonitorSite, type MonitorSite } from './monitor-site';

// Monitors of whole sites (crawl targets) and of web searches (search targets), json mode's
// field changes and the goal judge, end to end through the JS SDK: the real stack, a site the
// tests edit, the fake SearXNG as the deployment's search, the fake OpenAI-compatible server as
// the model (it reads prices off pages, and judges by the goal's keyword) and a local SMTP server
// (real protocol, with auth) for email summaries.
let stack: Stack;
let site: MonitorSite;
let searx: FakeSearxng;
let model: FakeOpenAI;
let smtp: FakeSmtp;
let fc: Firecrawl;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long the waits below poll (test-utils' until). */
const WAIT = { timeoutMs: 60_000, everyMs: 200 };

/** The judge's verdicts: meaningful when the text shown contains "launch" (the goal's keyword in these tests). */
function reply(r: FakeChatRequest) {
  const text = promptText(r);
  if (text.includes('You judge changes for a web monitor')) {
    const content = text.slice(text.lastIndexOf('<content>'));
    const meaningful = /launch/i.test(content);
    return { content: { meaningful, confidence: 'high', reason: meaningful ? 'a launch is announced' : 'nothing about a launch', meaningfulChanges: meaningful ? [{ type: 'added', before: null, after: 'launch', reason: 'the goal asks for launches' }] : [] } };
  }
  const price = /Price: (\S+)/.exec(text.slice(text.lastIndexOf('Price:') - 1));
  return { content: { price: price?.[1] ?? null, product: 'Kettle' } };
}

before(async () => {
  site = await startMonitorSite();
  model = await startFakeOpenAI({ handler: reply });
  searx = await startFakeSearxng({ corpus: { general: [] } });
  smtp = await startFakeSmtp();
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: {
      ...model.env,
      SEARXNG_ENDPOINT: searx.url,
      WDS_SMTP_URL: smtp.url,
      WDS_SMTP_FROM: 'WDS monitors <monitors@wds.test>',
      WDS_PUBLIC_URL: PUBLIC_URL,
      WDS_FILE_SIGNING_SECRET: 'monitor-targets-e2e-link-secret',
      ...FAST_MONITOR_ENV,
    },
  });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
  await searx?.close();
  await model?.close();
  await smtp?.close();
});

/** Runs a check now, waits for it to end, and returns it with all its pages. */
async function runAndWait(monitorId: string) {
  const check = await fc.runMonitor(monitorId);
  return until(async () => {
    const c = await fc.getMonitorCheck(monitorId, check.id, { limit: 100 });
    return c.status !== 'running' && c.status !== 'queued' ? c : null;
  }, 'the check to end', { ...WAIT, timeoutMs: 90_000 });
}

type Page = { url: string; status: string; metadata?: unknown; diff?: { text?: string; json?: unknown } | null; snapshot?: { json?: unknown } | null; judgment?: { meaningful: boolean; reason: string } | null };
const byPath = (pages: Page[]) => Object.fromEntries(pages.map((p) => [new URL(p.url).pathname, p]));
const statuses = (pages: Page[]) => Object.fromEntries(pages.map((p) => [new URL(p.url).pathname, p.status]));
const links = (...paths: string[]) => `<!doctype html><html><head><title>Home</title></head><body><main><h1>Home</h1>${paths.map((p) => `<p><a href="${p}">${p}</a></p>`).join('')}</main></body></html>`;

describe('crawl targets', () => {
  test('a site: new → same → changed → a page no longer linked is hidden → its 404 is removed', { timeout: 240_000 }, async () => {
    site.set('/shop/', links('/shop/a', '/shop/b'));
    site.set('/shop/a', page('A', 'alpha first'));
    site.set('/shop/b', page('B', 'beta first'));
    const m = await fc.createMonitor({ name: 'shop', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'crawl', url: site.url('/shop/'), crawlOptions: { limit: 10 } }] });
    assert.equal(m.targets[0]!.type, 'crawl');
    assert.ok(m.targets[0]!.id);
    assert.ok((m.estimatedCreditsPerMonth ?? 0) >= 10 * 48 * 28, 'the estimate counts the crawl limit per check');

    const first = await runAndWait(m.id);
    assert.equal(first.status, 'completed', JSON.stringify(first));
    assert.deepEqual(statuses(first.pages), { '/shop/': 'new', '/shop/a': 'new', '/shop/b': 'new' });
    assert.deepEqual(first.summary, { totalPages: 3, same: 0, changed: 0, new: 3, removed: 0, error: 0 });
    const tr = first.targetResults![0]! as { targetId: string; type: string; crawlId?: string };
    assert.equal(tr.type, 'crawl');
    assert.equal(tr.targetId, m.targets[0]!.id);
    assert.ok(tr.crawlId, 'the crawl job the check ran');
    const crawl = await fc.getCrawlStatus(tr.crawlId!);
    assert.equal(crawl.status, 'completed');
    assert.equal(crawl.data.length, 3);
    assert.equal(first.actualCredits, 3, 'one credit per crawled page, billed once');

    const second = await runAndWait(m.id);
    assert.deepEqual(second.summary, { totalPages: 3, same: 3, changed: 0, new: 0, removed: 0, error: 0 });

    site.set('/shop/a', page('A', 'alpha second, with news'));
    const third = await runAndWait(m.id);
    assert.deepEqual(statuses(third.pages), { '/shop/': 'same', '/shop/a': 'changed', '/shop/b': 'same' });
    assert.match(byPath(third.pages)['/shop/a']!.diff!.text!, /^\+.*alpha second, with news/m);

    // No page links to /shop/b any more: it is known from earlier checks, fetched as hidden.
    site.set('/shop/', links('/shop/a'));
    const fourth = await runAndWait(m.id);
    assert.deepEqual(statuses(fourth.pages), { '/shop/': 'changed', '/shop/a': 'same', '/shop/b': 'same' });
    assert.equal((byPath(fourth.pages)['/shop/b']!.metadata as { visibility?: string }).visibility, 'hidden');

    site.remove('/shop/b');
    const fifth = await runAndWait(m.id);
    assert.deepEqual(statuses(fifth.pages), { '/shop/': 'same', '/shop/a': 'same', '/shop/b': 'removed' });
    assert.deepEqual(fifth.summary, { totalPages: 3, same: 2, changed: 0, new: 0, removed: 1, error: 0 });
    await fc.deleteMonitor(m.id);
  });

  test('a crawl that cannot reach its start page is an error, never removed pages', { timeout: 120_000 }, async () => {
    site.set('/down/', links('/down/a'));
    site.set('/down/a', page('A', 'here'));
    const m = await fc.createMonitor({ name: 'down', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'crawl', url: site.url('/down/'), crawlOptions: { limit: 5 }, scrapeOptions: { timeout: 1_000 } }] });
    assert.equal((await runAndWait(m.id)).summary.new, 2);
    site.delay('/down/', 3_000);
    site.delay('/down/a', 3_000);
    const failed = await runAndWait(m.id);
    assert.equal(failed.summary.removed, 0, JSON.stringify(failed.pages));
    assert.ok(failed.summary.error >= 1);
    assert.notEqual(failed.status, 'completed');
    await fc.deleteMonitor(m.id);
  });

  test("a crawl target's crawl is not in the team's active crawls; the check still links it by id", { timeout: 180_000 }, async () => {
    site.set('/busy/', links('/busy/a'));
    site.set('/busy/a', page('A', 'busy'));
    // Both crawls wait on their start page until released: they are running, however slow the machine.
    site.hold('/busy/');
    const slow = { timeout: 300_000 };
    const m = await fc.createMonitor({ name: 'busy', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'crawl', url: site.url('/busy/'), crawlOptions: { limit: 2 }, scrapeOptions: slow }] });
    const mine = await fc.startCrawl(site.url('/busy/'), { limit: 2, sitemap: 'skip', scrapeOptions: slow } as never);
    const check = await fc.runMonitor(m.id);
    const monitorCrawl = await until(async () => {
      const r = await stack.db.pool.query(
        `SELECT t.job_id FROM monitor_check_targets t JOIN jobs j ON j.id = t.job_id WHERE t.check_id = $1 AND j.status IN ('queued', 'running')`, [check.id]);
      return (r.rows[0]?.job_id as string | undefined) ?? null;
    }, "the monitor's crawl to start", WAIT);
    const active = await fc.getActiveCrawls();
    const ids = active.crawls.map((c) => c.id);
    assert.ok(ids.includes(mine.id), `the team's own crawl is listed: ${JSON.stringify(ids)}`);
    assert.ok(!ids.includes(monitorCrawl), `the monitor's crawl is not: ${JSON.stringify(ids)}`);
    assert.equal((await fc.getCrawlStatus(monitorCrawl)).status, 'scraping', 'it was running when listed, and is reachable by id');

    site.release('/busy/');
    const done = await until(async () => {
      const c = await fc.getMonitorCheck(m.id, check.id, { limit: 100 });
      return c.status !== 'running' && c.status !== 'queued' ? c : null;
    }, 'the check to end', { ...WAIT, timeoutMs: 90_000 });
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal((done.targetResults![0]! as { crawlId?: string }).crawlId, monitorCrawl);
    await until(async () => ((await fc.getCrawlStatus(mine.id)).status === 'completed' ? true : null), 'my crawl to end', WAIT);
    await fc.deleteMonitor(m.id);
  });

  test('crawl targets are validated as crawl requests', { timeout: 30_000 }, async () => {
    const body = (crawlOptions: unknown) => ({ name: 'x', schedule: { cron: '*/5 * * * *' }, targets: [{ type: 'crawl', url: site.url('/shop/'), crawlOptions }] });
    for (const [what, o] of [['a url inside crawlOptions', { url: 'https://example.com' }], ['a negative limit', { limit: -1 }], ['an unknown option', { colour: 'red' }]] as const) {
      const r = await call(stack, 'POST', '/v2/monitor', body(o));
      assert.equal(r.status, 400, `${what}: ${JSON.stringify(r.json)}`);
      assert.ok(r.json.details.some((d: { path: (string | number)[] }) => d.path.join('.').startsWith('targets.0.crawlOptions')), `${what} names the field: ${JSON.stringify(r.json.details)}`);
    }
  });
});

describe('search targets', () => {
  test('without the judge: results alert once, then are already seen; a new result alerts', { timeout: 120_000 }, async () => {
    searx.corpus.general = [
      { url: site.url('/news/kettle-1'), title: 'Kettle one', content: 'about the zebrakettle' },
      { url: site.url('/news/kettle-2'), title: 'Kettle two', content: 'more zebrakettle' },
    ];
    const m = await fc.createMonitor({ name: 'news', schedule: { text: 'every 30 minutes' }, judgeEnabled: false, targets: [{ type: 'search', queries: ['zebrakettle'], maxResults: 5 }] });
    const first = await runAndWait(m.id);
    assert.equal(first.status, 'completed', JSON.stringify(first));
    assert.deepEqual(statuses(first.pages), { '/news/kettle-1': 'new', '/news/kettle-2': 'new' });
    assert.equal((byPath(first.pages)['/news/kettle-1']!.metadata as { searchStatus: string }).searchStatus, 'alert');
    const tr = first.targetResults![0]! as { type: string; searchCompleted: boolean; resultCount: number; searchCredits: number; matches: number };
    assert.equal(tr.type, 'search');
    assert.equal(tr.searchCompleted, true);
    assert.equal(tr.resultCount, 2);
    assert.equal(tr.matches, 2);
    assert.equal(tr.searchCredits, 2, 'a search call: 2 credits per 10 results');
    assert.equal(first.actualCredits, 2);
    assert.ok(searx.requests.some((q) => q.q === 'zebrakettle' && q.time_range === 'day'), `the 24h window: ${JSON.stringify(searx.requests.at(-1))}`);

    const second = await runAndWait(m.id);
    assert.deepEqual(statuses(second.pages), { '/news/kettle-1': 'same', '/news/kettle-2': 'same' });
    assert.equal((byPath(second.pages)['/news/kettle-2']!.metadata as { searchStatus: string }).searchStatus, 'already_seen');

    searx.corpus.general.push({ url: site.url('/news/kettle-3'), title: 'Kettle three', content: 'zebrakettle again' });
    const third = await runAndWait(m.id);
    assert.deepEqual(statuses(third.pages), { '/news/kettle-1': 'same', '/news/kettle-2': 'same', '/news/kettle-3': 'new' });
    await fc.deleteMonitor(m.id);
  });

  test('with a goal: new results are read and judged; only meaningful ones alert', { timeout: 120_000 }, async () => {
    site.set('/blog/launch', page('Launch', 'We launch the quagga kettle today.'));
    site.set('/blog/recipe', page('Recipe', 'A quagga tea recipe.'));
    searx.corpus.general = [
      { url: site.url('/blog/launch'), title: 'Quagga launch', content: 'quagga' },
      { url: site.url('/blog/recipe'), title: 'Quagga recipe', content: 'quagga' },
    ];
    const m = await fc.createMonitor({ name: 'launches', schedule: { text: 'every 30 minutes' }, goal: 'Tell me about product launches', targets: [{ type: 'search', queries: ['quagga'] }] });
    assert.equal(m.judgeEnabled, true);
    const first = await runAndWait(m.id);
    assert.equal(first.status, 'completed', JSON.stringify(first));
    const p = byPath(first.pages);
    assert.equal(p['/blog/launch']!.status, 'new');
    assert.equal((p['/blog/launch']!.metadata as { searchStatus: string }).searchStatus, 'alert');
    assert.equal(p['/blog/launch']!.judgment!.meaningful, true);
    assert.equal(p['/blog/recipe']!.status, 'same');
    assert.equal((p['/blog/recipe']!.metadata as { searchStatus: string }).searchStatus, 'ignored');
    assert.equal(p['/blog/recipe']!.judgment!.meaningful, false);
    const tr = first.targetResults![0]! as { matches: number; resultsJudged: number; judgeCredits: number; judgeDegraded: boolean };
    assert.deepEqual([tr.matches, tr.resultsJudged, tr.judgeCredits, tr.judgeDegraded], [1, 2, 2, false]);
    assert.equal(first.actualCredits, 2 + 2, 'the search call and one credit per judged result');

    const judgeCalls = model.requests.length;
    const second = await runAndWait(m.id);
    assert.deepEqual(statuses(second.pages), { '/blog/launch': 'same', '/blog/recipe': 'same' });
    assert.equal(model.requests.length, judgeCalls, 'results judged under the same goal are not judged again');
    await fc.deleteMonitor(m.id);
  });

  test('a search target without a goal is refused unless judging is off', { timeout: 30_000 }, async () => {
    const r = await call(stack, 'POST', '/v2/monitor', { name: 'x', schedule: { cron: '*/5 * * * *' }, targets: [{ type: 'search', queries: ['x'] }] });
    assert.equal(r.status, 400);
  });
});

describe('json mode and the goal judge on pages', () => {
  const JSON_CT = { type: 'changeTracking', modes: ['json'], schema: { type: 'object', properties: { price: { type: 'string' }, product: { type: 'string' } } } };

  test('json mode: field changes by key, the extraction as a snapshot; a text change that moves no field is same', { timeout: 120_000 }, async () => {
    site.set('/kettle', page('Kettle', 'Price: $20 and a nice kettle'));
    const m = await fc.createMonitor({ name: 'price', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'scrape', urls: [site.url('/kettle')], scrapeOptions: { formats: ['markdown', JSON_CT] } as never }] });
    const first = await runAndWait(m.id);
    assert.equal(first.pages[0]!.status, 'new', JSON.stringify(first.pages));
    assert.deepEqual(first.pages[0]!.snapshot, { json: { price: '$20', product: 'Kettle' } });

    site.set('/kettle', page('Kettle', 'Price: $20 and a very nice kettle'));
    const second = await runAndWait(m.id);
    assert.equal(second.pages[0]!.status, 'same', 'the words changed, no field did');

    site.set('/kettle', page('Kettle', 'Price: $25 and a very nice kettle'));
    const third = await runAndWait(m.id);
    const c = third.pages[0]!;
    assert.equal(c.status, 'changed');
    assert.deepEqual(c.diff!.json, { price: { previous: '$20', current: '$25' } });
    assert.equal(c.diff!.text, undefined, 'json mode alone sends no text diff');
    assert.deepEqual(c.snapshot, { json: { price: '$25', product: 'Kettle' } });
    assert.ok((third.actualCredits ?? 0) >= 5, `the page and its extraction are billed: ${third.actualCredits}`);
    await fc.deleteMonitor(m.id);
  });

  test('json mode needs a schema or a prompt', { timeout: 30_000 }, async () => {
    const r = await call(stack, 'POST', '/v2/monitor', { name: 'x', schedule: { cron: '*/5 * * * *' }, targets: [{ type: 'scrape', urls: [site.url('/kettle')], scrapeOptions: { formats: ['markdown', { type: 'changeTracking', modes: ['json'] }] } }] });
    assert.equal(r.status, 400, JSON.stringify(r.json));
  });

  test('the goal judge: a changed page carries its verdict; noise is judged not meaningful', { timeout: 120_000 }, async () => {
    site.set('/product', page('Product', 'Our kettle. Visitors today: 10'));
    const m = await fc.createMonitor({ name: 'judged', schedule: { text: 'every 30 minutes' }, goal: 'Alert me when a new product launch is announced', targets: [{ type: 'scrape', urls: [site.url('/product')] }] });
    assert.equal((await runAndWait(m.id)).pages[0]!.status, 'new');

    site.set('/product', page('Product', 'Our kettle. Visitors today: 11'));
    const noise = (await runAndWait(m.id)).pages[0]!;
    assert.equal(noise.status, 'changed');
    assert.equal(noise.judgment!.meaningful, false);

    site.set('/product', page('Product', 'Our kettle. We launch the teapot next week. Visitors today: 11'));
    const news = await runAndWait(m.id);
    assert.equal(news.pages[0]!.status, 'changed');
    assert.equal(news.pages[0]!.judgment!.meaningful, true);
    assert.match(news.pages[0]!.judgment!.reason, /launch/);
    assert.equal(news.actualCredits, 2, 'the page and the judge');
    await fc.deleteMonitor(m.id);
  });
});

describe('email summaries', () => {
  // Summaries only (confirmation emails name the monitor too).
  const mailsOf = (name: string) => smtp.messages.filter((m) => m.subject.startsWith(`[WDS monitor] ${name}:`));
  const emailStatus = async (monitorId: string, checkId: string) => ((await fc.getMonitorCheck(monitorId, checkId)).notificationStatus as { email?: { status: string; recipients?: string[]; reason?: string } } | null)?.email;

  test('a check with changes is mailed through SMTP (a relay refusing once is retried); an unchanged check sends nothing', { timeout: 120_000 }, async () => {
    site.set('/mail', page('Mail', 'first mailed text'));
    const m = await fc.createMonitor({
      name: 'mailed-monitor', schedule: { text: 'every 30 minutes' },
      notification: { email: { enabled: true, recipients: ['ops@example.com', 'lead@example.com'], includeDiffs: true } },
      targets: [{ type: 'scrape', urls: [site.url('/mail')] }],
    });
    // Recipients get summaries once they confirmed (monitor-email.test covers the opt-in).
    for (const a of ['ops@example.com', 'lead@example.com']) await confirmAddress(smtp, stack.url, a);
    smtp.failNext(1);
    const first = await runAndWait(m.id);
    const sent = await until(async () => ((await emailStatus(m.id, first.id))?.status === 'sent' ? mailsOf('mailed-monitor') : null), 'the first summary sent', { ...WAIT, timeoutMs: 30_000 });
    assert.equal(sent.length, 2, 'the 451 was retried, and each recipient got its message once');
    assert.deepEqual(sent.map((x) => x.to).sort(), [['lead@example.com'], ['ops@example.com']]);
    const mail = sent[0]!;
    assert.equal(mail.from, 'monitors@wds.test');
    assert.match(mail.subject, /mailed-monitor: 1 new/);
    assert.ok(mail.text.includes(`NEW ${site.url('/mail')}`), mail.text);
    assert.ok(mail.text.includes(`https://wds.example/v2/monitor/${m.id}/checks/${first.id}`), mail.text);
    assert.deepEqual((await emailStatus(m.id, first.id))?.recipients, ['ops@example.com', 'lead@example.com']);

    const same = await runAndWait(m.id);
    await sleep(2_500);
    assert.equal(mailsOf('mailed-monitor').length, 2, 'nothing changed: no email');
    assert.equal(await emailStatus(m.id, same.id), undefined);

    site.set('/mail', page('Mail', 'second mailed text'));
    const changed = await runAndWait(m.id);
    await until(async () => ((await emailStatus(m.id, changed.id))?.status === 'sent' ? true : null), 'the change mailed', { ...WAIT, timeoutMs: 30_000 });
    const second = mailsOf('mailed-monitor')[2]!;
    assert.match(second.subject, /1 changed/);
    assert.match(second.text, /^ {4}\+.*second mailed text/m, 'includeDiffs: the diff is in the message');
    assert.equal(smtp.refusedLogins, 0, 'the worker logged in with the URL\'s credentials');
    await fc.deleteMonitor(m.id);
  });

  test('with a goal, a check whose every change is judged noise sends nothing', { timeout: 120_000 }, async () => {
    site.set('/mail-judged', page('Counter', 'Visitors: 1'));
    const m = await fc.createMonitor({
      name: 'judged-mail', schedule: { text: 'every 30 minutes' }, goal: 'Alert me about a product launch',
      notification: { email: { enabled: true, recipients: ['ops@example.com'] } },
      targets: [{ type: 'scrape', urls: [site.url('/mail-judged')] }],
    });
    if (m.emailRecipientSubscriptions?.[0]?.status !== 'confirmed') await confirmAddress(smtp, stack.url, 'ops@example.com');
    const first = await runAndWait(m.id);
    await until(async () => ((await emailStatus(m.id, first.id))?.status === 'sent' ? true : null), 'the first summary', { ...WAIT, timeoutMs: 30_000 });
    site.set('/mail-judged', page('Counter', 'Visitors: 2'));
    const noise = await runAndWait(m.id);
    assert.equal(noise.pages[0]!.judgment!.meaningful, false);
    const st = await until(async () => (await emailStatus(m.id, noise.id)) ?? null, 'the summary decided', { ...WAIT, timeoutMs: 30_000 });
    assert.equal(st.status, 'suppressed');
    assert.equal(mailsOf('judged-mail').length, 1);
    await fc.deleteMonitor(m.id);
  });

  test('email needs recipients', { timeout: 30_000 }, async () => {
    const r = await call(stack, 'POST', '/v2/monitor', { name: 'x', schedule: { cron: '*/5 * * * *' }, notification: { email: { enabled: true } }, targets: [{ type: 'scrape', urls: [site.url('/mail')] }] });
    assert.equal(r.status, 400, JSON.stringify(r.json));
    assert.deepEqual(r.json.details[0].path, ['notification', 'email', 'recipients']);
  });
});
