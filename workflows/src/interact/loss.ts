/**
 * How an interact session's failures read (pure: used by the workflow). A call on the page's
 * worker that fails because the page is no longer there ends the session; everything else (the
 * model failing, a profile conflict) fails only the call.
 */
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import { expiredMessage } from './contracts';

export interface PageLoss {
  /** The session row's end_reason. */
  reason: 'lost' | 'crashed' | 'gone';
  /** What the call that found out answers. */
  failure: ApplicationFailure;
}

const NEXT = 'The next call starts a new session by replaying the scrape.';
/** Codes of the browser engine (packages/browser errors.ts) that mean the page itself is gone. */
const PAGE_GONE_CODES = ['BROWSER_CRASHED', 'SCRAPE_PAGE_CLOSED'];

function codeOf(f: ApplicationFailure): string | undefined {
  return (f.details?.[0] as { code?: string } | undefined)?.code ?? undefined;
}

export function pageLoss(err: unknown): PageLoss | undefined {
  if (!(err instanceof ActivityFailure)) return undefined;
  const cause = err.cause;
  if (cause instanceof TimeoutFailure) {
    // Not picked up, or no heartbeat: the browser worker holding the page stopped.
    return {
      reason: 'lost',
      failure: ApplicationFailure.create({
        type: 'BAD_GATEWAY',
        nonRetryable: true,
        message: `Bad Gateway: the browser worker holding this session stopped, and its page with it. ${NEXT}`,
        details: [{ code: 'BROWSER_SESSION_LOST' }],
      }),
    };
  }
  if (!(cause instanceof ApplicationFailure)) return undefined;
  if (cause.type === 'GONE') {
    return { reason: 'gone', failure: ApplicationFailure.create({ type: 'GONE', nonRetryable: true, message: `${cause.message} ${NEXT}`, details: [{ code: 'SESSION_ENDED' }] }) };
  }
  if (cause.type === 'BAD_GATEWAY' && PAGE_GONE_CODES.includes(codeOf(cause) ?? '')) {
    return {
      reason: 'crashed',
      failure: ApplicationFailure.create({ type: 'BAD_GATEWAY', nonRetryable: true, message: `Bad Gateway: the session's page crashed (${cause.message}). ${NEXT}`, details: [{ code: 'BROWSER_CRASHED' }] }),
    };
  }
  return undefined;
}

export function sessionBusy(): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'CONFLICT',
    nonRetryable: true,
    message: 'Conflict: this interact session is running another call; send the next one when it has answered (one call at a time per session)',
    details: [{ code: 'SESSION_BUSY' }],
  });
}

/** The session is ending (stopped, idle, page lost): a new call starts a new one once it has. */
export function sessionEnding(): ApplicationFailure {
  return ApplicationFailure.create({ type: 'GONE', nonRetryable: true, message: 'Gone: this interact session is ending', details: [{ code: 'SESSION_ENDING' }] });
}

/** The session reached its maximum life: it is closed, and its scrape cannot be interacted with again (scrape it anew). */
export function sessionExpired(maxLifeMs: number): ApplicationFailure {
  return ApplicationFailure.create({ type: 'GONE', nonRetryable: true, message: expiredMessage(maxLifeMs), details: [{ code: 'SESSION_EXPIRED' }] });
}

