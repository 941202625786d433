import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { Client, Connection } from '@temporalio/client';
import { jobCreditBalance } from '@wds/db';
import {
  html,
  namespaceFor,
  runningActivities,
  startFakeOpenAI,
  startFixtureSite,
  startStack,
  testInfra,
  type FakeChatRequest,
  type FakeOpenAI,
  type FakeReply,
  type FixtureSite,
  type Stack,
  until,
} from '@wds/test-utils';

// Agent runs that outlive a worker and run long: a worker SIGKILLed mid-step (the run completes,
// each trace event and each credit charge exactly once) and 1,000 steps across continue-as-new
// (every workflow run's history stays under 10,000 events).
let stack: Stack;
let site: FixtureSite;
let model: FakeOpenAI;
let fc: Firecrawl;

type Script = (step: number, r: FakeChatRequest) => FakeReply;
const scripts = new Map<string, Script>();
const tagOf = (r: FakeChatRequest) => /\[([\w-]+)\]/.exec(String(r.messages.find((m) => m.role === 'user')?.content ?? ''))?.[1] ?? '';
/** The step a request is for: the model's own turns carried, plus one (the window keeps the newest ones). */
const stepOf = (r: FakeChatRequest) => {
  const last = [...r.messages].reverse().find((m) => m.role === 'assistant');
  const n = /^s(\d+)-/.exec(last?.tool_calls?.[0]?.id ?? '')?.[1];
  return n ? Number(n) + 1 : 1;
};
const tool = (step: number, name: string, args: unknown, i = 0) => ({ id: `s${step}-${i}`, name, arguments: args });

before(async () => {
  model = await startFakeOpenAI({
    handler: (r) => {
      const s = scripts.get(tagOf(r));
      return s ? s(stepOf(r), r) : { content: 'no script' };
    },
  });
  site = await startFixtureSite({ '/fast': html('<html><head><title>Fast</title></head><body><main><p>Fast page, price 10 EUR.</p></main></body></html>') });
  site.route('/slow', (req, res) => {
    setTimeout(() => void html('<html><head><title>Slow</title></head><body><main><p>Slow page, price 20 EUR.</p></main></body></html>')(req, res), 4_000);
  });
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    // The 1,000-step run needs more than the default agent credit ceiling (2,500).
    env: { ...model.env, WDS_LLM_CONCURRENCY: '8', WDS_AGENT_MAX_CREDITS: '0' },
  });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});

after(async () => {
  await stack?.stop();
  await site?.close();
  await model?.close();
});

async function finished(id: string, timeoutMs: number) {
  return until(async () => {
    const s = await fc.getAgentStatus(id);
    return s.status === 'processing' ? null : s;
  }, `agent ${id} to finish`, { timeoutMs, everyMs: 500 });
}

test('a worker SIGKILLed mid-step: the run completes, each trace event and each charge exactly once', { timeout: 240_000 }, async () => {
  scripts.set('kill', (step) => {
    if (step === 1) return { toolCalls: [tool(1, 'scrape', { url: site.url('/fast') })] };
    if (step === 2) return { toolCalls: [tool(2, 'scrape', { url: site.url('/slow') }), tool(2, 'save_result', { data: { fast: 10 } }, 1)] };
    return { toolCalls: [tool(step, 'finish', { data: { fast: 10, slow: 20 } })] };
  });
  const { id } = await fc.startAgent({ prompt: '[kill] Read both pages' });
  const workflowId = `agent-${id}`;
  // Kill while the slow page's scrape runs on the first worker (its request has reached the page).
  await until(() => site.hits('/slow') > 0 || null, 'the slow scrape to run', { timeoutMs: 30_000, everyMs: 50 });
  assert.ok((await runningActivities(stack.namespace, workflowId)).some((a) => a.type === 'agentFetchTool'));
  stack.worker.child.kill('SIGKILL');
  await stack.addWorker();

  const s = await finished(id, 180_000);
  assert.equal(s.status, 'completed', JSON.stringify(s));
  assert.deepEqual(s.data, { fast: 10, slow: 20 });
  assert.ok(site.hits('/slow') >= 2, 'the interrupted scrape ran again on the new worker');

  const t = await fc.getAgentTrace(id);
  const events = t.events as unknown as { type: string; producerSequence: number; toolCallId?: string; eventId: string }[];
  assert.deepEqual(events.map((e) => e.producerSequence), events.map((_, i) => i + 1), 'gap-free, in order');
  assert.equal(new Set(events.map((e) => e.eventId)).size, events.length, 'no event twice');
  const count = (type: string) => events.filter((e) => e.type === type).length;
  assert.equal(count('run.started'), 1);
  assert.equal(count('run.finished'), 1);
  assert.equal(count('tool_call.started'), 4);
  assert.equal(count('tool_call.finished'), 4);
  assert.deepEqual(events.filter((e) => e.type === 'tool_call.finished').map((e) => e.toolCallId).sort(), ['s1-0', 's2-0', 's2-1', 's3-0']);

  // Each reservation converted by exactly one charge; the bill is the status's creditsUsed.
  const charges = await stack.db.pool.query(
    `SELECT reservation_key, count(*)::int AS n FROM credit_ledger WHERE job_id = $1 AND entry = 'charge' GROUP BY reservation_key`,
    [id],
  );
  assert.ok(charges.rows.length >= 5, `charges: ${JSON.stringify(charges.rows)}`);
  for (const r of charges.rows) assert.equal(r.n, 1, `reservation ${r.reservation_key} charged once`);
  assert.deepEqual(await jobCreditBalance(stack.db.db, id), { used: s.creditsUsed, reserved: 0 });
});

test('1,000 steps across continue-as-new: every run\'s history stays under 10,000 events', { timeout: 900_000 }, async () => {
  scripts.set('long', (step) => {
    if (step >= 1_000) return { toolCalls: [tool(step, 'finish', { data: { steps: step } })] };
    return { toolCalls: [tool(step, 'save_result', { data: { step } })] };
  });
  const { id } = await fc.startAgent({ prompt: '[long] Count to a thousand', maxCredits: 1_000_000 });
  const s = await finished(id, 880_000);
  assert.equal(s.status, 'completed', JSON.stringify(s));
  assert.deepEqual(s.data, { steps: 1_000 });

  const connection = await Connection.connect({ address: testInfra().temporalAddress });
  try {
    const client = new Client({ connection, namespace: stack.namespace });
    const runs: number[] = [];
    for await (const w of client.workflow.list({ query: `WorkflowId = "agent-${id}"` })) runs.push(w.historyLength);
    assert.ok(runs.length >= 5, `continued as new (${runs.length} runs)`);
    for (const n of runs) assert.ok(n < 10_000, `a run's history has ${n} events`);
    console.log(`# agent: 1,000 steps in ${runs.length} workflow runs, history lengths ${runs.join(', ')}`);
  } finally {
    await connection.close();
  }
});
