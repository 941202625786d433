import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { call, html, namespaceFor, startFakeSmtp, startFixtureSite, startStack, until, type FakeSmtp, type FixtureSite, type Handler, type Stack } from '@wds/test-utils';
import { WebSocket } from 'ws';
import { linkIn, mailStackEnv, mailsTo } from './monitor-mail';

// Attacks on the edges of the security issue (#38), each against the running stack and each
// showing no harm: monitor mail to addresses that never opted in is bounded per team and carries
// no text a team wrote; the job WebSocket refuses client data; a shared search index never shows
// another team a page fetched with a team's cookies.
const PENDING_MAX = 30;
const PER_HOUR = 5;
const SECRET = 'zebrafishledger';
const COOKIE = 'session=team-a-secret';
const PHISH = 'Your account is suspended: sign in at http://evil.example/login';

let stack: Stack;
let site: FixtureSite;
let smtp: FakeSmtp;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A page whose body is the account's secret only with the team's cookie (else a login prompt). */
const account = (word: string): Handler => (req, res) => {
  const body = req.headers.cookie === COOKIE ? `<h1>Account</h1><p>Your ledger code is ${SECRET}${word}.</p>` : '<h1>Account</h1><p>Please sign in.</p>';
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html><head><title>Account</title></head><body><main>${body}</main></body></html>`);
};

before(async () => {
  smtp = await startFakeSmtp();
  site = await startFixtureSite({
    '/account': account('scrape'),
    '/account-batch': account('batch'),
    '/public': html('<!doctype html><html><head><title>Marmalade</title></head><body><main><p>The marmalade recipe everyone may read.</p></main></body></html>'),
    '/slow': async (_req, res) => {
      await sleep(15_000); // the crawl (and its stream) stays open while the test talks to it
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><p>slow page</p></body></html>');
    },
  });
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: {
      ...mailStackEnv(smtp, 'security-edges-link-secret'),
      WDS_MONITOR_MAX_PENDING_RECIPIENTS: String(PENDING_MAX),
      WDS_MONITOR_CONFIRMATIONS_PER_HOUR: String(PER_HOUR),
      WDS_SEARCH_SHARED_INDEX: 'true',
      WDS_SEARCH_PROVIDER: 'index',
    },
  });
});
after(async () => {
  await stack?.stop();
  await site?.close();
  await smtp?.close();
});

describe('monitor email to addresses that have not opted in', () => {
  test('four monitors of 25 fresh recipients each: past the pending bound refused, at most the hourly budget mailed, no tenant text in any mail', { timeout: 180_000 }, async () => {
    const team = await stack.newTeam();
    const fc = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
    const addresses = (m: number, n: number) => Array.from({ length: n }, (_, i) => `victim${m}-${i}@mail.example`);
    const monitor = (m: number, recipients: string[]) => ({
      name: `${PHISH} #${m}`, goal: `${PHISH} (goal)`, schedule: { text: 'every 30 minutes' },
      notification: { email: { enabled: true, recipients } }, targets: [{ type: 'scrape', urls: [site.url('/public')] }],
    });

    const first = await call({ url: stack.url, apiKey: team.apiKey }, 'POST', '/v2/monitor', monitor(1, addresses(1, 25)));
    assert.equal(first.status, 200, first.text);
    for (const m of [2, 3, 4]) {
      const r = await call({ url: stack.url, apiKey: team.apiKey }, 'POST', '/v2/monitor', monitor(m, addresses(m, 25)));
      assert.equal(r.status, 429, r.text.slice(0, 300));
      assert.equal(r.json.success, false);
      assert.equal(r.json.code, 'PENDING_RECIPIENTS_LIMIT');
      assert.deepEqual(r.json.details, { pendingRecipients: 25, newRecipients: 25, limit: PENDING_MAX });
    }
    // Up to the bound is fine; one more by update is not, and changes nothing.
    const fifth = await fc.createMonitor(monitor(5, addresses(5, 5)) as Parameters<typeof fc.createMonitor>[0]);
    const more = await call({ url: stack.url, apiKey: team.apiKey }, 'PATCH', `/v2/monitor/${fifth.id}`, { notification: { email: { enabled: true, recipients: [...addresses(5, 5), 'one-more@mail.example'] } } });
    assert.equal(more.status, 429, more.text.slice(0, 300));
    assert.equal(more.json.code, 'PENDING_RECIPIENTS_LIMIT');
    assert.equal((await fc.getMonitor(fifth.id)).emailRecipientSubscriptions?.length, 5, 'the refused update stored nothing');
    assert.deepEqual((await fc.listMonitors()).map((m) => m.id).sort(), [first.json.data.id, fifth.id].sort(), 'refused creates stored no monitor');

    // Another team is not held back by this one (the bounds are per team).
    const other = await stack.newTeam();
    const fcOther = new Firecrawl({ apiKey: other.apiKey, apiUrl: stack.url });
    await fcOther.createMonitor({ ...monitor(9, ['friend@mail.example']), name: 'other team' } as Parameters<typeof fc.createMonitor>[0]);
    await until(() => mailsTo(smtp, 'friend@mail.example').length > 0, "the other team's confirmation", { timeoutMs: 60_000, everyMs: 200 });

    const victims = () => smtp.messages.filter((x) => x.to.some((t) => t.startsWith('victim')));
    await until(() => victims().length >= PER_HOUR, `${PER_HOUR} confirmation emails`, { timeoutMs: 60_000, everyMs: 200 });
    await sleep(5_000); // several more mailer sweeps
    assert.equal(victims().length, PER_HOUR, 'no more confirmation emails than the hourly budget');
    const states = [...((await fc.getMonitor(first.json.data.id)).emailRecipientSubscriptions ?? []), ...((await fc.getMonitor(fifth.id)).emailRecipientSubscriptions ?? [])];
    assert.equal(states.length, 30);
    assert.equal(states.filter((s) => s.confirmationEmailSent).length, PER_HOUR, 'the rest wait, still pending');
    assert.ok(states.every((s) => s.status === 'pending'));

    for (const mail of victims()) {
      const all = `${mail.subject}\n${mail.text}`;
      assert.equal(mail.subject, 'Confirm change emails from a WDS monitor');
      for (const tenantText of ['evil.example', 'suspended', 'sign in', '#1', 'goal', mail.to[0]!]) {
        assert.ok(!all.toLowerCase().includes(tenantText.toLowerCase()), `"${tenantText}" in a mail to an unconfirmed address:\n${all}`);
      }
      assert.ok(linkIn(mail, 'confirm') && linkIn(mail, 'unsubscribe'), 'the links are there');
    }
  });
});

describe('job WebSocket', () => {
  function open(path: string, key: string): Promise<{ ws: WebSocket; messages: { type: string }[]; closed: Promise<number> }> {
    const ws = new WebSocket(`${stack.url.replace(/^http/, 'ws')}${path}`, key);
    const messages: { type: string }[] = [];
    ws.on('message', (m) => messages.push(JSON.parse(String(m))));
    ws.on('error', () => {});
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    return new Promise((resolve, reject) => {
      ws.on('open', () => resolve({ ws, messages, closed }));
      ws.on('unexpected-response', (_q, res) => reject(new Error(`refused: ${res.statusCode}`)));
    });
  }

  test('a 64 KiB client frame closes the socket with 1009, any client message with 1008; a normal stream still works', { timeout: 120_000 }, async () => {
    const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
    const slow = await fc.startCrawl(site.url('/slow'), { limit: 1 });
    const big = await open(`/v2/crawl/${slow.id}`, stack.apiKey);
    await until(() => big.messages.some((m) => m.type === 'catchup'), 'catchup', { timeoutMs: 30_000 });
    big.ws.send(Buffer.alloc(64 * 1024, 0x61));
    assert.equal(await big.closed, 1009);

    const small = await open(`/v2/crawl/${slow.id}`, stack.apiKey);
    small.ws.send('{"type":"hello"}');
    assert.equal(await small.closed, 1008);

    // A watcher that sends nothing gets the whole stream, to `done`.
    const plain = await open(`/v2/crawl/${slow.id}`, stack.apiKey);
    assert.equal(await plain.closed, 1000);
    assert.equal(plain.messages[0]?.type, 'catchup');
    assert.equal(plain.messages.at(-1)?.type, 'done');
    assert.equal((await call(stack, 'GET', '/health')).status, 200, 'the API is fine');
  });
});

describe('a shared search index', () => {
  test("another team never finds a page fetched with a team's cookie (scrape or batch); the team does; plain pages are shared", { timeout: 120_000 }, async () => {
    const a = await stack.newTeam();
    const b = await stack.newTeam();
    const fcA = new Firecrawl({ apiKey: a.apiKey, apiUrl: stack.url });
    const fcB = new Firecrawl({ apiKey: b.apiKey, apiUrl: stack.url });
    const headers = { cookie: COOKIE };

    const scraped = await fcA.scrape(site.url('/account'), { formats: ['markdown'], headers });
    assert.match(scraped.markdown ?? '', new RegExp(`${SECRET}scrape`), "the team's cookie reached the page");
    const batch = await fcA.batchScrape([site.url('/account-batch')], { options: { formats: ['markdown'], headers }, pollInterval: 1 });
    assert.match(batch.data[0]?.markdown ?? '', new RegExp(`${SECRET}batch`));
    await fcA.scrape(site.url('/public'), { formats: ['markdown'] });

    const web = async (fc: Firecrawl, q: string) => ((await fc.search(q, { sources: ['web'], limit: 10 })).web ?? []).map((r) => (r as { url: string }).url);
    for (const word of ['scrape', 'batch']) {
      assert.deepEqual(await web(fcA, `${SECRET}${word}`), [site.url(word === 'scrape' ? '/account' : '/account-batch')], 'in its own team\'s index');
      assert.deepEqual(await web(fcB, `${SECRET}${word}`), [], 'never in another team\'s view of the shared index');
    }
    assert.deepEqual(await web(fcB, 'marmalade'), [site.url('/public')], 'a plain page is shared');
    // Nor does map's `search`, which ranks by the same index: the plain page it finds, the gated one it does not.
    for (const [q, path, shown] of [[`${SECRET}scrape`, '/account', false], ['marmalade', '/public', true]] as const) {
      const links = (await fcB.map(site.url('/'), { search: q, sitemap: 'skip', limit: 10 })).links.map((l) => l.url);
      assert.equal(links.includes(site.url(path)), shown, `map search ${q}: ${JSON.stringify(links)}`);
    }
  });
});
