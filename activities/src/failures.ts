import { ApplicationFailure } from '@temporalio/activity';
import { toWdsError } from '@wds/errors';

/**
 * Converts anything thrown into an ApplicationFailure whose `type` is the error kind, so
 * the workflow's retry policy and the API (which rebuilds the WdsError) both see it.
 */
export function toApplicationFailure(e: unknown): ApplicationFailure {
  if (e instanceof ApplicationFailure) return e;
  const err = toWdsError(e);
  return ApplicationFailure.create({
    type: err.kind,
    message: err.message,
    nonRetryable: !err.retryable,
    details: [{ code: err.code, details: err.details }],
    cause: err.kind === 'INTERNAL' && e instanceof Error ? e : undefined,
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
