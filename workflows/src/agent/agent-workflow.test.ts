import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { until } from '@wds/test-utils';
import { nonRetryable, startFakeWorkers, untilCancelled, type FakeWorkers } from '@wds/test-utils/workflow-env';
import { TaskQueues, workflowIds } from '../common';
import type { AgentPlan, AgentStepInput, AgentStepResult, AgentToolInput, AgentToolResult, FinishAgentInput, ToolCallRef } from './contracts';

// The agent workflow (./workflow.ts) against fake activities: which tools go to which queue, how
// each end is written, continue-as-new, and sub-agents. The transcript is the fakes' script.
const ACTIVITIES = ['startAgentRun', 'agentControlTool', 'agentSubagentResults', 'endedSubagents', 'finishAgent', 'agentStep', 'agentExtractTool', 'agentFetchTool', 'agentBrowserTool'];
let w: FakeWorkers;
before(async () => void (w = await startFakeWorkers(import.meta.url, ACTIVITIES)));
after(async () => await w?.stop());

const plan: AgentPlan = { stepsPerRun: 50, maxSteps: 20 };
const calls = (...names: string[]): AgentStepResult => ({ kind: 'calls', calls: names.map((name, i) => ({ id: `c${i}`, name }) satisfies ToolCallRef) });
const finishOk = async (): Promise<AgentToolResult> => ({ kind: 'finish', accepted: true });

/** Fakes for one script: `steps(input)` answers each model step; control tools answer `control(input)`. */
function agent(opts: { steps: (i: AgentStepInput) => AgentStepResult | Promise<AgentStepResult>; control?: (i: AgentToolInput) => Promise<AgentToolResult>; extra?: Record<string, (i: any) => Promise<unknown>> }) {
  return {
    startAgentRun: async () => ({ state: 'running' }),
    agentStep: async (i: AgentStepInput) => await opts.steps(i),
    agentControlTool: opts.control ?? finishOk,
    finishAgent: async (i: FinishAgentInput) => ({ state: i.state }),
    ...opts.extra,
  };
}

async function start(runId: string, p: AgentPlan = plan, extra: { parentId?: string; rootId?: string } = {}) {
  return await w.client.workflow.start('agentWorkflow', {
    taskQueue: TaskQueues.control,
    workflowId: workflowIds.agent(runId),
    args: [{ runId, rootId: extra.rootId ?? runId, plan: p, ...(extra.parentId ? { parentId: extra.parentId } : {}) }],
  });
}
const inputsOf = <T>(name: string) => w.calls.filter((c) => c.name === name).map((c) => c.input as T);

test('agent: tools run on their queues (a page that needs the browser goes on to it), and an accepted finish ends the run succeeded', async () => {
  const runId = randomUUID();
  w.use(
    agent({
      steps: (i) => (i.step === 1 ? calls('scrape', 'extract') : calls('finish')),
      extra: { agentFetchTool: async () => ({ kind: 'needs_browser' }), agentBrowserTool: async () => ({ kind: 'done' }), agentExtractTool: async () => ({ kind: 'done' }) },
    }),
  );
  const result = await (await start(runId)).result();

  assert.deepEqual(result, { state: 'succeeded' });
  assert.deepEqual(inputsOf('startAgentRun'), [{ runId }]);
  assert.deepEqual(inputsOf<AgentStepInput>('agentStep'), [
    { runId, step: 1, final: false },
    { runId, step: 2, final: false },
  ]);
  assert.deepEqual(inputsOf('agentFetchTool'), [{ runId, step: 1, callId: 'c0', name: 'scrape' }]);
  assert.deepEqual(inputsOf('agentBrowserTool'), [{ runId, step: 1, callId: 'c0', name: 'scrape' }], 'the same call, rendered by the browser');
  assert.deepEqual(inputsOf('agentExtractTool'), [{ runId, step: 1, callId: 'c1', name: 'extract' }]);
  assert.deepEqual(inputsOf('agentControlTool'), [{ runId, step: 2, callId: 'c0', name: 'finish' }]);
  assert.deepEqual(inputsOf('finishAgent'), [{ runId, state: 'succeeded' }]);
  assert.equal(w.calls.at(-1)!.name, 'finishAgent');
});

test('agent: a run the start step finds ended already runs no step and writes no end', async () => {
  const runId = randomUUID();
  w.use({ ...agent({ steps: () => calls('finish') }), startAgentRun: async () => ({ state: 'cancelled' }) });
  const result = await (await start(runId)).result();

  assert.deepEqual(result, { state: 'cancelled' });
  assert.deepEqual(w.names(), ['startAgentRun']);
});

test('agent: a refused step reservation ends the run credit_limit_reached before any tool runs', async () => {
  const runId = randomUUID();
  w.use(agent({ steps: () => ({ kind: 'credit_limit' }) }));
  const result = await (await start(runId)).result();

  assert.deepEqual(result, { state: 'credit_limit_reached' });
  assert.deepEqual(w.names(), ['startAgentRun', 'agentStep', 'finishAgent']);
  assert.deepEqual(inputsOf('finishAgent'), [{ runId, state: 'credit_limit_reached' }]);
});

test('agent: a tool whose reservation is refused ends the run credit_limit_reached, even when the same step also finished', async () => {
  const runId = randomUUID();
  w.use(agent({ steps: () => calls('scrape', 'finish'), extra: { agentFetchTool: async () => ({ kind: 'credit_limit' }) } }));
  const result = await (await start(runId)).result();

  assert.deepEqual(result, { state: 'credit_limit_reached' });
  assert.equal(w.names('agentStep').length, 1, 'no further step');
  assert.deepEqual(inputsOf('finishAgent'), [{ runId, state: 'credit_limit_reached' }]);
});

test('agent: a model refusal and a stop answered by the step end the run refused and cancelled', async () => {
  for (const [kind, state] of [
    ['refused', 'refused'],
    ['stopped', 'cancelled'],
  ] as const) {
    const runId = randomUUID();
    w.use(agent({ steps: () => ({ kind }) }));
    assert.deepEqual(await (await start(runId)).result(), { state });
    assert.deepEqual(inputsOf('finishAgent'), [{ runId, state }], kind);
  }
});

test('agent: continues as new every stepsPerRun steps, numbering steps across runs, starting once and ending once', async () => {
  const runId = randomUUID();
  w.use(agent({ steps: (i) => (i.step < 5 ? calls('save_result') : calls('finish')), control: async (i) => (i.name === 'finish' ? { kind: 'finish', accepted: true } : { kind: 'done' }) }));
  const result = await (await start(runId, { stepsPerRun: 2, maxSteps: 20 })).result();

  assert.deepEqual(result, { state: 'succeeded' });
  assert.deepEqual(
    inputsOf<AgentStepInput>('agentStep').map((s) => s.step),
    [1, 2, 3, 4, 5],
  );
  const runs = [...new Set(w.calls.filter((c) => c.name === 'agentStep').map((c) => c.runId))];
  assert.equal(runs.length, 3, 'steps 1–2, 3–4 and 5 in three workflow runs');
  assert.deepEqual(w.names('startAgentRun', 'finishAgent'), ['startAgentRun', 'finishAgent']);
  assert.equal(w.calls.find((c) => c.name === 'finishAgent')!.runId, runs[2], 'the last run writes the end');
});

test('agent: the last step the plan allows is marked final, and a run that has not finished by then ends internal, not retryable', async () => {
  const runId = randomUUID();
  w.use(agent({ steps: () => calls('save_result'), control: async () => ({ kind: 'done' }) }));
  const result = await (await start(runId, { stepsPerRun: 50, maxSteps: 3 })).result();

  assert.deepEqual(result, { state: 'internal' });
  assert.deepEqual(
    inputsOf<AgentStepInput>('agentStep').map((s) => s.final),
    [false, false, true],
  );
  const [end] = inputsOf<FinishAgentInput>('finishAgent');
  assert.equal(end!.state, 'internal');
  assert.equal(end!.retryable, false);
  assert.match(end!.message ?? '', /within its 3 steps/);
});

test('agent: a finish the schema rejects gets one repair turn; a second rejection ends the run internal', async () => {
  const runId = randomUUID();
  w.use(agent({ steps: () => calls('finish'), control: async () => ({ kind: 'finish', accepted: false }) }));
  const result = await (await start(runId)).result();

  assert.deepEqual(result, { state: 'internal' });
  assert.equal(w.names('agentStep').length, 2);
  assert.match(inputsOf<FinishAgentInput>('finishAgent')[0]!.message ?? '', /rejected twice/);
});

test('agent: a tool that fails non-retryably is tried once and ends the run internal with its message, not retryable', async () => {
  const runId = randomUUID();
  w.use(
    agent({
      steps: () => calls('scrape'),
      extra: {
        agentFetchTool: async () => {
          throw nonRetryable('URL_BLOCKED', 'This website is no longer supported', 'URL_BLOCKED');
        },
      },
    }),
  );
  const result = await (await start(runId)).result();

  assert.deepEqual(result, { state: 'internal' });
  assert.deepEqual(w.names(), ['startAgentRun', 'agentStep', 'agentFetchTool', 'finishAgent'], 'one attempt, no browser fallback');
  assert.deepEqual(inputsOf('finishAgent'), [{ runId, state: 'internal', message: 'This website is no longer supported', retryable: false }]);
});

test('agent: cancelling waits for the running model step to stop, then writes the end cancelled', async () => {
  const runId = randomUUID();
  let stepStoppedAt = 0;
  const finishedAt: number[] = [];
  w.use({
    ...agent({ steps: () => calls('finish') }),
    agentStep: async () => {
      try {
        return await untilCancelled();
      } finally {
        // Slow to stop: the end must still come after it.
        await new Promise((r) => setTimeout(r, 300));
        stepStoppedAt = Date.now();
      }
    },
    finishAgent: async (i: FinishAgentInput) => {
      finishedAt.push(Date.now());
      return { state: i.state };
    },
  });
  const handle = await start(runId);
  await until(() => w.names('agentStep').length === 1, 'the model step running', { timeoutMs: 10_000 });
  await handle.cancel();
  const result = await handle.result();

  assert.deepEqual(result, { state: 'cancelled' }, 'the workflow completes with the end it wrote');
  assert.deepEqual(inputsOf('finishAgent'), [{ runId, state: 'cancelled' }]);
  assert.ok(stepStoppedAt > 0 && finishedAt[0]! >= stepStoppedAt, 'the end was written after the step had stopped');
});

test('agent: a spawned sub-agent runs as a child workflow and signals its parent, whose wait then collects the results', async () => {
  const parent = randomUUID();
  const child = randomUUID();
  w.use(
    agent({
      steps: (i) => {
        if (i.runId === child) return calls('finish');
        return i.step === 1 ? calls('spawn_subagent') : i.step === 2 ? calls('wait_subagents') : calls('finish');
      },
      control: async (i) => {
        if (i.name === 'spawn_subagent') return { kind: 'spawned', childId: child };
        if (i.name === 'wait_subagents') return { kind: 'wait', ids: [child] };
        return { kind: 'finish', accepted: true };
      },
      extra: { agentSubagentResults: async () => ({ kind: 'done' }), endedSubagents: async () => [] },
    }),
  );
  const result = await (await start(parent)).result();

  assert.deepEqual(result, { state: 'succeeded' });
  assert.equal((await w.client.workflow.getHandle(workflowIds.agent(child)).describe()).status.name, 'COMPLETED');
  assert.deepEqual(
    inputsOf<FinishAgentInput>('finishAgent').map((f) => f.runId),
    [child, parent],
    'the child ended before the parent went on',
  );
  assert.deepEqual(inputsOf('agentSubagentResults'), [{ runId: parent, step: 2, callId: 'c0', name: 'wait_subagents', ids: [child] }]);
  assert.deepEqual(w.names('endedSubagents'), [], 'the signal arrived: Postgres was not asked');
  const childSteps = inputsOf<AgentStepInput>('agentStep').filter((s) => s.runId === child);
  assert.deepEqual(childSteps, [{ runId: child, step: 1, final: false }]);
});

test('agent: a parent that ends while its sub-agent runs cancels it, and the sub-agent writes its own end', async () => {
  const parent = randomUUID();
  const child = randomUUID();
  w.use(
    agent({
      steps: async (i) => (i.runId === child ? await untilCancelled() : i.step === 1 ? calls('spawn_subagent') : calls('finish')),
      control: async (i) => (i.name === 'spawn_subagent' ? { kind: 'spawned', childId: child } : { kind: 'finish', accepted: true }),
    }),
  );
  const result = await (await start(parent)).result();
  assert.deepEqual(result, { state: 'succeeded' });
  const childResult = await w.client.workflow.getHandle(workflowIds.agent(child)).result();

  assert.deepEqual(childResult, { state: 'cancelled' });
  const ends = inputsOf<FinishAgentInput>('finishAgent');
  assert.deepEqual(
    ends.find((e) => e.runId === child),
    { runId: child, state: 'cancelled' },
  );
  assert.deepEqual(
    ends.find((e) => e.runId === parent),
    { runId: parent, state: 'succeeded' },
  );
});
