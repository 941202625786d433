import { Context } from '@temporalio/activity';
import { appendAgentMessage, loadTranscript, noteAgentStep, type AgentMessageRow, type Db } from '@wds/db';
import { countMessageTokens, isLlmError, outputReserve, type LlmClient, type ToolCall } from '@wds/llm';
import { agentSteps, llmCalls, llmTokens } from '@wds/metrics';
import type { AgentStepInput, AgentStepResult } from '@wds/workflows/agent';
import { reservationKey, reserveForRun, shrinkReservation, tokensToCredits } from './billing';
import { isActive, loadRunContext } from './context';
import { runAvailability, toolSpecs, type ToolAvailability } from './prompts';
import { traceEvent } from './trace';
import { fitTranscript, stepKey, TRANSCRIPT_STEPS } from './transcript';

export interface AgentStepDeps {
  db: Db;
  client: LlmClient;
  /** Firecrawl's model name → the provider's model (absent: the configured MODEL_NAME). */
  modelFor?: (name: string) => string | undefined;
  /** What tools this deployment offers (a search backend, a browser). */
  tools: Pick<ToolAvailability, 'search' | 'browser'>;
}

/** Output tokens one step may produce: tool calls with their arguments, or a final answer. */
export const STEP_OUTPUT_TOKENS = 4_096;
const HEARTBEAT_MS = 2_000;

/** Tokens of the tool specs: a handful of fixed sets, counted once each. */
const specTokenCache = new Map<string, number>();
function specTokens(tools: unknown[]): number {
  const key = JSON.stringify(tools);
  let n = specTokenCache.get(key);
  if (n === undefined) specTokenCache.set(key, (n = countMessageTokens([{ content: key }])));
  return n;
}

/**
 * One model step, exactly once: its credits are reserved first (the prompt it will send plus
 * the longest reply it may get: an upper bound, so the step that would cross maxCredits never
 * calls the model), the model is called with the transcript and the run's tools, and its reply
 * is stored as the step's assistant message. A retry finds the message and calls nothing again.
 * The workflow gets back only the calls' ids and names.
 */
export async function agentStep(deps: AgentStepDeps, input: AgentStepInput): Promise<AgentStepResult> {
  const { db } = deps;
  const actx = Context.current();
  const beat = setInterval(() => actx.heartbeat(), HEARTBEAT_MS);
  try {
    // The run and the transcript window in parallel; the window holds this step's own reply
    // too when a retry finds it stored (steps ≥ fromStep), so no separate lookup is needed.
    const [ctx, rows] = await Promise.all([loadRunContext(db, input.runId), loadTranscript(db, input.runId, Math.max(1, input.step - TRANSCRIPT_STEPS))]);
    const stored = rows.find((r) => r.key === stepKey(input.step));
    if (stored) {
      const est = (stored.result as { estimate?: number } | null)?.estimate;
      const [, , result] = await Promise.all([
        est !== undefined ? shrinkReservation(db, ctx, reservationKey(input.runId, stepKey(input.step)), est, stored.credits) : null,
        noteAgentStep(db, input.runId, input.step),
        replyOf(db, ctx, input, stored),
      ]);
      return result;
    }
    if (!isActive(ctx)) return { kind: 'stopped' };

    const availability = runAvailability(deps.tools, ctx);
    const tools = toolSpecs(availability);
    const limits = deps.client.limits;
    const toolTokens = specTokens(tools);
    const replyTokens = outputReserve(limits, STEP_OUTPUT_TOKENS);
    const { messages, tokens } = fitTranscript(rows, limits, toolTokens + replyTokens);
    const promptTokens = tokens + toolTokens;
    const estimate = tokensToCredits(promptTokens + replyTokens);

    const resKey = reservationKey(input.runId, stepKey(input.step));
    const granted = await reserveForRun(db, ctx, resKey, estimate);
    if (!granted.granted) {
      await traceEvent(db, ctx, 'error.occurred', `${stepKey(input.step)}:credit_limit`, {
        error: { code: 'credit_limit_reached', source: 'billing', retryable: false, message: granted.message },
      });
      return { kind: 'credit_limit' };
    }

    const model = deps.modelFor?.(ctx.options.model) ?? deps.client.config.model;
    const t0 = performance.now();
    let reply;
    try {
      reply = await deps.client.chat({
        messages,
        tools,
        toolChoice: input.final ? { name: 'finish' } : 'auto',
        maxOutputTokens: replyTokens,
        model,
        signal: actx.cancellationSignal,
      });
    } catch (e) {
      llmCalls.inc({ model, use: 'agent', outcome: isLlmError(e) ? (e.code ?? e.kind) : 'error' });
      throw e;
    }
    llmCalls.inc({ model, use: 'agent', outcome: 'success' });
    llmTokens.inc({ model, direction: 'prompt' }, reply.usage.promptTokens);
    llmTokens.inc({ model, direction: 'completion' }, reply.usage.completionTokens);
    agentSteps.inc({ model: ctx.options.model });

    // Never more than was reserved: the cap holds whatever the provider reports.
    const credits = Math.min(estimate, tokensToCredits(reply.usage.totalTokens));
    const refusal = reply.refusal ?? (reply.finishReason === 'content_filter' ? 'The model declined to continue (content filter).' : null);
    const calls: ToolCall[] = refusal ? [] : reply.toolCalls.length ? reply.toolCalls : [answerAsFinish(input.step, reply.content)];
    const row = await appendAgentMessage(db, {
      runId: input.runId,
      step: input.step,
      role: 'assistant',
      content: refusal ?? reply.content,
      key: stepKey(input.step),
      toolCalls: calls,
      result: { ...(refusal ? { refused: true } : {}), model: reply.model, latencyMs: Math.round(performance.now() - t0), tokens: reply.usage.totalTokens, estimate },
      credits,
      // The key shrinkReservation leaves holding the step's cost (the estimate's own key when they are equal).
      reservationKey: credits < estimate ? `${resKey}:actual` : resKey,
    });
    // Independent writes (the ledger's, the run's step count, the job's trace), side by side.
    const [, , result] = await Promise.all([shrinkReservation(db, ctx, resKey, estimate, credits), noteAgentStep(db, input.runId, input.step), replyOf(db, ctx, input, row)]);
    return result;
  } finally {
    clearInterval(beat);
  }
}

/**
 * A reply without tool calls is the model's answer: it becomes a `finish` call, its text the
 * data when it parses as JSON (a schema still checks it), else the message.
 */
function answerAsFinish(step: number, content: string | null): ToolCall {
  const text = (content ?? '').trim();
  let args: Record<string, unknown> = { message: text };
  try {
    const v: unknown = JSON.parse(text);
    if (v !== null && typeof v === 'object') args = { data: v };
  } catch {
    // Not JSON: the text is the message.
  }
  return { id: `answer-${step}`, name: 'finish', arguments: JSON.stringify(args) };
}

/** The step's outcome from its stored message, and its tool_call.started events (once each, by key). */
async function replyOf(db: Db, ctx: Awaited<ReturnType<typeof loadRunContext>>, input: AgentStepInput, row: AgentMessageRow): Promise<AgentStepResult> {
  if ((row.result as { refused?: boolean } | null)?.refused) return { kind: 'refused' };
  const calls = (row.toolCalls ?? []) as ToolCall[];
  for (const c of calls) {
    await traceEvent(db, ctx, 'tool_call.started', `tc:${input.step}:${c.id}:started`, { toolCallId: c.id, toolName: c.name, parameters: parameters(c.arguments) });
  }
  return { kind: 'calls', calls: calls.map((c) => ({ id: c.id, name: c.name })) };
}

/** A call's arguments for the trace: parsed, and cut when large (a `finish` with big data shows its size). */
function parameters(raw: string): unknown {
  if (raw.length > 2_000) return { truncated: true, chars: raw.length };
  try {
    return JSON.parse(raw);
  } catch {
    return { raw };
  }
}
