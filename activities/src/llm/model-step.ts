import { Context } from '@temporalio/activity';
import { WdsError } from '@wds/errors';
import { isLlmError, type Usage } from '@wds/llm';
import { llmCalls, llmCredits, llmDuration, llmTokens } from '@wds/metrics';

/**
 * What every model step on wds-llm shares, whichever job it serves (scrape, crawl/batch page,
 * extract, crawl prompt, agent): its metrics, and its deadline with heartbeats.
 */

const HEARTBEAT_MS = 2_000;

/** Metrics of one model call: calls by outcome, tokens (failed calls' too, when reported), latency, credits. */
export async function observeModelCall<T extends { usage: Usage }>(model: string, use: string, credits: (r: T) => number, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    const r = await fn();
    llmCalls.inc({ model, use, outcome: 'success' });
    llmTokens.inc({ model, direction: 'prompt' }, r.usage.promptTokens);
    llmTokens.inc({ model, direction: 'completion' }, r.usage.completionTokens);
    llmCredits.inc({ model }, credits(r));
    llmDuration.observe({ model, outcome: 'success' }, (performance.now() - t0) / 1000);
    return r;
  } catch (e) {
    const code = isLlmError(e) || e instanceof WdsError ? (e.code ?? e.kind) : 'error';
    llmCalls.inc({ model, use, outcome: code });
    if (isLlmError(e) && e.usage) {
      llmTokens.inc({ model, direction: 'prompt' }, e.usage.promptTokens);
      llmTokens.inc({ model, direction: 'completion' }, e.usage.completionTokens);
    }
    llmDuration.observe({ model, outcome: 'error' }, (performance.now() - t0) / 1000);
    throw e;
  }
}

/**
 * Runs a model step with a signal that aborts at `deadlineMs` (reported as `deadline`) or when
 * Temporal cancels the activity, heartbeating meanwhile so a dead worker's step is retried
 * elsewhere within the heartbeat timeout, not at the end of the step's budget.
 */
export async function withinDeadline<T>(deadlineMs: number, fn: (signal: AbortSignal) => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; deadline: true }> {
  const ctx = Context.current();
  const left = deadlineMs - Date.now();
  if (left <= 0) return { ok: false, deadline: true };
  const deadline = AbortSignal.timeout(left);
  const signal = AbortSignal.any([deadline, ctx.cancellationSignal]);
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
  try {
    return { ok: true, value: await fn(signal) };
  } catch (e) {
    if (deadline.aborted && !ctx.cancellationSignal.aborted) return { ok: false, deadline: true };
    throw e;
  } finally {
    clearInterval(beat);
  }
}
