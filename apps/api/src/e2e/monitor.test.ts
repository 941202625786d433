import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { Client, Connection, ScheduleOverlapPolicy } from '@temporalio/client';
import { call, namespaceFor, startStack, testInfra, type Stack, until, FAST_MONITOR_ENV } from '@wds/test-utils';
import { page, startMonitorSite, type MonitorSite } from './monitor-site';

// Monitors end to end: the API (JS SDK where it has methods, raw HTTP for errors), the shared
// tick Schedules, runs on the frontier loop, cheap unchanged checks, webhooks. Schedules here are
// seconds apart: WDS_MONITOR_MIN_INTERVAL_SECONDS=1 allows "every N seconds" (the floor is 5
// minutes otherwise), and the ticks run every second.
const SECRET = 'monitor-test-secret';
let stack: Stack;
let site: MonitorSite;
let fc: Firecrawl;
let hook: { url: string; hits: { body: any; signature: string | undefined; raw: string }[]; close(): void };

async function receiver() {
  const hits: { body: any; signature: string | undefined; raw: string }[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      hits.push({ body: JSON.parse(raw), signature: req.headers['x-firecrawl-signature'] as string | undefined, raw });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, hits, close: () => server.close() };
}

before(async () => {
  site = await startMonitorSite();
  hook = await receiver();
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: {
      ...FAST_MONITOR_ENV,
      WDS_STRANDED_JOB_SWEEP_MS: '500',
      WDS_WEBHOOK_SECRET: SECRET,
    },
  });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
  hook?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long the waits below poll (test-utils' until). */
const WAIT = { timeoutMs: 30_000, everyMs: 150 };

/** Runs a check now and waits for it to end; returns it with its pages. */
async function runAndWait(monitorId: string) {
  const check = await fc.runMonitor(monitorId);
  assert.equal(check.monitorId, monitorId);
  return until(async () => {
    const c = await fc.getMonitorCheck(monitorId, check.id);
    return c.status !== 'running' && c.status !== 'queued' ? c : null;
  }, 'the check to end', WAIT);
}

describe('validation', () => {
  const valid = () => ({ name: 'm', schedule: { cron: '*/5 * * * *' }, targets: [{ type: 'scrape', urls: ['https://example.com/'] }] });
  test('bodies the docs refuse answer 400 with details', async () => {
    const cases: [string, unknown][] = [
      ['no targets', { ...valid(), targets: [] }],
      ['no schedule', { name: 'm', targets: valid().targets }],
      ['unknown field', { ...valid(), colour: 'red' }],
      ['bad url', { ...valid(), targets: [{ type: 'scrape', urls: ['ftp://x'] }] }],
      ['unknown timezone', { ...valid(), schedule: { cron: '*/5 * * * *', timezone: 'Mars/Olympus' } }],
      ['cron and text', { ...valid(), schedule: { cron: '*/5 * * * *', text: 'hourly' } }],
      ['text not understood', { ...valid(), schedule: { text: 'whenever it rains' } }],
      ['search target without goal', { ...valid(), targets: [{ type: 'search', queries: ['x'] }] }],
      ['retention too long', { ...valid(), retentionDays: 400 }],
    ];
    for (const [what, body] of cases) {
      const r = await call(stack, 'POST', '/v2/monitor', body);
      assert.equal(r.status, 400, `${what}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.success, false);
      assert.ok(Array.isArray(r.json.details) && r.json.details.length, `${what} names the field`);
    }
    // List paging: digits only (an empty or signed value is not 0).
    for (const q of ['offset=', 'offset=-1', 'limit=', 'limit=1e1', 'limit=101']) assert.equal((await call(stack, 'GET', `/v2/monitor?${q}`)).status, 400, q);
    assert.equal((await call(stack, 'GET', '/v2/monitor?offset=0&limit=100')).status, 200);
  });

  test('email notifications are refused without an SMTP server (WDS_SMTP_URL)', async () => {
    const r = await call(stack, 'POST', '/v2/monitor', { ...valid(), notification: { email: { enabled: true, recipients: ['a@example.com'] } } });
    assert.equal(r.status, 400);
    assert.equal(r.json.code, 'FEATURE_NOT_AVAILABLE');
  });

  test('unknown ids are 404, malformed ids 400, another team sees nothing', async () => {
    assert.equal((await call(stack, 'GET', '/v2/monitor/00000000-0000-4000-8000-000000000000')).status, 404);
    assert.equal((await call(stack, 'GET', '/v2/monitor/nope')).status, 400);
    const m = await fc.createMonitor({ name: 'mine', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'scrape', urls: [site.url('/x')] }] });
    const other = await stack.newTeam();
    assert.equal((await call({ url: stack.url, apiKey: other.apiKey }, 'GET', `/v2/monitor/${m.id}`)).status, 404);
    assert.equal((await call({ url: stack.url, apiKey: other.apiKey }, 'POST', `/v2/monitor/${m.id}/run`, {})).status, 404);
    await fc.deleteMonitor(m.id);
  });
});

describe('a page monitor', () => {
  test('new → same (conditional and byte-identical) → changed with the diff → removed; webhooks signed', async () => {
    site.set('/etag/a', page('Alpha', 'first version of alpha'));
    site.set('/b', page('Beta', 'first version of beta'));
    const m = await fc.createMonitor({
      name: 'two pages',
      schedule: { text: 'every 30 minutes', timezone: 'Europe/Berlin' },
      webhook: { url: hook.url, metadata: { env: 'test' }, events: ['monitor.page', 'monitor.check.completed'] },
      targets: [{ type: 'scrape', urls: [site.url('/etag/a'), site.url('/b')] }],
    });
    assert.equal(m.status, 'active');
    assert.match(m.schedule.cron!, /^\d+-59\/30 \* \* \* \*$/, 'text schedules come back as cron, spread by id');
    assert.ok(m.nextRunAt && Date.parse(m.nextRunAt) > Date.now());
    assert.equal(m.targets.length, 1);
    assert.ok(m.targets[0]!.id);

    const first = await runAndWait(m.id);
    assert.equal(first.status, 'completed');
    assert.deepEqual(first.summary, { totalPages: 2, same: 0, changed: 0, new: 2, removed: 0, error: 0 });
    assert.equal(first.actualCredits, 2);
    assert.equal(first.billingStatus, 'confirmed');
    assert.deepEqual(first.pages.map((p) => p.status).sort(), ['new', 'new']);

    const second = await runAndWait(m.id);
    assert.deepEqual(second.summary, { totalPages: 2, same: 2, changed: 0, new: 0, removed: 0, error: 0 });
    assert.equal(site.notModified.get('/etag/a'), 1, 'the page with an ETag answered 304');
    const same = second.pages.find((p) => p.url.endsWith('/b'))!;
    assert.equal(same.currentScrapeId, same.previousScrapeId, 'an unchanged page refers to the version it matched');

    site.set('/b', page('Beta', 'second version of beta, with news'));
    const third = await runAndWait(m.id);
    assert.deepEqual(third.summary, { totalPages: 2, same: 1, changed: 1, new: 0, removed: 0, error: 0 });
    const changed = (await fc.getMonitorCheck(m.id, third.id, { status: 'changed' })).pages;
    assert.equal(changed.length, 1);
    assert.match(changed[0]!.diff!.text!, /^\+.*second version of beta, with news/m);
    assert.match(changed[0]!.diff!.text!, /^-.*first version of beta/m);
    assert.ok(Array.isArray((changed[0]!.diff!.json as { files: unknown[] }).files));

    site.remove('/etag/a');
    const fourth = await runAndWait(m.id);
    assert.deepEqual(fourth.summary, { totalPages: 2, same: 1, changed: 0, new: 0, removed: 1, error: 0 });

    const checks = await fc.listMonitorChecks(m.id);
    assert.deepEqual(checks.map((c) => c.id), [fourth.id, third.id, second.id, first.id]);
    const got = await fc.getMonitor(m.id);
    assert.deepEqual(got.lastCheckSummary, fourth.summary);
    assert.equal(got.currentCheckId, null);

    // Webhooks: a page event per page, a completion per check, signed with the secret.
    const done = await until(async () => (hook.hits.filter((h) => h.body.type === 'monitor.check.completed').length >= 4 ? hook.hits : null), 'the completion webhooks', WAIT);
    for (const h of done) assert.equal(h.signature, `sha256=${createHmac('sha256', SECRET).update(h.raw).digest('hex')}`);
    const completed = done.find((h) => h.body.type === 'monitor.check.completed' && h.body.id === third.id)!;
    assert.equal(completed.body.success, true);
    assert.deepEqual(completed.body.data[0].summary, third.summary);
    assert.deepEqual(completed.body.data[0].pages.map((p: { status: string }) => p.status), ['changed']);
    assert.deepEqual(completed.body.metadata, { env: 'test' });
    await until(async () => hook.hits.filter((h) => h.body.type === 'monitor.page').length >= 8, 'the page webhooks', WAIT);
    const pageHook = hook.hits.find((h) => h.body.type === 'monitor.page' && h.body.id === third.id && h.body.data[0].status === 'changed')!;
    assert.equal(pageHook.body.data[0].monitorId, m.id);
    assert.match(pageHook.body.data[0].diff.text, /second version of beta/);
    await fc.deleteMonitor(m.id);
  });

  test('a failed fetch is an error, not a removal; the page is not replaced', async () => {
    site.set('/flaky', page('Flaky', 'stable text'));
    const m = await fc.createMonitor({ name: 'flaky', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'scrape', urls: [site.url('/flaky')], scrapeOptions: { timeout: 1_000 } }] });
    assert.equal((await runAndWait(m.id)).summary.new, 1);
    site.delay('/flaky', 3_000);
    const failed = await runAndWait(m.id);
    assert.equal(failed.status, 'failed');
    assert.deepEqual(failed.summary, { totalPages: 1, same: 0, changed: 0, new: 0, removed: 0, error: 1 });
    assert.equal(failed.actualCredits, 0);
    site.delay('/flaky', 0);
    assert.equal((await runAndWait(m.id)).summary.same, 1, 'the version compared with is still the first');
    await fc.deleteMonitor(m.id);
  });

  test('run now while a check runs, or on a paused monitor: 409 naming the running check', async () => {
    site.set('/slow', page('Slow', 'slow page'));
    site.delay('/slow', 2_500);
    const m = await fc.createMonitor({ name: 'slow', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'scrape', urls: [site.url('/slow')] }] });
    const running = await fc.runMonitor(m.id);
    const again = await call(stack, 'POST', `/v2/monitor/${m.id}/run`, { origin: 'js-sdk@test' });
    assert.equal(again.status, 409);
    assert.equal(again.json.details.checkId, running.id);
    assert.equal((await fc.getMonitor(m.id)).currentCheckId, running.id);
    await until(async () => ((await fc.getMonitorCheck(m.id, running.id)).status === 'completed' ? true : null), 'the slow check to end', WAIT);
    await fc.updateMonitor(m.id, { status: 'paused' });
    assert.equal((await call(stack, 'POST', `/v2/monitor/${m.id}/run`, {})).status, 409);
    await fc.deleteMonitor(m.id);
  });
});

describe('schedules', () => {
  test('checks fire on schedule; pause stops them, resume and update restart them; delete ends them', async () => {
    site.set('/tick', page('Tick', 'scheduled'));
    const m = await fc.createMonitor({ name: 'ticking', schedule: { text: 'every 2 seconds' }, targets: [{ type: 'scrape', urls: [site.url('/tick')] }] });
    const scheduled = async () => (await fc.listMonitorChecks(m.id, { limit: 100 })).filter((c) => c.trigger === 'scheduled');
    await until(async () => (await scheduled()).filter((c) => c.status === 'completed').length >= 2, 'two scheduled checks', { ...WAIT, timeoutMs: 60_000 });
    const lagged = (await scheduled()).find((c) => c.status === 'completed')!;
    assert.ok(lagged.scheduledFor && lagged.startedAt && Date.parse(lagged.startedAt) >= Date.parse(lagged.scheduledFor));

    const paused = await fc.updateMonitor(m.id, { status: 'paused' });
    assert.equal(paused.status, 'paused');
    assert.equal(paused.nextRunAt, null);
    await sleep(1_500); // a check claimed just before the pause ends
    const atPause = (await scheduled()).length;
    await sleep(5_000);
    assert.equal((await scheduled()).length, atPause, 'no checks while paused');

    const resumed = await fc.updateMonitor(m.id, { status: 'active', schedule: { text: 'every 3 seconds' } });
    assert.match(resumed.schedule.cron!, /\/3 \* \* \* \* \*$/);
    assert.ok(resumed.nextRunAt);
    await until(async () => (await scheduled()).length > atPause, 'checks after resuming', WAIT);

    await fc.deleteMonitor(m.id);
    assert.equal((await call(stack, 'GET', `/v2/monitor/${m.id}`)).status, 404);
    assert.ok(!(await fc.listMonitors()).some((x) => x.id === m.id));
    const rows = await stack.db.db.execute<{ n: number }>(`SELECT count(*)::int AS n FROM monitor_checks WHERE monitor_id = '${m.id}'` as never);
    await sleep(4_000);
    const later = await stack.db.db.execute<{ n: number }>(`SELECT count(*)::int AS n FROM monitor_checks WHERE monitor_id = '${m.id}'` as never);
    assert.ok(later.rows[0]!.n <= rows.rows[0]!.n + 1, 'no checks after delete (one claimed at that moment may finish)');
  });

  test('a tick Schedule lost (a restore without it) is recreated from the monitors table when a worker starts', async () => {
    site.set('/restore', page('Restore', 'restored'));
    const m = await fc.createMonitor({ name: 'restore', schedule: { text: 'every 2 seconds' }, targets: [{ type: 'scrape', urls: [site.url('/restore')] }] });
    const connection = await Connection.connect({ address: testInfra().temporalAddress });
    try {
      const schedules = new Client({ connection, namespace: stack.namespace }).schedule;
      await until(async () => (await schedules.getHandle('wds-monitor-tick-0').describe().catch(() => null)) !== null, 'the tick Schedule', WAIT);
      stack.worker.child.kill('SIGKILL');
      await schedules.getHandle('wds-monitor-tick-0').delete();
      const lostAt = Date.now();
      await stack.addWorker();
      const d = await until(() => schedules.getHandle('wds-monitor-tick-0').describe().catch(() => null), 'the Schedule recreated', WAIT);
      assert.equal(d.policies.overlap, ScheduleOverlapPolicy.SKIP);
      await until(async () => (await fc.listMonitorChecks(m.id, { limit: 100 })).find((c) => c.trigger === 'scheduled' && c.status === 'completed' && Date.parse(c.startedAt!) > lostAt), 'a scheduled check after the restore', WAIT);
    } finally {
      await connection.close();
      await fc.deleteMonitor(m.id);
    }
  });

  test('a check still running when the next is due is recorded as skipped_overlap', async () => {
    site.set('/overlap', page('Overlap', 'slow'));
    site.delay('/overlap', 3_500);
    const m = await fc.createMonitor({ name: 'overlap', schedule: { text: 'every 1 second' }, targets: [{ type: 'scrape', urls: [site.url('/overlap')] }] });
    const skipped = await until(async () => (await fc.listMonitorChecks(m.id, { limit: 100 })).find((c) => c.status === 'skipped_overlap'), 'a skipped_overlap check', WAIT);
    assert.equal(skipped.billingStatus, 'not_applicable');
    assert.deepEqual(skipped.summary, { totalPages: 0, same: 0, changed: 0, new: 0, removed: 0, error: 0 });
    const listed = await call(stack, 'GET', `/v2/monitor/${m.id}/checks?status=skipped_overlap`);
    assert.ok(listed.json.data.length >= 1);
    await fc.deleteMonitor(m.id);
  });
});
