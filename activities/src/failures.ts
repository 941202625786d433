import { ApplicationFailure } from '@temporalio/activity';
import { toWdsError } from '@wds/errors';
import { redactValue, withoutForgotten } from '@wds/log';

/**
 * The cause of an internal failure as Temporal will store it in the workflow's history and the
 * SDK will log it: message and frames only, redacted. A raw database error would carry its
 * statement's parameters (page content, the caller's headers) into both.
 */
function safeCause(e: Error): Error {
  const r = redactValue(e, { maxDepth: 2, maxString: 2_000 }) as { message?: string; stack?: string; code?: unknown };
  const out = new Error(r.message ?? 'error');
  out.name = e.name;
  out.stack = `${e.name}: ${out.message}\n${(r.stack ?? '').split('\n').map((l) => `    ${l}`).join('\n')}`;
  if (typeof r.code === 'string') Object.assign(out, { code: r.code });
  return out;
}

/**
 * Converts anything thrown into an ApplicationFailure whose `type` is the error kind, so
 * the workflow's retry policy and the API (which rebuilds the WdsError) both see it.
 */
export function toApplicationFailure(e: unknown): ApplicationFailure {
  if (e instanceof ApplicationFailure) return e;
  const err = toWdsError(e);
  // A provider that said when to come back (Retry-After) is retried then, not on the policy's schedule.
  const retryAfterMs = (err as { retryAfterMs?: number }).retryAfterMs;
  // Temporal keeps the failure in the workflow's history: a zero-data-retention URL it names is
  // dropped first (hideUrlFromLogs registers them), in the message and in the details.
  const details = err.details === undefined ? undefined : JSON.parse(withoutForgotten(JSON.stringify(err.details)));
  return ApplicationFailure.create({
    type: err.kind,
    message: withoutForgotten(err.message),
    nonRetryable: !err.retryable,
    nextRetryDelay: err.retryable && retryAfterMs ? retryAfterMs : undefined,
    details: [{ code: err.code, details }],
    cause: err.kind === 'INTERNAL' && e instanceof Error ? safeCause(e) : undefined,
  });
}

/** Runs an activity body, translating its errors at the boundary. */
export async function asActivity<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw toApplicationFailure(e);
  }
}
