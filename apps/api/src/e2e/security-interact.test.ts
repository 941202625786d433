import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import type { AppProcess } from '@wds/launch';
import {
  call,
  EGRESS_KINDS,
  egressProbe,
  namespaceFor,
  peakRss,
  resetPeakRss,
  startEgressListeners,
  startFixtureSite,
  startStack,
  turnTcpProbe,
  until,
  type FixtureSite,
  type Handler,
  type Stack,
} from '@wds/test-utils';

// Attacks on interact (issue #38, items 2, 5 and 8) against the running stack: user code that
// tries every way out of its sandbox to a listener on 127.0.0.1, page values far over what one
// call may carry, and a team trying to hold every session of a browser worker, or one session
// forever.
let stack: Stack;
let site: FixtureSite;
let browserWorker: AppProcess;
let fc: Firecrawl;
/** An API whose sessions live at most 8 s (the maximum life is the API's setting, per session). */
let shortLife: { url: string; apiKey: string };

const MAX_LIFE_S = 8;
const doc = (body: string) => `<!doctype html><html><head><meta charset="utf-8"><title>Security</title></head><body>${body}</body></html>`;
const html = (body: string): Handler => (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end(doc(body));
const routes: Record<string, Handler> = {
  '/app': html(`<div id="root"></div><script>document.getElementById('root').innerHTML = '<main><h1>App</h1></main>';</script>`),
  // 5 MB of HTML in a 30,000 px tall page: over every limit of one page call.
  '/big': html(`<div style="height:30000px"><p id="big">${'x'.repeat(5_000_000)}</p></div>`),
};

/** A scrape rendered by the browser (`mobile` keeps it there), its page parked by the browser worker. */
async function parkedScrape(client: Firecrawl, path: string): Promise<string> {
  const d = await client.scrape(site.url(path), { formats: ['markdown'], mobile: true, maxAge: 0 });
  assert.equal(d.metadata!.engine, 'browser');
  const id = d.metadata!.scrapeId as string;
  await until(async () => (await sessionOf(id))?.state === 'parked', 'the worker keeps the rendered page');
  return id;
}
const sessionOf = async (scrapeId: string) =>
  (await stack.db.pool.query('SELECT state, end_reason FROM interact_sessions WHERE scrape_id = $1', [scrapeId])).rows[0] as
    | { state: string; end_reason: string | null }
    | undefined;
/** Ends sessions a failed assertion left open, so the next test gets the worker's room. */
const stopAll = (client: Firecrawl, ids: string[]) => Promise.all(ids.map((id) => client.stopInteraction(id).catch(() => undefined)));
const liveSessions = async () => Number(/wds_browser_sessions\{state="live"\} (\d+)/.exec(await (await fetch(browserWorker.metricsUrl!)).text())?.[1]);

before(async () => {
  site = await startFixtureSite(routes);
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_INTERACT_IDLE_SECONDS: '120' } });
  // Four sessions per worker, of which a team may hold the default share: half.
  [browserWorker, shortLife] = await Promise.all([
    stack.addWorker({ WDS_WORKER_QUEUES: 'wds-browser', WDS_BROWSER_PAGES: '2', WDS_INTERACT_SESSIONS: '4', WDS_INTERACT_PARKED_PAGES: '8' }),
    stack.addApi({ WDS_INTERACT_MAX_SESSION_SECONDS: String(MAX_LIFE_S) }).then((a) => ({ url: a.url!, apiKey: stack.apiKey })),
  ]);
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
}, { timeout: 180_000 });
after(async () => {
  await stack?.stop();
  await site?.close();
}, { timeout: 60_000 });

describe('item 2: the code sandbox opens no socket', () => {
  test('every way out (TURN over TCP, turns:, STUN, fetch, WebSocket, workers, preconnect…) reaches no TCP or UDP listener on 127.0.0.1', { timeout: 120_000 }, async () => {
    const l = await startEgressListeners();
    const id = await parkedScrape(fc, '/app');
    try {
      // Control: the session's page (private networks are allowed in this stack) does reach the listener by TURN over TCP.
      const control = await fc.interact(id, { code: `await page.evaluate(${JSON.stringify(turnTcpProbe(l.tcpPort))}); 'done'` });
      assert.equal(control.result, 'done', JSON.stringify(control));
      assert.ok(l.accepts() > 0, 'TURN over TCP connects where nothing holds it back');
      const heard = l.accepts();

      const r = await fc.interact(id, { code: `await ${egressProbe(l)}`, timeout: 60 });
      assert.equal(r.exitCode, 0, JSON.stringify(r));
      assert.deepEqual(JSON.parse(r.result!), [...EGRESS_KINDS], 'the probe tried every kind');
      assert.ok(EGRESS_KINDS.includes('turn-tcp') && EGRESS_KINDS.includes('turns'));
      assert.equal(l.accepts() - heard, 0, 'no TCP connection from the sandbox');
      assert.equal(l.datagrams(), 0, 'no UDP datagram from the sandbox');
    } finally {
      await stopAll(fc, [id]);
      await l.close();
    }
  });
});

describe('item 5: page values are bounded in the page', () => {
  test('values of 1e8 characters, a 5 MB document and a 30,000 px screenshot are refused before they reach the worker, the answer says so, and its peak RSS stays flat', { timeout: 180_000 }, async () => {
    const id = await parkedScrape(fc, '/big');
    try {
      const pid = browserWorker.child.pid!;
      resetPeakRss(pid);
      const before = peakRss(pid);
      const attacks = [
        `await page.evaluate(() => 'A'.repeat(1e8))`,
        `await page.content()`,
        `await page.locator('#big').innerHTML()`,
        `await page.screenshot({ fullPage: true })`,
      ];
      const answers = [];
      for (const code of attacks) answers.push(await fc.interact(id, { code, timeout: 60 }));
      const own = await fc.interact(id, { code: `'A'.repeat(1e8)`, timeout: 60 });
      const grew = peakRss(pid) - before;
      assert.ok(grew < 150 * 2 ** 20, `the browser worker's peak RSS grew by ${Math.round(grew / 2 ** 20)} MiB`);
      answers.forEach((r, i) => {
        assert.equal(r.success, false, attacks[i]);
        assert.equal(r.exitCode, 1, attacks[i]);
        assert.match(r.error!, /refused: /, attacks[i]);
        assert.match(r.stderr!, /\[wds\] .*refused: /, `${attacks[i]}: stderr says so`);
      });
      assert.equal(own.exitCode, 0);
      assert.equal(own.result!.length, 1 << 20, 'the result is cut in the sandbox');
      assert.equal((own as { truncated?: boolean }).truncated, true);
    } finally {
      await stopAll(fc, [id]);
    }
  });
});

describe('item 8: sessions are shared between teams and end', () => {
  test('a team holds at most its share of a worker\'s sessions (429 INTERACT_SESSIONS_PER_TEAM); another team still opens one', { timeout: 180_000 }, async () => {
    const ids = await Promise.all([0, 1, 2].map(() => parkedScrape(fc, '/app')));
    const other = await stack.newTeam();
    const theirs = new Firecrawl({ apiKey: other.apiKey, apiUrl: stack.url });
    const otherId = await parkedScrape(theirs, '/app');
    try {
      for (const id of ids.slice(0, 2)) assert.equal((await fc.interact(id, { code: '1 + 1' })).result, '2');
      const third = await call(stack, 'POST', `/v2/scrape/${ids[2]}/interact`, { code: '1 + 1' });
      assert.equal(third.status, 429, third.text);
      assert.equal(third.json.code, 'INTERACT_SESSIONS_PER_TEAM');
      assert.match(third.json.error, /already holds 2 .*WDS_INTERACT_SESSIONS_PER_TEAM/);

      assert.equal((await theirs.interact(otherId, { code: `'mine'` })).result, 'mine', 'the worker kept room for another team');
      assert.equal(await liveSessions(), 3);

      // A session ended frees the team's share.
      await fc.stopInteraction(ids[0]!);
      assert.equal((await fc.interact(ids[2]!, { code: '2 + 2' })).result, '4');
    } finally {
      await Promise.all([stopAll(fc, ids), stopAll(theirs, [otherId])]);
    }
  });

  test('a session ends at its maximum life however often it is called; later calls answer 410 SESSION_EXPIRED', { timeout: 120_000 }, async () => {
    const id = await parkedScrape(fc, '/app');
    const opened = Date.now();
    // Calls every second keep it in use; none extends it.
    let answered = 0;
    for (;;) {
      const r = await call(shortLife, 'POST', `/v2/scrape/${id}/interact`, { code: `'still here'` });
      if (r.status !== 200) {
        assert.equal(r.status, 410, r.text);
        assert.match(r.json.code, /^SESSION_(EXPIRED|ENDING)$/, r.text);
        break;
      }
      answered++;
      assert.ok(Date.now() - opened < 60_000, 'the session outlived its life by far');
      await new Promise((res) => setTimeout(res, 1_000));
    }
    assert.ok(answered >= 2, `${answered} calls answered before the end`);
    await until(async () => (await sessionOf(id))?.end_reason === 'expired', 'the session row says it expired', { timeoutMs: 30_000 });
    const lived = Date.now() - opened;
    assert.ok(lived >= MAX_LIFE_S * 1000, `it lived ${lived} ms`);

    const again = await call(shortLife, 'POST', `/v2/scrape/${id}/interact`, { code: `'back?'` });
    assert.equal(again.status, 410, again.text);
    assert.equal(again.json.code, 'SESSION_EXPIRED');
    assert.match(again.json.error, /maximum life of 8 seconds .*WDS_INTERACT_MAX_SESSION_SECONDS.*Scrape the page again/);
    const stop = await call(shortLife, 'DELETE', `/v2/scrape/${id}/interact`);
    assert.equal(stop.status, 410, stop.text);
    assert.match(stop.json.error, /maximum life/);
    assert.equal(await liveSessions(), 0, 'the worker closed the page');
  });
});
