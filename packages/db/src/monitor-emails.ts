import { sql } from 'drizzle-orm';
import type { Db } from './client';
import { pickOnce } from './pick';
import { storableText } from './text';

/**
 * Monitor email summaries (schema/monitors.ts monitor_emails): the statement that ends a check
 * writes the outbox row (endFinishedChecks); control workers' mailer claims due rows, sends them
 * and records the outcome here and on the check (`notificationStatus`). A claim pushes the row's
 * next attempt forward, so a mailer that dies mid-send leaves it to be claimed again later.
 */

export interface DueEmail {
  checkId: string;
  monitorId: string;
  teamId: string;
  attempt: number;
  /** Recipients (lower case) an earlier attempt already reached. */
  sentTo: string[];
}

/** Claims up to `n` due summaries for `claimMs` (SKIP LOCKED: mailers of several workers share the table). */
export async function claimDueEmails(db: Db, n: number, claimMs: number): Promise<DueEmail[]> {
  const r = await db.execute<{ check_id: string; monitor_id: string; team_id: string; attempts: number; sent_to: string[] }>(sql`
    UPDATE monitor_emails e SET attempts = e.attempts + 1, next_attempt_at = now() + make_interval(secs => ${claimMs / 1000})
    WHERE e.check_id = ANY(${pickOnce(sql`
      SELECT check_id FROM monitor_emails WHERE status = 'pending' AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT ${n} FOR UPDATE SKIP LOCKED`)})
    RETURNING e.check_id, e.monitor_id, e.team_id, e.attempts, e.sent_to`);
  return r.rows.map((e) => ({ checkId: e.check_id, monitorId: e.monitor_id, teamId: e.team_id, attempt: e.attempts, sentTo: e.sent_to }));
}

/** One recipient reached: a retry of the summary (another recipient's send failed) skips it. */
export async function markEmailSentTo(db: Db, checkId: string, recipient: string): Promise<void> {
  await db.execute(sql`UPDATE monitor_emails SET sent_to = array_append(sent_to, ${recipient}::text) WHERE check_id = ${checkId} AND NOT (${recipient}::text = ANY(sent_to))`);
}

export type EmailOutcome =
  | { kind: 'sent'; recipients: string[] }
  /** Nothing to send (every change judged noise, the monitor gone or its email turned off). */
  | { kind: 'suppressed'; reason: string }
  | { kind: 'retry'; error: string; inMs: number }
  | { kind: 'failed'; error: string };

/** Records an attempt: the outbox row's state and the check's `notificationStatus.email`, together. */
export async function recordEmail(db: Db, checkId: string, o: EmailOutcome): Promise<void> {
  const status = o.kind === 'retry' ? 'pending' : o.kind === 'sent' ? 'sent' : 'failed';
  const error = o.kind === 'retry' || o.kind === 'failed' ? storableText(o.error).slice(0, 2_000) : null;
  const view =
    o.kind === 'sent' ? { status: 'sent', recipients: o.recipients, sentAt: new Date().toISOString() }
    : o.kind === 'suppressed' ? { status: 'suppressed', reason: o.reason }
    : { status: o.kind === 'retry' ? 'retrying' : 'failed', error };
  await db.execute(sql`
    WITH e AS (
      UPDATE monitor_emails SET status = ${o.kind === 'suppressed' ? 'sent' : status}, last_error = ${error},
        sent_at = CASE WHEN ${o.kind === 'sent'} THEN now() ELSE sent_at END,
        next_attempt_at = CASE WHEN ${o.kind === 'retry'} THEN now() + make_interval(secs => ${o.kind === 'retry' ? o.inMs / 1000 : 0}) ELSE next_attempt_at END
      WHERE check_id = ${checkId} RETURNING check_id
    )
    UPDATE monitor_checks c SET notification_status = coalesce(c.notification_status, '{}'::jsonb) || jsonb_build_object('email', ${JSON.stringify(view)}::jsonb)
    FROM e WHERE c.id = e.check_id`);
}
