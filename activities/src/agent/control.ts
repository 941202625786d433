import { agentResultsServed, type AgentToolArgsOf } from '@wds/contracts';
import {
  agentFinishMessage,
  appendAgentMessage,
  endedAgentRuns,
  finishAgentRunRow,
  insertSubagentRun,
  latestAgentArtifact,
  loadAgentRun,
  setJobWorkflow,
  stableUuid,
  subagentsOf,
  threadHistory,
  type Db,
} from '@wds/db';
import { compileUserSchema } from '@wds/llm';
import { agentRunsFinished, agentRunsStarted, creditsUsed } from '@wds/metrics';
import type { AgentControlActivities, AgentToolInput, AgentToolResult, FinishAgentInput, SubagentResultsInput } from '@wds/workflows/agent';
import { MAX_SUBAGENTS } from '@wds/workflows/agent';
import { agentJob, type AgentEndState } from '@wds/workflows/job-specs';
import { chargeJob, releaseJob, settleLateWork } from './billing';
import { agentIdentity, loadRunContext, type RunContext } from './context';
import { checkThreat } from './pages';
import { runAvailability, systemPrompt, type ToolAvailability } from './prompts';
import { traceEvent } from './trace';
import { runToolCall, ToolError, toolKey, type Tool } from './tool-runner';

export interface AgentControlDeps {
  db: Db;
  /** What tools this deployment offers (told to the model in the system prompt). */
  tools(): Promise<Pick<ToolAvailability, 'search' | 'browser'>>;
}

/** The artifact holding a run's result: save_result versions, then finish's final data. */
export const RESULT_ARTIFACT = 'result';

/**
 * wds-control: the run's bookkeeping (start, end) and the tools that make no outbound request
 * (save_result, finish, refuse, spawn_subagent, wait_subagents). Everything is idempotent: a
 * retried activity rewrites nothing and emits no event twice.
 */
export function createAgentControl(deps: AgentControlDeps): AgentControlActivities {
  const { db } = deps;
  return {
    startAgentRun: ({ runId }) => startAgentRun(deps, runId),
    agentControlTool: (input) => agentControlTool(db, input),
    agentSubagentResults: (input) => agentSubagentResults(db, input),
    endedSubagents: ({ ids }) => endedAgentRuns(db, ids),
    finishAgent: async (input) => ({ state: (await finishAgentRun(db, input)).state }),
  };
}

async function startAgentRun(deps: AgentControlDeps, runId: string): Promise<{ state: string }> {
  const { db } = deps;
  const ctx = await loadRunContext(db, runId);
  if (ctx.run.state !== 'running' && ctx.run.state !== 'cancelling') return { state: ctx.run.state };
  // A sub-agent's workflow runs now (its parent started it after inserting its row): from here on the
  // stranded-job sweeper may judge it by its workflow (a root's was recorded by the API).
  if (!ctx.isRoot) await setJobWorkflow(db, runId, agentJob.workflowId(runId));
  const tools = await deps.tools();
  const availability = runAvailability(tools, ctx);
  const role = ctx.isRoot ? 'orchestrator' : 'subagent';
  await appendAgentMessage(db, { runId, step: 0, role: 'system', content: systemPrompt({ ...ctx.options, strictConstrainToURLs: ctx.rootOptions.strictConstrainToURLs }, availability, role), key: 'system' });
  await appendAgentMessage(db, { runId, step: 0, role: 'user', content: await userTurn(db, ctx), key: 'user' });
  if (ctx.isRoot) await traceEvent(db, ctx, 'run.started', 'run.started');
  const first = await traceEvent(db, ctx, 'agent.started', 'agent.started');
  if (first) agentRunsStarted.inc({ role });
  return { state: ctx.run.state };
}

/** The user's request; a later turn of a thread is told what the earlier turns asked and answered. */
async function userTurn(db: Db, ctx: RunContext): Promise<string> {
  if (!ctx.isRoot || ctx.run.threadTurn <= 1) return ctx.options.prompt;
  const earlier = await threadHistory(db, ctx.run.threadId, ctx.run.threadTurn);
  const lines = earlier.map((t) => {
    // Only a succeeded (billed) turn's data is carried on: a failed turn's results are not served, to its thread either.
    const answer = t.data !== null && agentResultsServed(t.state) ? JSON.stringify(t.data).slice(0, 4_000) : (t.message ?? t.error ?? '(no answer)');
    return `Turn ${t.threadTurn} asked: ${(t.options as { prompt: string }).prompt}\nIt ended ${t.state}: ${answer}`;
  });
  const t = ctx.options.exchange?.termsAnswer;
  if (t) lines.push(t.approved
    ? `The user agreed to the data terms of ${t.providers.join(', ')} (offered in the previous turn): their tools may be called now.`
    : `The user declined the data terms of ${t.providers.join(', ')}: do not use their tools.`);
  return `Earlier in this conversation:\n\n${lines.join('\n\n')}\n\nNow: ${ctx.options.prompt}`;
}

function saveResult(db: Db): Tool<AgentToolArgsOf<'save_result'>> {
  return {
    estimate: () => 0,
    async run(a, env) {
      const content = JSON.stringify(a.data ?? null);
      const items = Array.isArray(a.data) ? a.data.length : undefined;
      return {
        content: 'Saved.',
        result: { saved: true, ...(items !== undefined ? { itemCount: items } : {}) },
        credits: 0,
        artifacts: [{ artifact: RESULT_ARTIFACT, kind: 'json', content, path: '/workspace/result.json', ...(items !== undefined ? { itemCount: items } : {}) }],
      };
    },
  };
}

/**
 * `finish`: the data is checked against the job's schema (a sub-agent's is free-form: its parent
 * shapes the final data). Rejected data goes back to the model with the errors, once.
 */
function finishTool(): Tool<AgentToolArgsOf<'finish'>> {
  return {
    estimate: () => 0,
    async run(a, env) {
      const o = env.ctx.options;
      const data = a.data === undefined && o.mode === 'extract' && a.message ? { answer: a.message } : a.data;
      if (env.ctx.isRoot && o.schema && o.mode === 'extract') {
        const v = await (await compileUserSchema(o.schema)).validate(data);
        if (!v.ok) {
          return {
            content: `Error: the data does not match the required JSON Schema:\n${v.errors.slice(0, 20).map((e) => `- ${e}`).join('\n')}\nCall finish again with corrected data.`,
            result: { accepted: false, errors: v.errors.slice(0, 20) },
            credits: 0,
            outcome: { kind: 'finish', accepted: false },
          };
        }
      }
      const content = JSON.stringify(data ?? null);
      return {
        // The message is the tool row's content (agentFinishMessage reads it back for the status).
        content: a.message ?? 'Finished.',
        result: { accepted: true, hasMessage: !!a.message },
        credits: 0,
        artifacts: data === undefined ? [] : [{ artifact: RESULT_ARTIFACT, kind: 'json', content, path: '/workspace/result.json' }],
        outcome: { kind: 'finish', accepted: true },
      };
    },
  };
}

function refuseTool(): Tool<AgentToolArgsOf<'refuse'>> {
  return {
    estimate: () => 0,
    run: async (a) => ({ content: a.reason, result: { refused: true }, credits: 0, outcome: { kind: 'refused' } }),
  };
}

/** A sub-agent's id derives from the call that spawned it: a retried spawn names the same run. */
function spawnTool(db: Db): Tool<AgentToolArgsOf<'spawn_subagent'>> {
  return {
    estimate: () => 0,
    async run(a, env) {
      const { ctx, input } = env;
      if (!ctx.isRoot) throw new ToolError('sub-agents cannot start sub-agents');
      // A sub-agent's starting URLs pass the job's threat lists, as the job's own did at the API.
      for (const u of a.urls ?? []) checkThreat(ctx, u);
      const id = stableUuid('agent-subagent', ctx.run.id, toolKey(input));
      const options = { ...ctx.options, prompt: a.prompt, ...(a.urls?.length ? { urls: a.urls } : {}), mode: 'extract' as const };
      delete (options as { schema?: unknown }).schema;
      delete (options as { webhook?: unknown }).webhook;
      // Counted and inserted under the parent's lock: the step's other spawns run in parallel.
      const r = await insertSubagentRun(db, { id, teamId: ctx.run.teamId, rootId: ctx.root.id, parentId: ctx.run.id, threadId: ctx.run.threadId, threadTurn: ctx.run.threadTurn, options }, MAX_SUBAGENTS);
      if (r.kind === 'full') throw new ToolError(`at most ${MAX_SUBAGENTS} sub-agents per task`);
      return { content: `Started sub-agent ${id}. Call wait_subagents to read its result.`, result: { subagentId: id }, credits: 0, outcome: { kind: 'spawned', childId: id } };
    },
  };
}

function waitTool(db: Db): Tool<AgentToolArgsOf<'wait_subagents'>> {
  return {
    estimate: () => 0,
    async run(a, env) {
      const mine = (await subagentsOf(db, env.ctx.run.id)).map((s) => s.id);
      const ids = a.ids?.length ? a.ids.filter((i) => mine.includes(i)) : mine;
      if (!ids.length) throw new ToolError('there are no sub-agents to wait for');
      return { defer: { kind: 'wait', ids } };
    },
  };
}

function agentControlTool(db: Db, input: AgentToolInput): Promise<AgentToolResult> {
  switch (input.name) {
    case 'save_result':
      return runToolCall(db, input, 'save_result', saveResult(db));
    case 'finish':
      return runToolCall(db, input, 'finish', finishTool());
    case 'refuse':
      return runToolCall(db, input, 'refuse', refuseTool());
    case 'spawn_subagent':
      return runToolCall(db, input, 'spawn_subagent', spawnTool(db));
    case 'wait_subagents':
      return runToolCall(db, input, 'wait_subagents', waitTool(db));
    default:
      // An unknown tool name: the model hears about it (the call commits as an error).
      return runToolCall(db, input, input.name as 'refuse', {
        estimate: () => 0,
        run: async () => {
          throw new ToolError(`there is no tool named ${input.name}`);
        },
      });
  }
}

/** After wait_subagents: the sub-agents' ends and results, as the tool's answer. */
function agentSubagentResults(db: Db, input: SubagentResultsInput): Promise<AgentToolResult> {
  return runToolCall(db, input, 'wait_subagents', {
    estimate: () => 0,
    async run() {
      const parts: string[] = [];
      const summary: { id: string; state: string }[] = [];
      for (const id of input.ids) {
        const r = await loadAgentRun(db, id);
        if (!r) continue;
        summary.push({ id, state: r.state });
        const res = await latestAgentArtifact(db, id, RESULT_ARTIFACT);
        parts.push(`Sub-agent ${id} (${(r.options as { prompt: string }).prompt.slice(0, 200)}) ended ${r.state}.${r.message ? `\nMessage: ${r.message}` : ''}${res ? `\nResult: ${res.content}` : ''}${r.error ? `\nError: ${r.error}` : ''}`);
      }
      return { content: parts.join('\n\n') || 'No sub-agents.', result: { subagents: summary }, credits: 0 };
    },
  });
}

const OUTCOMES: Record<AgentEndState, { outcome: string; code?: string; source?: string }> = {
  succeeded: { outcome: 'succeeded' },
  cancelled: { outcome: 'cancelled', code: 'cancelled', source: 'system' },
  parent_finished: { outcome: 'cancelled', code: 'parent_finished', source: 'system' },
  credit_limit_reached: { outcome: 'credit_limit_reached', code: 'credit_limit_reached', source: 'billing' },
  refused: { outcome: 'refused', code: 'refused', source: 'agent' },
  internal: { outcome: 'failed', code: 'internal', source: 'system' },
};

/**
 * A run's end, written once whatever the retries: the bill (the job's: charged on success,
 * released otherwise, idempotent by key), the terminal events (by key), then the row (guarded:
 * the first writer wins). Only a succeeded run keeps data: a failed one is unbilled and serves
 * nothing (billing.ts). A cancel recorded in Postgres wins over an end the workflow reached at
 * the same moment: the client was told the run is being cancelled. The workflow's last step, and
 * the stranded-job sweeper's end of a run no workflow runs; `wrote`: this call ended it.
 */
export async function finishAgentRun(db: Db, input: FinishAgentInput): Promise<{ state: string; wrote: boolean }> {
  const ctx = await loadRunContext(db, input.runId);
  let state: AgentEndState = input.state;
  if (ctx.run.state === 'cancelling') state = 'cancelled';
  else if (state === 'cancelled' && !ctx.isRoot) state = 'parent_finished';
  else if (!ctx.isRoot && ctx.root.state !== 'running' && state !== 'succeeded') state = 'parent_finished';

  // Only a succeeded run keeps its data: a failed one is not billed, and what it saved is not served.
  const result = state === 'succeeded' ? await latestAgentArtifact(db, ctx.run.id, RESULT_ARTIFACT) : null;
  const data = result ? (JSON.parse(result.content) as unknown) : undefined;
  const { message, error } = await endTexts(db, ctx, state, input);
  // The bill first, then the row: a client that sees the end sees it billed (both idempotent on a retry).
  let total = 0;
  if (ctx.isRoot) {
    if (state === 'succeeded') total = await chargeJob(db, ctx);
    else await releaseJob(db, ctx);
  } else {
    // A sub-agent ending after its job: what it did meanwhile is billed with the job's (or released).
    const root = await loadAgentRun(db, ctx.root.id);
    if (root && root.state !== 'running' && root.state !== 'cancelling') await settleLateWork(db, ctx, root.state);
  }
  // The terminal events before the row too: once the status shows the end, the trace has it.
  const o = OUTCOMES[state];
  const traceError = o.code ? { code: o.code, source: o.source, retryable: state === 'internal' ? !!input.retryable : false, message: error ?? message ?? state } : null;
  const started = ctx.run.createdAt.getTime();
  if (traceError) await traceEvent(db, ctx, 'error.occurred', 'end:error', { error: traceError });
  await traceEvent(db, ctx, 'agent.finished', 'agent.finished', {
    outcome: o.outcome === 'credit_limit_reached' ? 'failed' : o.outcome,
    durationMs: Date.now() - started,
    error: traceError,
  });
  if (ctx.isRoot) await traceEvent(db, ctx, 'run.finished', 'run.finished', { outcome: o.outcome, error: traceError });
  const wrote = await finishAgentRunRow(db, ctx.run.id, { state, error, message, data, creditsUsed: total, root: ctx.isRoot });
  if (wrote && total) creditsUsed.inc({ kind: 'agent' }, total);
  // A sub-agent's item committed between the charge and the row is not left unbilled by a sub-agent that saw the job running.
  if (ctx.isRoot && state === 'succeeded') await settleLateWork(db, ctx, state);

  if (wrote) agentRunsFinished.inc({ role: ctx.isRoot ? 'orchestrator' : 'subagent', outcome: o.outcome, code: o.code ?? 'none' });
  const final = await loadAgentRun(db, ctx.run.id);
  return { state: final?.state ?? state, wrote };
}

async function endTexts(db: Db, ctx: RunContext, state: AgentEndState, input: FinishAgentInput): Promise<{ message: string | null; error: string | null }> {
  switch (state) {
    case 'succeeded': {
      // A turn a terms offer ended has no finish message of its own: the workflow's says why it ended.
      return { message: (await agentFinishMessage(db, ctx.run.id)) ?? input.message ?? null, error: null };
    }
    case 'cancelled':
      return { message: null, error: 'Agent was cancelled' };
    case 'parent_finished':
      return { message: null, error: 'The sub-agent was stopped because the agent that spawned it finished first' };
    case 'credit_limit_reached':
      return { message: null, error: `Agent stopped: the credit limit (maxCredits ${ctx.rootOptions.maxCredits}) was reached. Failed runs are not billed and return no data.` };
    case 'refused':
      // The reason is the model's text: a refused run is not billed, so it is not served (a free channel otherwise).
      return { message: null, error: 'The agent refused the task.' };
    default:
      return { message: null, error: input.message ?? 'The agent failed unexpectedly' };
  }
}
