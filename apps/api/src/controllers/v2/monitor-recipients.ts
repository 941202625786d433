import type { FastifyReply } from 'fastify';
import { monitorRecipientResendRequestSchema } from '@wds/contracts';
import {
  enlistRecipients, inTransaction, pendingRecipientCounts, recipientKey, recipientSubscriptions, requestConfirmation, type Db, type MonitorRow, type RecipientSubscription,
} from '@wds/db';
import { WdsError } from '@wds/errors';
import type { ApiDeps } from '../../deps';
import { teamMonitor, type IdReq, type MonitorConfig } from './monitor-shared';
import { validateBody } from './validate';

/**
 * Email recipients' opt-in on the authenticated side (packages/db monitor-recipients.ts): a
 * create or update enlists the addresses it adds (pending, a confirmation email due); monitors
 * show each recipient's state (`emailRecipientSubscriptions`); a resend asks for another
 * confirmation email, rate-limited per address. The links themselves are monitor-email-links.ts.
 *
 * Each new invitation mails an address that has not opted in, so a team may have at most
 * `pendingRecipients.max` awaiting confirmation at once: a create, update or resend that would
 * pass it is refused (429 PENDING_RECIPIENTS_LIMIT) and stores nothing. (The mailer also bounds
 * the confirmation emails a team sends per hour, whatever asked for them.)
 */

/** The explicit recipients a monitor's notification settings send to (none while email is off). */
export function emailRecipientsOf(notification: unknown): string[] {
  const email = (notification as { email?: { enabled?: boolean; recipients?: string[] } } | null | undefined)?.email;
  return email?.enabled && email.recipients?.length ? email.recipients : [];
}

/**
 * Enlists the recipients `after` names that `before` did not (a new monitor: all of them). `db`:
 * the transaction that writes the monitor, so a monitor is never stored without its invitations.
 */
export async function enlistNewRecipients(db: Db, cfg: MonitorConfig, m: { teamId: string; id: string }, before: unknown, after: unknown): Promise<void> {
  const emails = emailRecipientsOf(after);
  if (!emails.length) return;
  const old = new Set(emailRecipientsOf(before).map(recipientKey));
  const added = emails.filter((e) => !old.has(recipientKey(e)));
  if (!added.length) return;
  await withinPendingBound(db, cfg, m.teamId, added);
  await enlistRecipients(db, { teamId: m.teamId, monitorId: m.id, emails: added, added, source: 'opt_in', resendAfterMs: cfg.resendAfterMs ?? 600_000 });
}

/**
 * Refuses invitations to `emails` that would leave more than the bound awaiting confirmation.
 * `tx`: the transaction that then enlists them (the count holds the team's lock until it ends).
 */
async function withinPendingBound(tx: Db, cfg: MonitorConfig, teamId: string, emails: string[]): Promise<void> {
  const { max, liveMs } = cfg.pendingRecipients;
  const { pending, adding } = await pendingRecipientCounts(tx, { teamId, emails, liveMs });
  if (!adding || pending + adding <= max) return;
  throw new WdsError('RATE_LIMITED', {
    code: 'PENDING_RECIPIENTS_LIMIT',
    message: `Rate limit exceeded: at most ${max} email recipients of this team's monitors may await confirmation at once; ${pending} do, and this would invite ${adding} more. ` +
      'An invitation stops counting once its address confirms or unsubscribes, or when its link expires.',
    details: { pendingRecipients: pending, newRecipients: adding, limit: max },
  });
}

/** Each monitor's recipients' states (one query for all of `rows`: they are one team's). */
export async function subscriptionsOf(deps: ApiDeps, teamId: string, rows: MonitorRow[]): Promise<Map<string, RecipientSubscription>> {
  return recipientSubscriptions(deps.db, teamId, rows.flatMap((m) => emailRecipientsOf(m.notification)));
}

/** The monitor's `emailRecipientSubscriptions`: its recipients in order, each once, with its team-wide state. */
export function subscriptionsView(m: MonitorRow, subs: Map<string, RecipientSubscription>): RecipientSubscription[] | undefined {
  const emails = emailRecipientsOf(m.notification);
  if (!emails.length) return undefined;
  const seen = new Set<string>();
  return emails.flatMap((email) => {
    const key = recipientKey(email);
    if (seen.has(key)) return [];
    seen.add(key);
    // Not yet enlisted (a monitor from before opt-in): pending until its mailer asks it to confirm.
    const s = subs.get(key);
    return [{ email, status: s?.status ?? 'pending', source: s?.source ?? 'legacy', confirmationEmailSent: s?.confirmationEmailSent ?? false }];
  });
}

/** POST /v2/monitor/{id}/recipients/resend: another confirmation email to a recipient of the monitor. */
export function resendConfirmation(deps: ApiDeps, cfg: MonitorConfig) {
  return async (req: IdReq, reply: FastifyReply) => {
    const m = await teamMonitor(deps, req);
    const body = validateBody(monitorRecipientResendRequestSchema, req.body);
    const named = emailRecipientsOf(m.notification).find((e) => recipientKey(e) === recipientKey(body.email));
    if (!named) throw new WdsError('NOT_FOUND', { code: 'RECIPIENT_NOT_FOUND', message: 'Not Found: this address is not an email recipient of the monitor (or its email notifications are off).' });
    const resendAfterMs = cfg.resendAfterMs ?? 600_000;
    const r = await inTransaction(deps.db, async (tx) => {
      // A resend of an address whose invitation expired (or that unsubscribed) invites it again.
      await withinPendingBound(tx, cfg, m.teamId, [named]);
      const first = await requestConfirmation(tx, { teamId: m.teamId, email: named, monitorId: m.id, resendAfterMs });
      if (first.kind !== 'not_found') return first;
      // Named by a monitor from before opt-in and never enlisted: this is its first confirmation.
      await enlistRecipients(tx, { teamId: m.teamId, monitorId: m.id, emails: [named], added: [named], source: 'legacy', resendAfterMs });
      return requestConfirmation(tx, { teamId: m.teamId, email: named, monitorId: m.id, resendAfterMs: 0 });
    });
    if (r.kind === 'confirmed') throw new WdsError('CONFLICT', { code: 'RECIPIENT_ALREADY_CONFIRMED', message: 'Conflict: this address has already confirmed; it gets the monitor\'s emails.' });
    if (r.kind === 'too_soon') {
      const seconds = Math.ceil(r.retryAfterMs / 1000);
      reply.header('Retry-After', String(seconds));
      throw new WdsError('RATE_LIMITED', { code: 'CONFIRMATION_RATE_LIMITED', message: `Rate limit exceeded: a confirmation email was sent to this address recently; try again in ${seconds} s.`, details: { retryAfterSeconds: seconds } });
    }
    if (r.kind !== 'queued') throw new WdsError('NOT_FOUND', { code: 'RECIPIENT_NOT_FOUND', message: 'Not Found: this address is not an email recipient of the monitor.' });
    return reply.send({ success: true, data: { ...r.subscription, email: named } });
  };
}
