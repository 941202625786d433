import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { appendAgentMessage, connectDb, ensureTeam, findAgentMessages, insertAgentRun, jobCreditBalance, migrateDb, requestAgentCancel, type DbHandle } from '@wds/db';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import type { AgentToolInput } from '@wds/workflows/agent';
import { runToolCall, toolKey, ToolError, type Tool, type ToolEnv, type ToolOutcome } from './tool-runner';

// The agent's tool runner (runToolCall: every tool activity goes through it) in Temporal's
// MockActivityEnvironment, on real Postgres: heartbeats while a tool works, a cancellation
// reaching the tool, exactly-once commits, and the credit reservation before a tool runs. The
// tools are small implementations of the Tool interface, so what is tested is the runner.
let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 5 });
  await migrateDb(h);
});
after(() => h?.close());

/** A running agent job whose step 1 called `scrape` (call id c1), as agentStep stores it. */
async function runWithCall(maxCredits = 100, args: unknown = { url: 'https://example.com/' }): Promise<AgentToolInput> {
  const teamId = await ensureTeam(h.db, `tool-runner-${randomUUID()}`);
  const runId = randomUUID();
  await insertAgentRun(h.db, { id: runId, teamId, rootId: runId, threadId: runId, options: { prompt: 'x', maxCredits, mode: 'extract' } });
  await appendAgentMessage(h.db, { runId, step: 1, role: 'assistant', content: null, key: 'step:1', toolCalls: [{ id: 'c1', name: 'scrape', arguments: JSON.stringify(args) }] });
  return { runId, step: 1, callId: 'c1', name: 'scrape' };
}

/** A scrape tool costing `credits`, whose work is `work` (counted in `runs`). */
function tool(work: (env: ToolEnv) => Promise<ToolOutcome> = async () => ({ content: 'page text', result: { url: 'https://example.com/' }, credits: 1 }), estimate = 1) {
  const t = { runs: 0, estimate: () => estimate, run: async (_a: unknown, env: ToolEnv) => (t.runs++, await work(env)) };
  return t as typeof t & Tool<{ url: string }>;
}
function mockEnv() {
  const env = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
  const beats: number[] = [];
  env.on('heartbeat', () => beats.push(Date.now()));
  return { env, beats };
}
const run = (env: MockActivityEnvironment, input: AgentToolInput, t: Tool<{ url: string }>) => env.run(() => runToolCall(h.db, input, 'scrape', t));
const toolRow = async (i: AgentToolInput) => (await findAgentMessages(h.db, i.runId, [toolKey(i)]))[0];

test('tool runner: a tool runs once, its outcome is committed with its cost, and a retried activity runs nothing again', async () => {
  const input = await runWithCall();
  const t = tool();
  assert.deepEqual(await run(mockEnv().env, input, t), { kind: 'done' });
  const row = await toolRow(input);
  assert.equal(row?.content, 'page text');
  assert.equal(row?.credits, 1);
  assert.deepEqual(await jobCreditBalance(h.db, input.runId), { used: 0, reserved: 1 }, 'reserved until the job ends');

  assert.deepEqual(await run(mockEnv().env, input, t), { kind: 'done' });
  assert.equal(t.runs, 1, 'the retry found the committed row');
});

test('tool runner: heartbeats every 2 s while a tool works', async () => {
  const input = await runWithCall();
  const { env, beats } = mockEnv();
  const t = tool(async () => (await new Promise((r) => setTimeout(r, 4_500)), { content: 'slow', result: {}, credits: 1 }));
  await run(env, input, t);

  assert.equal(beats.length, 2, `heartbeats: ${beats.length}`);
  const t0 = beats[0]!;
  assert.ok(beats[1]! - t0 >= 1_800, 'two seconds apart');
});

test('tool runner: a cancellation reaches the tool through its signal, and nothing is committed (a new attempt runs it)', async () => {
  const input = await runWithCall();
  const { env } = mockEnv();
  let sawAbort = false;
  const t = tool(
    (e) =>
      new Promise<ToolOutcome>((_r, reject) => {
        e.signal.addEventListener('abort', () => {
          sawAbort = true;
          reject(new Error('aborted'));
        });
      }),
  );
  const running = run(env, input, t);
  while (t.runs === 0) await new Promise((r) => setTimeout(r, 20));
  env.cancel();
  await assert.rejects(running);

  assert.ok(sawAbort, "the tool's signal was aborted");
  assert.equal(await toolRow(input), undefined, 'no transcript row: the call is not done');
  assert.deepEqual(await run(mockEnv().env, input, tool()), { kind: 'done' }, 'the next attempt runs it');
});

test('tool runner: a reservation over maxCredits ends the call credit_limit before the tool runs', async () => {
  const input = await runWithCall(3);
  const t = tool(undefined, 5);
  assert.deepEqual(await run(mockEnv().env, input, t), { kind: 'credit_limit' });
  assert.equal(t.runs, 0);
  assert.equal(await toolRow(input), undefined);
  assert.deepEqual(await jobCreditBalance(h.db, input.runId), { used: 0, reserved: 0 });
});

test('tool runner: a tool never charges more than it reserved, whatever it reports', async () => {
  const input = await runWithCall();
  await run(mockEnv().env, input, tool(async () => ({ content: 'x', result: {}, credits: 50 }), 2));
  assert.equal((await toolRow(input))?.credits, 2);
});

test('tool runner: a run being cancelled answers stopped and runs nothing', async () => {
  const input = await runWithCall();
  assert.equal((await requestAgentCancel(h.db, input.runId)).outcome, 'cancelling');
  const t = tool();
  assert.deepEqual(await run(mockEnv().env, input, t), { kind: 'stopped' });
  assert.equal(t.runs, 0);
});

test('tool runner: arguments the schema refuses, and a ToolError, become the error the model reads; other errors are thrown uncommitted', async () => {
  const bad = await runWithCall(100, { url: 'not a url' });
  const t = tool();
  assert.deepEqual(await run(mockEnv().env, bad, t), { kind: 'done' });
  assert.equal(t.runs, 0);
  assert.match(String((await toolRow(bad))?.content), /^Error: invalid arguments for scrape: url/);

  const refused = await runWithCall();
  await run(
    mockEnv().env,
    refused,
    tool(async () => {
      throw new ToolError('403 from the site');
    }),
  );
  assert.equal((await toolRow(refused))?.content, 'Error: 403 from the site');
  assert.equal((await toolRow(refused))?.credits, 0);

  const broken = await runWithCall();
  await assert.rejects(
    run(
      mockEnv().env,
      broken,
      tool(async () => {
        throw new Error('database went away');
      }),
    ),
    /database went away/,
  );
  assert.equal(await toolRow(broken), undefined, 'retried by Temporal, not told to the model');
});
