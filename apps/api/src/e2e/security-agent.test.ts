import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { sql } from 'drizzle-orm';
import { jobCreditBalance, loadAgentRun, setTeamLimits, teamCreditBalance } from '@wds/db';
import {
  call,
  html,
  namespaceFor,
  promptText,
  startFakeOpenAI,
  startFixtureSite,
  startStack,
  agentRunTag,
  agentStepOf,
  type AgentScript,
  type FakeOpenAI,
  type FakeReply,
  toolCall as tool,
  type FixtureSite,
  type Stack,
  until,
} from '@wds/test-utils';

// Issue 38's agent items, as attacks on the running stack (real API, workers, Temporal, Postgres,
// Chromium; a scripted OpenAI-compatible model picks the tools): (3) a run that works and then
// fails is unbilled, and nothing it read or saved is served; (10) strictConstrainToURLs holds
// past the requested URL (redirect hops, script and action navigations); (11) the sub-agent cap
// holds when a step's spawns run at once; and the default team limits (monitors, maxCredits).
let stack: Stack;
let site: FixtureSite;
let model: FakeOpenAI;
let fc: Firecrawl;

/** What the page holds and the model saves: nothing of it may reach a client of an unbilled run. */
const SECRET = 'ZEBRA-4417-QUARTZ';
const OFF_LIST = { landing: 'OFFLIST-LANDING-7731', scripted: 'OFFLIST-SCRIPTED-5520', clicked: 'OFFLIST-CLICKED-9904' };
const MAX_MONITORS = 2;
const AGENT_CEILING = 200;

const scripts = new Map<string, AgentScript>();
const requestsOf = (tag: string) => model.chatRequests().filter((r) => r.tools?.length && agentRunTag(r) === tag);
const hooks: { id?: string; type?: string; raw: string }[] = [];

before(async () => {
  model = await startFakeOpenAI({
    handler: (r) => {
      const s = scripts.get(agentRunTag(r));
      return s ? s(agentStepOf(r), r) : { content: 'no script' };
    },
  });
  site = await startFixtureSite({
    '/vault': html(`<html><head><title>Vault</title></head><body><main><h1>Vault</h1><p>The vault code is ${SECRET}.</p></main></body></html>`),
    '/listed/redirect': (_req, res) => void res.writeHead(302, { location: '/offlist/landing' }).end(),
    '/offlist/landing': html(`<html><body><main><p>${OFF_LIST.landing}</p></main></body></html>`),
    '/listed/script-nav': html("<html><body><main><h1>Start</h1><p>Wait here.</p></main><script>setTimeout(() => { location.href = '/offlist/scripted'; }, 100)</script></body></html>"),
    '/offlist/scripted': html(`<html><body><main><p>${OFF_LIST.scripted}</p></main></body></html>`),
    '/listed/link': html('<html><body><main><h1>Links</h1><a id="go" href="/offlist/clicked">next</a></main></body></html>'),
    '/offlist/clicked': html(`<html><body><main><p>${OFF_LIST.clicked}</p></main></body></html>`),
  });
  site.route('/hook', (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const j = JSON.parse(body) as { id?: string; type?: string };
      hooks.push({ id: j.id, type: j.type, raw: body });
      res.writeHead(200).end('ok');
    });
  });
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: { ...model.env, WDS_LLM_CONCURRENCY: '8', WDS_MAX_MONITORS: String(MAX_MONITORS), WDS_AGENT_MAX_CREDITS: String(AGENT_CEILING) },
  });
  await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-browser', WDS_PUBLIC_URL: stack.url, WDS_BROWSER_PAGES: '1' });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});

after(async () => {
  await stack?.stop();
  await site?.close();
  await model?.close();
});

async function finished(id: string, timeoutMs = 90_000) {
  return until(async () => {
    const s = await fc.getAgentStatus(id);
    return s.status === 'processing' ? null : s;
  }, `agent ${id} to finish`, { timeoutMs, everyMs: 250 });
}

type TraceEvent = { type: string; toolCallId?: string; toolName?: string; artifact?: { kind: string; snapshotId: string; path?: string }; [k: string]: unknown };
const traceOf = async (id: string) => (await call(stack, 'GET', `/v2/agent/${id}/trace`)).json as { success: boolean; events: TraceEvent[] };
const snapshotIds = (events: TraceEvent[]) => events.filter((e) => e.type === 'artifact.updated').map((e) => e.artifact!.snapshotId);

/** Everything a client can read of the job (status, trace, each snapshot, its webhooks) carries none of `secrets`. */
async function assertNothingServed(id: string, secrets: string[], phase: string) {
  const status = await call(stack, 'GET', `/v2/agent/${id}`);
  const trace = await traceOf(id);
  const snaps = await Promise.all(snapshotIds(trace.events).map((sid) => call(stack, 'GET', `/v2/agent/${id}/snapshots/${sid}`)));
  assert.ok(snapshotIds(trace.events).length > 0, `${phase}: the run made snapshots`);
  for (const s of snaps) {
    assert.equal(s.status, 409, `${phase}: ${s.text}`);
    assert.equal(s.json.success, false);
    assert.equal(s.json.code, 'AGENT_RESULTS_WITHHELD');
  }
  const served = [status.text, JSON.stringify(trace), ...snaps.map((s) => s.text), ...hooks.filter((h) => h.id === id).map((h) => h.raw)].join('\n');
  for (const secret of secrets) assert.ok(!served.includes(secret), `${phase}: "${secret}" was served: ${served.slice(0, 3_000)}`);
  return { status: status.json, trace: trace.events, snaps };
}

describe('item 3: a run that does work and then fails is unbilled, and serves nothing of it', () => {
  const work = (step: number): FakeReply => {
    if (step === 1) return { toolCalls: [tool('scrape', { url: site.url('/vault') }, 'c-vault')] };
    if (step === 2) return { toolCalls: [tool('save_result', { data: { code: SECRET } }, 'c-save')] };
    return { toolCalls: [tool('refuse', { reason: `I will not finish, but the code is ${SECRET}` }, 'c-refuse')] };
  };

  test('scrape, save_result, then refuse: failed, creditsUsed 0, no data; while it runs and after, no snapshot, trace field, webhook or error carries what it read or saved', { timeout: 150_000 }, async () => {
    // The refusal step's reply waits for the test: meanwhile the job runs, its page and saved result stored.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    scripts.set('leak-refuse', (step) => (step === 3 ? gate.then(() => work(step)) : work(step)));
    const { id } = await fc.startAgent({ prompt: '[leak-refuse] Read the vault, save the code, then refuse', webhook: { url: site.url('/hook'), events: ['started', 'action', 'failed'] } });
    try {
      await until(async () => (snapshotIds((await traceOf(id)).events).length >= 2 ? true : null), 'the page and the saved result to be stored', { timeoutMs: 60_000 });
      const during = await assertNothingServed(id, [SECRET, '/vault'], 'while running');
      assert.equal(during.status.status, 'processing');
      assert.match(during.snaps[0]!.json.error, /still running/);
      const started = during.trace.find((e) => e.type === 'tool_call.started' && e.toolCallId === 'c-vault');
      assert.ok(started && !('parameters' in started), JSON.stringify(started));
    } finally {
      release();
    }

    const s = await finished(id);
    assert.equal(s.status, 'failed', JSON.stringify(s));
    assert.equal(s.creditsUsed, 0);
    assert.equal(s.data, undefined);
    assert.equal(s.error, 'The agent refused the task.');
    const end = await assertNothingServed(id, [SECRET, '/vault'], 'after the end');
    assert.match(end.snaps[0]!.json.error, /not billed/);
    assert.equal(end.trace.at(-1)!.type, 'run.finished');
    assert.equal(end.trace.at(-1)!.outcome, 'refused');
    // Unbilled: nothing charged, nothing held.
    assert.deepEqual(await jobCreditBalance(stack.db.db, id), { used: 0, reserved: 0 });
    await until(() => (hooks.some((h) => h.id === id && h.type === 'agent.failed') ? true : null), 'the failed webhook');
    assert.ok(hooks.filter((h) => h.id === id && h.type === 'agent.action').length >= 2, 'action webhooks were sent (without results)');
    await assertNothingServed(id, [SECRET, '/vault'], 'webhooks delivered');

    // The thread's next turn is not told what the unbilled turn found.
    scripts.set('turn-two', () => ({ toolCalls: [tool('finish', { data: { ok: true } })] }));
    const next = await fc.startAgent({ prompt: '[turn-two] What was the code?', threadId: s.threadId! });
    assert.equal((await finished(next.id)).status, 'completed');
    assert.ok(!promptText(requestsOf('turn-two')[0]!).includes(SECRET), 'the earlier turn\'s results reached the next turn');
  });

  test('maxCredits reached after a scrape and saved results: failed, creditsUsed 0, no data, nothing served', { timeout: 120_000 }, async () => {
    scripts.set('leak-cap', (step) => (step <= 2 ? work(step) : { toolCalls: [tool('save_result', { data: { code: SECRET, step } }, `c-more-${step}`)] }));
    const { id } = await fc.startAgent({ prompt: '[leak-cap] Read the vault and save as you go', maxCredits: 12 });
    const s = await finished(id);
    assert.equal(s.status, 'failed', JSON.stringify(s));
    assert.match(s.error ?? '', /credit limit/);
    assert.equal(s.creditsUsed, 0);
    assert.equal(s.data, undefined);
    assert.ok(requestsOf('leak-cap').length >= 3, 'the run worked before it hit the cap');
    const end = await assertNothingServed(id, [SECRET, '/vault'], 'credit limit');
    assert.equal(end.trace.at(-1)!.outcome, 'credit_limit_reached');
    assert.deepEqual(await jobCreditBalance(stack.db.db, id), { used: 0, reserved: 0 });
  });

  test('cancelled after a scrape and saved results: failed, creditsUsed 0, nothing served', { timeout: 120_000 }, async () => {
    scripts.set('leak-cancel', (step) => (step <= 2 ? work(step) : { delayMs: 10_000, toolCalls: [tool('finish', { data: { code: SECRET } })] }));
    const { id } = await fc.startAgent({ prompt: '[leak-cancel] Read the vault, save the code, take your time' });
    await until(() => (requestsOf('leak-cancel').length >= 3 ? true : null), 'the third step to start', { timeoutMs: 60_000 });
    assert.equal(await fc.cancelAgent(id), true);
    const s = await finished(id);
    assert.equal(s.status, 'failed');
    assert.equal(s.creditsUsed, 0);
    await assertNothingServed(id, [SECRET, '/vault'], 'cancelled');
    assert.deepEqual(await jobCreditBalance(stack.db.db, id), { used: 0, reserved: 0 });
  });

  test('the other end: a completed run serves what it read and saved, and is billed for it exactly once', { timeout: 120_000 }, async () => {
    scripts.set('paid', (step) => (step <= 2 ? work(step) : { toolCalls: [tool('finish', { data: { code: SECRET } }, 'c-fin')] }));
    const team = await stack.newTeam();
    const client = new Firecrawl({ apiKey: team.apiKey, apiUrl: stack.url });
    const { id } = await client.startAgent({ prompt: '[paid] Read the vault and return the code' });
    const s = await until(async () => {
      const x = await client.getAgentStatus(id);
      return x.status === 'processing' ? null : x;
    }, 'the paid run', { timeoutMs: 90_000 });
    assert.equal(s.status, 'completed', JSON.stringify(s));
    assert.deepEqual(s.data, { code: SECRET });
    assert.ok(s.creditsUsed! >= 4, `creditsUsed ${s.creditsUsed}: three model steps and a page`);
    // Billed once: the ledger's charges are the status's creditsUsed and the team's usage, one charge per reservation.
    assert.deepEqual(await jobCreditBalance(stack.db.db, id), { used: s.creditsUsed, reserved: 0 });
    assert.equal((await teamCreditBalance(stack.db.db, team.teamId)).used, s.creditsUsed);
    const charges = (await stack.db.db.execute<{ key: string }>(sql`SELECT idempotency_key AS key FROM credit_ledger WHERE job_id = ${id} AND entry = 'charge'`)).rows.map((r) => r.key);
    assert.equal(new Set(charges).size, charges.length);
    assert.ok(charges.every((k) => k.startsWith(`charge:agent:${id}:`)), charges.join(', '));
    const trace = (await call({ url: stack.url, apiKey: team.apiKey }, 'GET', `/v2/agent/${id}/trace`)).json as { events: TraceEvent[] };
    const started = trace.events.find((e) => e.type === 'tool_call.started' && e.toolCallId === 'c-vault');
    assert.deepEqual(started?.parameters, { url: site.url('/vault') }, 'a completed job\'s trace is whole');
    const page = trace.events.find((e) => e.type === 'artifact.updated' && e.artifact!.kind === 'markdown')!;
    const snap = await call({ url: stack.url, apiKey: team.apiKey }, 'GET', `/v2/agent/${id}/snapshots/${page.artifact!.snapshotId}`);
    assert.equal(snap.status, 200);
    assert.match(snap.json.snapshot, new RegExp(SECRET));
  });
});

describe('item 10: strictConstrainToURLs holds for every document the agent reads', () => {
  test('a redirect off the list is refused before the hop is requested (HTTP engine)', { timeout: 120_000 }, async () => {
    scripts.set('strict-redirect', (step) => (step === 1 ? { toolCalls: [tool('scrape', { url: site.url('/listed/redirect') }, 'c-redir')] } : { toolCalls: [tool('finish', { data: { ok: true } })] }));
    const hits = site.hits('/offlist/landing');
    const { id } = await fc.startAgent({ prompt: '[strict-redirect] Read the listed page', urls: [site.url('/listed/redirect')], strictConstrainToURLs: true });
    const s = await finished(id);
    assert.equal(s.status, 'completed', JSON.stringify(s));
    assert.equal(site.hits('/offlist/landing'), hits, 'the off-list hop was never requested');
    const told = promptText(requestsOf('strict-redirect')[1]!);
    assert.match(told, /AGENT_URL_NOT_ALLOWED: the page led to .*\/offlist\/landing/);
    assert.ok(!told.includes(OFF_LIST.landing));
    const tools = (requestsOf('strict-redirect')[0]!.tools ?? []).map((t) => t.function.name);
    assert.ok(!tools.includes('map') && !tools.includes('search'), `no map or search under strictConstrainToURLs: ${tools.join(', ')}`);
  });

  test('the browser: a script, an action and a redirect that navigate the main frame off the list are refused, nothing of the page read', { timeout: 180_000 }, async () => {
    const urls = [site.url('/listed/script-nav'), site.url('/listed/link'), site.url('/listed/redirect')];
    scripts.set('strict-browser', (step) =>
      step === 1
        ? {
            toolCalls: [
              tool('scrape', { url: urls[0], actions: [{ type: 'wait', milliseconds: 1_500 }] }, 'c-script'),
              tool('scrape', { url: urls[1], actions: [{ type: 'click', selector: '#go' }, { type: 'wait', milliseconds: 1_000 }] }, 'c-click'),
              tool('scrape', { url: urls[2], actions: [{ type: 'wait', milliseconds: 100 }] }, 'c-hop'),
            ],
          }
        : { toolCalls: [tool('finish', { data: { ok: true } })] },
    );
    const { id } = await fc.startAgent({ prompt: '[strict-browser] Read the listed pages', urls, strictConstrainToURLs: true });
    const s = await finished(id, 150_000);
    assert.equal(s.status, 'completed', JSON.stringify(s));
    const second = requestsOf('strict-browser')[1]!;
    const told = (callId: string) => String(second.messages.find((m) => m.tool_call_id === callId)?.content ?? '');
    assert.match(told('c-script'), /^Error: AGENT_URL_NOT_ALLOWED: the page led to .*\/offlist\/scripted/);
    assert.match(told('c-click'), /^Error: AGENT_URL_NOT_ALLOWED: the page led to .*\/offlist\/clicked/);
    assert.match(told('c-hop'), /^Error: AGENT_URL_NOT_ALLOWED: the page led to .*\/offlist\/landing/);
    const all = promptText(second);
    for (const text of Object.values(OFF_LIST)) assert.ok(!all.includes(text), `${text} reached the model`);
    const trace = (await traceOf(id)).events;
    assert.equal(trace.filter((e) => e.type === 'artifact.updated' && e.artifact!.kind === 'markdown').length, 0, 'no page of the three was stored');
  });
});

describe('item 11: the sub-agent cap holds when a step spawns at once', () => {
  test('16 spawn_subagent calls in one step: exactly 5 sub-agents, the other 11 told the cap', { timeout: 180_000 }, async () => {
    scripts.set('swarm', (step) =>
      step === 1
        ? { toolCalls: Array.from({ length: 16 }, (_, i) => tool('spawn_subagent', { prompt: `[drone] part ${i}` }, `c-spawn-${i}`)) }
        : { toolCalls: [tool('finish', { data: { ok: true } }, 'c-fin')] },
    );
    scripts.set('drone', () => ({ toolCalls: [tool('finish', { data: { part: 'done' } })] }));
    const { id } = await fc.startAgent({ prompt: '[swarm] Split the work sixteen ways' });
    const s = await finished(id, 150_000);
    assert.equal(s.status, 'completed', JSON.stringify(s));
    const subs = await stack.db.db.execute<{ n: number; names: string[] }>(sql`SELECT count(*)::int AS n, array_agg(name ORDER BY name) AS names FROM agent_runs WHERE parent_id = ${id}`);
    assert.equal(subs.rows[0]!.n, 5, JSON.stringify(subs.rows[0]));
    assert.deepEqual(subs.rows[0]!.names, ['subagent-1', 'subagent-2', 'subagent-3', 'subagent-4', 'subagent-5']);
    const second = requestsOf('swarm')[1]!;
    const refused = second.messages.filter((m) => m.role === 'tool' && /at most 5 sub-agents per task/.test(String(m.content)));
    assert.equal(refused.length, 11);
    const trace = (await traceOf(id)).events;
    assert.equal(new Set(trace.filter((e) => e.type === 'agent.started' && (e.agent as { role: string }).role === 'subagent').map((e) => (e.agent as { id: string }).id)).size, 5);
  });
});

describe('default team limits (no team_limits row), raised by a row', () => {
  const monitor = (i: number) => ({ name: `m${i}`, schedule: { cron: '0 3 * * *' }, targets: [{ type: 'scrape', urls: [site.url('/vault')] }] });

  test(`monitors: a team without a row has at most WDS_MAX_MONITORS (${MAX_MONITORS}), concurrent creates included; a row raises it`, { timeout: 60_000 }, async () => {
    const team = await stack.newTeam();
    const as = { url: stack.url, apiKey: team.apiKey };
    // Four at once for two places: the count is taken under the team's lock.
    const first = await Promise.all([0, 1, 2, 3].map((i) => call(as, 'POST', '/v2/monitor', monitor(i))));
    assert.deepEqual(first.map((r) => r.status).sort(), [200, 200, 403, 403], first.map((r) => r.text).join('\n'));
    const refused = first.find((r) => r.status === 403)!;
    assert.equal(refused.json.success, false);
    assert.equal(refused.json.code, 'MONITOR_LIMIT_REACHED');
    assert.match(refused.json.error, /^Forbidden: this team has 2 monitors, the most it may have \(2\)/);
    await setTeamLimits(stack.db.db, team.teamId, { maxMonitors: 3 });
    // The API re-reads a team's limits every few seconds.
    const third = await until(async () => {
      const r = await call(as, 'POST', '/v2/monitor', monitor(5));
      return r.status === 200 ? r : null;
    }, 'the raised limit to apply', { timeoutMs: 20_000, everyMs: 500 });
    assert.equal(third.json.success, true);
    assert.equal((await call(as, 'POST', '/v2/monitor', monitor(6))).status, 403, 'the raised limit holds too');
    // A deleted monitor frees its place.
    assert.equal((await call(as, 'DELETE', `/v2/monitor/${third.json.data.id}`)).status, 200);
    assert.equal((await call(as, 'POST', '/v2/monitor', monitor(7))).status, 200);
  });

  test(`agent maxCredits: without a row the ceiling is WDS_AGENT_MAX_CREDITS (${AGENT_CEILING}): above it 400, unset it is the cap; a row raises it`, { timeout: 60_000 }, async () => {
    scripts.set('ceiling', () => ({ toolCalls: [tool('finish', { data: { ok: true } })] }));
    const team = await stack.newTeam();
    const as = { url: stack.url, apiKey: team.apiKey };
    const over = await call(as, 'POST', '/v2/agent', { prompt: '[ceiling] x', maxCredits: AGENT_CEILING + 1 });
    assert.equal(over.status, 400, over.text);
    assert.equal(over.json.success, false);
    assert.equal(over.json.code, 'BAD_REQUEST');
    assert.match(over.json.error, new RegExp(`^maxCredits must be at most ${AGENT_CEILING} for this team`));
    assert.deepEqual(over.json.details[0].path, ['maxCredits']);
    assert.match(over.json.details[0].message, new RegExp(`maxCredits must be at most ${AGENT_CEILING} for this team`));
    const unset = await call(as, 'POST', '/v2/agent', { prompt: '[ceiling] x' });
    assert.equal(unset.status, 200, unset.text);
    assert.equal(((await loadAgentRun(stack.db.db, unset.json.id))!.options as { maxCredits: number }).maxCredits, AGENT_CEILING);

    await setTeamLimits(stack.db.db, team.teamId, { agentMaxCredits: 5_000 });
    const raised = await until(async () => {
      const r = await call(as, 'POST', '/v2/agent', { prompt: '[ceiling] x', maxCredits: 5_000 });
      return r.status === 200 ? r : null;
    }, 'the raised ceiling to apply', { timeoutMs: 20_000, everyMs: 500 });
    assert.equal(((await loadAgentRun(stack.db.db, raised.json.id))!.options as { maxCredits: number }).maxCredits, 5_000);
    const unsetRaised = await call(as, 'POST', '/v2/agent', { prompt: '[ceiling] x' });
    assert.equal(((await loadAgentRun(stack.db.db, unsetRaised.json.id))!.options as { maxCredits: number }).maxCredits, 2_500, 'unset: Firecrawl\'s default under a higher ceiling');
    assert.equal((await call(as, 'POST', '/v2/agent', { prompt: '[ceiling] x', maxCredits: 5_001 })).status, 400);
  });
});
