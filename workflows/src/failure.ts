import { ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import type { RecordFailureInput } from './common';

/** Reduces an activity failure to the plain error record stored for the job. */
export function describeFailure(err: unknown): RecordFailureInput['error'] {
  const cause = (err as { cause?: unknown })?.cause ?? err;
  if (cause instanceof ApplicationFailure) {
    const [detail] = (cause.details ?? []) as { code?: string; details?: unknown }[];
    return { kind: cause.type ?? 'INTERNAL', message: cause.message, code: detail?.code, details: detail?.details };
  }
  if (cause instanceof TimeoutFailure) {
    return { kind: 'REQUEST_TIMEOUT', message: 'Request Timeout', code: 'SCRAPE_TIMEOUT' };
  }
  return { kind: 'INTERNAL', message: 'Internal Server Error', code: 'UNKNOWN_ERROR' };
}
