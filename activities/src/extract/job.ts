import { Context } from '@temporalio/activity';
import type { StoredExtractOptions } from '@wds/contracts';
import { loadExtractJob, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import { isLlmError } from '@wds/llm';
import { llmCalls, llmCredits, llmDuration, llmTokens } from '@wds/metrics';
import type { Usage } from '@wds/llm';

export interface ExtractJobInfo {
  id: string;
  teamId: string;
  options: StoredExtractOptions;
}

/** Options never change after the API wrote them: each worker keeps the recent ones. */
const cache = new Map<string, ExtractJobInfo>();

export async function loadExtractInfo(db: Db, jobId: string): Promise<ExtractJobInfo> {
  const hit = cache.get(jobId);
  if (hit) return hit;
  const row = await loadExtractJob(db, jobId);
  if (!row) throw new WdsError('NOT_FOUND', { message: `Extract job ${jobId} not found` });
  const info = { id: row.id, teamId: row.teamId, options: row.options as StoredExtractOptions };
  if (cache.size >= 500) cache.delete(cache.keys().next().value!);
  cache.set(jobId, info);
  return info;
}

/** The extraction request as the model reads it: the caller's system prompt (their own words) before their prompt. */
export function requestText(o: StoredExtractOptions): string | undefined {
  const parts = [o.systemPrompt, o.prompt].filter((x): x is string => !!x);
  return parts.length ? parts.join('\n\n') : undefined;
}

const HEARTBEAT_MS = 2_000;

/**
 * Runs a model step with a signal that aborts at `deadlineMs` (reported as `deadline`) or when
 * Temporal cancels the activity, heartbeating meanwhile so a dead worker's step moves on within
 * the heartbeat timeout.
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

/** Metrics of one model step of an extract: calls by outcome, tokens, latency, credits. */
export async function observedStep<T extends { usage: Usage }>(model: string, use: string, credits: (r: T) => number, fn: () => Promise<T>): Promise<T> {
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
