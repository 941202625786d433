import { Context } from '@temporalio/activity';
import { agentToolArgs, type AgentToolArgsOf, type AgentToolName } from '@wds/contracts';
import { appendAgentMessage, findAgentMessages, insertAgentSnapshot, type AgentMessageRow, type Db } from '@wds/db';
import { codedMessage, type WdsError } from '@wds/errors';
import { agentToolCalls } from '@wds/metrics';
import type { AgentToolInput, AgentToolResult } from '@wds/workflows/agent';
import { reservationKey, reserveForRun } from './billing';
import { isActive, loadRunContext, type RunContext } from './context';
import { traceEvent } from './trace';
import { boundedToolText, stepKey } from './transcript';

/**
 * One tool call, exactly once: every tool runs through here. The call's arguments are read from
 * the step's assistant message (the workflow only carries its id), checked, its credits reserved
 * (a refusal ends the run before the tool runs), the tool run, and its outcome committed:
 * snapshots, the transcript row (with what it cost), then the trace events. Each write is
 * idempotent on a key derived from the step and call id; a retried activity whose transcript row
 * exists re-emits the events from it (a crash between the row and its events loses none) and
 * runs nothing again.
 */

/** A failure the model should hear about (the tool ran; the page or input was bad), not one to retry. */
export class ToolError extends Error {
  constructor(message: string, readonly retryable = false) {
    super(message);
  }
}

/** An engine's error as the model reads it: its code first when it has one (`unsafe_domain_blocked: …`), as the trace shows it. */
export function toolErrorOf(e: WdsError): ToolError {
  return new ToolError(codedMessage(e), e.retryable);
}

export interface NewArtifact {
  artifact: string;
  kind: 'json' | 'markdown' | 'html' | 'text';
  content: string;
  path: string;
  url?: string;
  itemCount?: number;
}

export interface ToolOutcome {
  /** What the model reads. */
  content: string;
  /** What the trace's tool_call.finished shows: small (ids, URLs, counts). */
  result: unknown;
  credits: number;
  artifacts?: NewArtifact[];
  /** For the workflow (finish accepted, refused, spawned, …); `done` when absent. */
  outcome?: AgentToolResult;
  /** How long the tool worked (kept on the row: the benchmark's "step minus model and fetch time"). */
  ms?: number;
}

export interface ToolEnv {
  ctx: RunContext;
  input: AgentToolInput;
  signal: AbortSignal;
  /** Reserves more credits for this call once its real cost is known (a PDF's pages); false when refused. */
  reserveMore(amount: number): Promise<boolean>;
}

export interface Tool<A> {
  /** Credits reserved before the tool runs: an upper bound of what it will charge. */
  estimate(args: A, ctx: RunContext): number;
  /** `needsBrowser`: hand over to wds-browser; `defer`: answer the workflow without committing (wait_subagents commits later). */
  run(args: A, env: ToolEnv): Promise<ToolOutcome | { needsBrowser: true } | { defer: AgentToolResult }>;
}

interface StoredResult {
  summary: unknown;
  ms?: number;
  refused?: boolean;
  outcome: AgentToolResult;
  error?: string;
  artifacts: { snapshotId: string; artifact: string; kind: string; path: string; change: string; itemCount?: number }[];
}

const HEARTBEAT_MS = 2_000;

export const toolKey = (i: Pick<AgentToolInput, 'step' | 'callId'>) => `tool:${i.step}:${i.callId}`;

export async function runToolCall<N extends AgentToolName>(db: Db, input: AgentToolInput, name: N, tool: Tool<AgentToolArgsOf<N>>): Promise<AgentToolResult> {
  const actx = Context.current();
  const beat = setInterval(() => actx.heartbeat(), HEARTBEAT_MS);
  try {
    // The run, this call's result (a retry finds it) and the step that made the call, side by side.
    const [ctx, found] = await Promise.all([loadRunContext(db, input.runId), findAgentMessages(db, input.runId, [toolKey(input), stepKey(input.step)])]);
    const done = found.find((r) => r.key === toolKey(input));
    if (done) return await emitEvents(db, ctx, input, done);
    const call = callOf(found.find((r) => r.key === stepKey(input.step)), input);
    if (!isActive(ctx)) return { kind: 'stopped' };
    const parsed = parseArgs(name, call.arguments);
    if (!parsed.ok) return await commit(db, ctx, input, errorOutcome(`invalid arguments for ${name}: ${parsed.error}`), undefined);

    const key = reservationKey(input.runId, `tool:${input.step}:${input.callId}`);
    const estimate = tool.estimate(parsed.args, ctx);
    const granted = await reserveForRun(db, ctx, key, estimate);
    if (!granted.granted) {
      await traceEvent(db, ctx, 'error.occurred', `tc:${input.step}:${input.callId}:credit_limit`, { error: { code: 'credit_limit_reached', source: 'billing', retryable: false, message: granted.message } });
      return { kind: 'credit_limit' };
    }
    let extra = 0;
    const env: ToolEnv = {
      ctx,
      input,
      signal: actx.cancellationSignal,
      async reserveMore(amount) {
        const r = await reserveForRun(db, ctx, `${key}:more`, amount);
        if (r.granted) extra = amount;
        return r.granted;
      },
    };
    let out: ToolOutcome | { needsBrowser: true } | { defer: AgentToolResult };
    const t0 = performance.now();
    try {
      out = await tool.run(parsed.args, env);
    } catch (e) {
      if (!(e instanceof ToolError)) throw e;
      out = errorOutcome(e.message);
    }
    if ('needsBrowser' in out) return { kind: 'needs_browser' };
    if ('defer' in out) return out.defer;
    // Never more than was reserved: the cap holds whatever a tool reports.
    out.credits = Math.min(out.credits, estimate + extra);
    agentToolCalls.inc({ tool: name, outcome: (out.result as { error?: unknown })?.error ? 'error' : 'success' });
    // A `:more` reservation is released when the job ends; the charge converting `key` bills the whole cost.
    return await commit(db, ctx, input, { ...out, ms: Math.round(performance.now() - t0) }, key);
  } finally {
    clearInterval(beat);
  }
}

function callOf(step: AgentMessageRow | undefined, input: AgentToolInput): { id: string; name: string; arguments: string } {
  const call = ((step?.toolCalls ?? []) as { id: string; name: string; arguments: string }[]).find((c) => c.id === input.callId);
  if (!call) throw new Error(`tool call ${input.callId} of step ${input.step} is not in the transcript of run ${input.runId}`);
  return call;
}

function parseArgs<N extends AgentToolName>(name: N, raw: string): { ok: true; args: AgentToolArgsOf<N> } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = raw.trim() ? JSON.parse(raw) : {};
  } catch {
    return { ok: false, error: 'the arguments are not valid JSON' };
  }
  const schema = agentToolArgs[name] as (typeof agentToolArgs)[AgentToolName] | undefined;
  if (!schema) return { ok: false, error: `there is no tool named ${name}` };
  const r = schema.safeParse(json);
  if (r.success) return { ok: true, args: r.data as AgentToolArgsOf<N> };
  return { ok: false, error: r.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ') };
}

export function errorOutcome(message: string): ToolOutcome {
  return { content: `Error: ${message}`, result: { error: message }, credits: 0 };
}

/**
 * Writes the outcome: snapshots first (ids derived from the call, so a retry rewrites the same
 * ones), then the transcript row that marks the call done, then its events.
 */
export async function commit(db: Db, ctx: RunContext, input: AgentToolInput, out: ToolOutcome, resKey: string | undefined): Promise<AgentToolResult> {
  const artifacts: StoredResult['artifacts'] = [];
  for (const [i, a] of (out.artifacts ?? []).entries()) {
    const { id: snapshotId, priorVersions } = await insertAgentSnapshot(db, { jobId: ctx.root.id, runId: ctx.run.id, key: `${toolKey(input)}:${i}`, artifact: a.artifact, kind: a.kind, content: a.content, url: a.url });
    artifacts.push({ snapshotId, artifact: a.artifact, kind: a.kind, path: a.path, change: priorVersions === 0 ? 'init' : 'update', ...(a.itemCount !== undefined ? { itemCount: a.itemCount } : {}) });
  }
  const error = (out.result as { error?: string } | null)?.error;
  const outcome = out.outcome ?? { kind: 'done' };
  // `refused` marks the row whose content is the refusal's reason (kept in the transcript; a refused run is unbilled, so never served).
  const stored: StoredResult = { summary: out.result, outcome, artifacts, ...(out.ms !== undefined ? { ms: out.ms } : {}), ...(error ? { error } : {}), ...(outcome.kind === 'refused' ? { refused: true } : {}) };
  const row = await appendAgentMessage(db, {
    runId: ctx.run.id,
    step: input.step,
    role: 'tool',
    content: boundedToolText(out.content),
    key: toolKey(input),
    toolCallId: input.callId,
    result: stored,
    credits: out.credits,
    reservationKey: out.credits > 0 ? resKey : undefined,
  });
  return emitEvents(db, ctx, input, row);
}

/** The events of a committed call, from its row (exactly once each, by key). */
async function emitEvents(db: Db, ctx: RunContext, input: AgentToolInput, row: AgentMessageRow): Promise<AgentToolResult> {
  const r = row.result as StoredResult;
  const at = `tc:${input.step}:${input.callId}`;
  for (const a of r.artifacts) {
    await traceEvent(db, ctx, 'artifact.updated', `art:${a.snapshotId}`, {
      artifact: { kind: a.kind, artifactId: a.artifact, path: a.path, snapshotId: a.snapshotId, change: a.change, sourceToolCallId: input.callId, ...(a.itemCount !== undefined ? { itemCount: a.itemCount } : {}) },
    });
  }
  if (r.error) await traceEvent(db, ctx, 'error.occurred', `${at}:error`, { error: { code: 'internal', source: 'tool', retryable: false, message: `${input.name}: ${r.error}` } });
  await traceEvent(db, ctx, 'tool_call.finished', `${at}:finished`, { toolCallId: input.callId, toolName: input.name, result: r.summary, creditsUsed: row.credits });
  return r.outcome;
}
