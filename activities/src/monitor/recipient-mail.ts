import {
  claimDueConfirmations, confirmedRecipientIds, deferConfirmation, enlistRecipients, markEmailSentTo, recipientKey, recipientSubscriptions, recordConfirmation,
  takeConfirmationBudget, type DueConfirmation, type DueEmail, type EmailOutcome,
} from '@wds/db';
import { recipientLink, signRecipientToken } from '@wds/storage';
import { backoffMs, type MailContext, type Summary } from './mail-context';

/**
 * Recipient opt-in in the mailer (packages/db monitor-recipients.ts): a summary goes only to the
 * recipients who confirmed, one message each, ending with that recipient's unsubscribe link (and
 * the List-Unsubscribe header); an address a monitor names that the team never enlisted (a
 * monitor made before opt-in existed) is enlisted here as `legacy` and asked to confirm instead.
 * Confirmation emails carry a signed link that expires; tokens never reach a log.
 *
 * A confirmation email goes to an address that has not opted in, so it says only what the
 * operator's deployment says (confirmationMessage): no monitor name, goal or other text a team
 * wrote, not even the address (a team chooses its local part: `victim+sign-in-at-evil.example@…`).
 * And each team sends at most its budget of them (WDS_MONITOR_CONFIRMATIONS_PER_HOUR,
 * monitor-mail-budget.ts in @wds/db): beyond it they wait, due, until the bucket refills.
 */

const CONFIRM_TTL_SECONDS = 7 * 86_400;

/** Sends a summary to each confirmed recipient not yet reached; a failure throws (the summary is retried, skipping those reached). */
export async function deliverSummary(ctx: MailContext, e: DueEmail, msg: Summary): Promise<EmailOutcome> {
  const db = ctx.o.db;
  const known = await recipientSubscriptions(db, msg.teamId, msg.to);
  const unknown = msg.to.filter((a) => !known.has(recipientKey(a)));
  if (unknown.length) await enlistRecipients(db, { teamId: msg.teamId, monitorId: msg.monitorId, emails: unknown, added: [], source: 'legacy', resendAfterMs: 0 });
  const confirmed = await confirmedRecipientIds(db, msg.teamId, msg.to);
  const to = [...new Map(msg.to.filter((a) => confirmed.has(recipientKey(a))).map((a) => [recipientKey(a), a])).values()];
  if (!to.length) return { kind: 'suppressed', reason: 'no recipient has confirmed (each was sent a confirmation email)' };
  for (const address of to) {
    const key = recipientKey(address);
    if (e.sentTo.includes(key)) continue;
    const unsubscribe = recipientLink(ctx.o.publicUrl, 'unsubscribe', signRecipientToken(ctx.o.secret(), 'unsubscribe', { id: confirmed.get(key)!, nonce: 0, expires: 0 }));
    await ctx.transport.sendMail({
      from: ctx.o.from,
      to: address,
      subject: msg.subject,
      text: `${msg.text}\n\n--\nYou get this because you confirmed monitor emails from this team. Unsubscribe: ${unsubscribe}`,
      // RFC 8058 one-click: the mail client POSTs the link (a GET of it only asks, so scanners change nothing).
      headers: { 'List-Unsubscribe': `<${unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    });
    await markEmailSentTo(db, e.checkId, key);
  }
  return { kind: 'sent', recipients: to };
}

/**
 * Sends the due confirmation emails (a batch per sweep), each recorded as sent, retried or failed;
 * one its team's budget does not allow now is deferred until the budget has one.
 */
export async function sendDueConfirmations(ctx: MailContext, stopped: () => boolean): Promise<void> {
  const due = await claimDueConfirmations(ctx.o.db, 10, ctx.claimMs);
  for (const d of due) {
    if (stopped()) return;
    const budget = await takeConfirmationBudget(ctx.o.db, d.teamId, ctx.o.confirmationsPerHour);
    if (!budget.ok) {
      await deferConfirmation(ctx.o.db, d.id, budget.waitMs);
      continue;
    }
    try {
      await ctx.transport.sendMail({ from: ctx.o.from, to: d.email, ...confirmationMessage(ctx, d) });
      await recordConfirmation(ctx.o.db, d.id, { kind: 'sent' });
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      await recordConfirmation(ctx.o.db, d.id, d.attempt < ctx.maxAttempts ? { kind: 'retry', error, inMs: backoffMs(d.attempt) } : { kind: 'failed', error }).catch(() => {});
    }
  }
}

/** The confirmation email: fixed text and the recipient's own links, nothing a team wrote. */
export function confirmationMessage(ctx: Pick<MailContext, 'o'>, d: Pick<DueConfirmation, 'id' | 'nonce'>): { subject: string; text: string } {
  const ttl = ctx.o.confirmTtlSeconds ?? CONFIRM_TTL_SECONDS;
  const expires = Math.floor(Date.now() / 1000) + ttl;
  const secret = ctx.o.secret();
  const confirm = recipientLink(ctx.o.publicUrl, 'confirm', signRecipientToken(secret, 'confirm', { id: d.id, nonce: d.nonce, expires }));
  const unsubscribe = recipientLink(ctx.o.publicUrl, 'unsubscribe', signRecipientToken(secret, 'unsubscribe', { id: d.id, nonce: 0, expires: 0 }));
  return {
    subject: 'Confirm change emails from a WDS monitor',
    text: [
      'A user of this WDS web data service asked to send this address emails when the web pages one of their monitors watches change.',
      '',
      `To receive them, confirm (this link works until ${new Date(expires * 1000).toUTCString()}):`,
      confirm,
      '',
      'If you do not want them, ignore this email: nothing more is sent unless you confirm.',
      `To refuse all monitor emails from this team: ${unsubscribe}`,
    ].join('\n'),
  };
}
