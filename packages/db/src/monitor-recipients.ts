import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { pickOnce } from './pick';
import { storableText } from './text';

/**
 * Opt-in of monitor email recipients (schema/monitors.ts monitor_email_recipients), per team and
 * address: a create or update naming an address the team has not used adds it `pending` with a
 * confirmation email due; the address gets change summaries only after following the email's
 * signed link (`confirmed`), and every summary carries an unsubscribe link (`unsubscribed`: no
 * more mail from the team's monitors). Naming an unsubscribed address again starts a new
 * confirmation (its older links stop working); confirmation emails are rate-limited per address.
 */

export type RecipientStatus = 'pending' | 'confirmed' | 'unsubscribed';
export type RecipientSource = 'opt_in' | 'legacy' | 'team';

/** One recipient as a monitor shows it (the JS SDK's MonitorEmailRecipientSubscription). */
export interface RecipientSubscription {
  email: string;
  status: RecipientStatus;
  source: RecipientSource;
  confirmationEmailSent: boolean;
}

/** Addresses compare case-insensitively (the domain is, and mailboxes in practice are). */
export const recipientKey = (email: string) => email.trim().toLowerCase();

type RecipientRow = {
  id: string;
  team_id: string;
  email: string;
  status: RecipientStatus;
  source: RecipientSource;
  nonce: number;
  monitor_id: string | null;
  confirm_sent_at: Date | null;
  confirm_requested_at: Date | null;
  confirm_attempts: number;
};

const subscriptionOf = (r: RecipientRow): RecipientSubscription => ({ email: r.email, status: r.status, source: r.source, confirmationEmailSent: r.confirm_sent_at !== null });

/**
 * Adds `emails` to the team's recipients as `pending` with a confirmation email due. Addresses
 * in `added` (new on this monitor) that had unsubscribed start a new confirmation, unless one was
 * asked for within `resendAfterMs`. Others keep their state.
 */
export async function enlistRecipients(db: Db, o: { teamId: string; monitorId: string; emails: string[]; added: string[]; source: RecipientSource; resendAfterMs: number }): Promise<void> {
  const emails = [...new Set(o.emails.map(recipientKey))];
  if (!emails.length) return;
  const added = [...new Set(o.added.map(recipientKey))];
  await db.execute(sql`
    INSERT INTO monitor_email_recipients AS r (team_id, email, source, monitor_id, confirm_due, confirm_next_attempt_at, confirm_requested_at)
    SELECT ${o.teamId}::uuid, e, ${o.source}::text, ${o.monitorId}::uuid, true, now(), now() FROM unnest(${sql.param(emails)}::text[]) AS e
    ON CONFLICT (team_id, email) DO UPDATE SET status = 'pending', nonce = r.nonce + 1, monitor_id = excluded.monitor_id,
      confirm_due = true, confirm_attempts = 0, confirm_next_attempt_at = now(), confirm_requested_at = now(), confirm_sent_at = NULL,
      confirm_error = NULL, updated_at = now()
    WHERE r.status = 'unsubscribed' AND r.email = ANY(${sql.param(added)}::text[])
      AND (r.confirm_requested_at IS NULL OR r.confirm_requested_at <= now() - make_interval(secs => ${o.resendAfterMs / 1000}))`);
}

/** The team's state of these addresses, by recipientKey (addresses it never named are absent). */
export async function recipientSubscriptions(db: Db, teamId: string, emails: string[]): Promise<Map<string, RecipientSubscription>> {
  const keys = [...new Set(emails.map(recipientKey))];
  if (!keys.length) return new Map();
  const r = await db.execute<RecipientRow>(sql`
    SELECT * FROM monitor_email_recipients WHERE team_id = ${teamId} AND email = ANY(${sql.param(keys)}::text[])`);
  return new Map(r.rows.map((x) => [x.email, subscriptionOf(x)]));
}

export type ResendOutcome =
  | { kind: 'queued'; subscription: RecipientSubscription }
  | { kind: 'confirmed' }
  | { kind: 'not_found' }
  | { kind: 'too_soon'; retryAfterMs: number };

/**
 * Asks for another confirmation email to a pending (or unsubscribed: a new confirmation) address,
 * at most once per `resendAfterMs` per address. A resend keeps the nonce: links already sent
 * stay valid until they expire.
 */
export async function requestConfirmation(db: Db, o: { teamId: string; email: string; monitorId: string; resendAfterMs: number }): Promise<ResendOutcome> {
  const email = recipientKey(o.email);
  const r = await db.execute<RecipientRow>(sql`
    UPDATE monitor_email_recipients SET
      nonce = CASE WHEN status = 'unsubscribed' THEN nonce + 1 ELSE nonce END, status = 'pending', monitor_id = ${o.monitorId},
      confirm_due = true, confirm_attempts = 0, confirm_next_attempt_at = now(), confirm_requested_at = now(), confirm_sent_at = NULL,
      confirm_error = NULL, updated_at = now()
    WHERE team_id = ${o.teamId} AND email = ${email} AND status <> 'confirmed'
      AND (confirm_requested_at IS NULL OR confirm_requested_at <= now() - make_interval(secs => ${o.resendAfterMs / 1000}))
    RETURNING *`);
  if (r.rows[0]) return { kind: 'queued', subscription: subscriptionOf(r.rows[0]) };
  const now = await db.execute<{ status: RecipientStatus; wait_ms: number | null }>(sql`
    SELECT status, extract(epoch FROM (confirm_requested_at + make_interval(secs => ${o.resendAfterMs / 1000}) - now())) * 1000 AS wait_ms
    FROM monitor_email_recipients WHERE team_id = ${o.teamId} AND email = ${email}`);
  const row = now.rows[0];
  if (!row) return { kind: 'not_found' };
  if (row.status === 'confirmed') return { kind: 'confirmed' };
  return { kind: 'too_soon', retryAfterMs: Math.max(1_000, Math.ceil(Number(row.wait_ms ?? 0))) };
}

export interface DueConfirmation {
  id: string;
  teamId: string;
  email: string;
  nonce: number;
  monitorId: string | null;
  attempt: number;
}

/** Claims up to `n` due confirmation emails for `claimMs` (SKIP LOCKED: the mailers of several workers share them). */
export async function claimDueConfirmations(db: Db, n: number, claimMs: number): Promise<DueConfirmation[]> {
  const r = await db.execute<RecipientRow>(sql`
    UPDATE monitor_email_recipients r SET confirm_attempts = r.confirm_attempts + 1, confirm_next_attempt_at = now() + make_interval(secs => ${claimMs / 1000})
    WHERE r.id = ANY(${pickOnce(sql`
      SELECT id FROM monitor_email_recipients WHERE confirm_due AND confirm_next_attempt_at <= now() ORDER BY confirm_next_attempt_at LIMIT ${n} FOR UPDATE SKIP LOCKED`)})
    RETURNING r.*`);
  return r.rows.map((x) => ({ id: x.id, teamId: x.team_id, email: x.email, nonce: x.nonce, monitorId: x.monitor_id, attempt: x.confirm_attempts }));
}

export type ConfirmationOutcome = { kind: 'sent' } | { kind: 'retry'; error: string; inMs: number } | { kind: 'failed'; error: string };

/** Records a confirmation email's attempt (a row no longer pending, e.g. confirmed meanwhile, just stops being due). */
export async function recordConfirmation(db: Db, id: string, o: ConfirmationOutcome): Promise<void> {
  const error = o.kind === 'sent' ? null : storableText(o.error).slice(0, 2_000);
  await db.execute(sql`
    UPDATE monitor_email_recipients SET
      confirm_due = ${o.kind === 'retry'},
      confirm_sent_at = CASE WHEN ${o.kind === 'sent'} THEN now() ELSE confirm_sent_at END,
      confirm_next_attempt_at = CASE WHEN ${o.kind === 'retry'} THEN now() + make_interval(secs => ${o.kind === 'retry' ? o.inMs / 1000 : 0}) ELSE confirm_next_attempt_at END,
      confirm_error = ${error}, updated_at = now()
    WHERE id = ${id}`);
}

export type LinkOutcome =
  | { kind: 'done'; email: string; already: boolean }
  | { kind: 'superseded' }
  | { kind: 'not_found' };

/**
 * Whether a confirmation link with `nonce` confirms the recipient row `alias`: its nonce is the
 * current one and the address is not unsubscribed. The one definition: confirmRecipient acts on
 * it and peekRecipientLink reports it, so what a GET shows is what the POST does.
 */
function linkConfirms(alias: 'n' | 'r', nonce: number): SQL {
  const t = sql.raw(alias);
  return sql`${t}.nonce = ${nonce} AND ${t}.status IN ('pending', 'confirmed')`;
}

/**
 * A confirmation link followed: `pending` → `confirmed` when the link's nonce is the current one.
 * An unsubscribed address is not resubscribed by an old link (superseded), nor is a newer flow's.
 */
export async function confirmRecipient(db: Db, id: string, nonce: number): Promise<LinkOutcome> {
  const r = await db.execute<RecipientRow & { was: RecipientStatus }>(sql`
    UPDATE monitor_email_recipients n SET status = 'confirmed', confirmed_at = coalesce(n.confirmed_at, now()), confirm_due = false, updated_at = now()
    FROM monitor_email_recipients o WHERE n.id = o.id AND n.id = ${id} AND ${linkConfirms('n', nonce)}
    RETURNING n.email, o.status AS was`);
  if (r.rows[0]) return { kind: 'done', email: r.rows[0].email, already: r.rows[0].was === 'confirmed' };
  return (await recipientExists(db, id)) ? { kind: 'superseded' } : { kind: 'not_found' };
}

/**
 * What following a link would do, changing nothing: the answer to a GET of a link, which mail
 * scanners and link previews fetch on their own (the change itself needs a POST). `already`: the
 * recipient is in the link's state now. Same outcomes as confirmRecipient / unsubscribeRecipient.
 */
export async function peekRecipientLink(db: Db, purpose: 'confirm' | 'unsubscribe', id: string, nonce: number): Promise<LinkOutcome> {
  const r = await db.execute<{ email: string; status: RecipientStatus; confirms: boolean }>(
    sql`SELECT email, status, ${linkConfirms('r', nonce)} AS confirms FROM monitor_email_recipients r WHERE id = ${id}`);
  const row = r.rows[0];
  if (!row) return { kind: 'not_found' };
  if (purpose === 'unsubscribe') return { kind: 'done', email: row.email, already: row.status === 'unsubscribed' };
  if (!row.confirms) return { kind: 'superseded' };
  return { kind: 'done', email: row.email, already: row.status === 'confirmed' };
}

/** An unsubscribe link followed: no more monitor mail from the team to the address (idempotent). */
export async function unsubscribeRecipient(db: Db, id: string): Promise<LinkOutcome> {
  const r = await db.execute<RecipientRow & { was: RecipientStatus }>(sql`
    UPDATE monitor_email_recipients n SET status = 'unsubscribed', unsubscribed_at = coalesce(CASE WHEN o.status = 'unsubscribed' THEN o.unsubscribed_at END, now()),
      confirm_due = false, updated_at = now()
    FROM monitor_email_recipients o WHERE n.id = o.id AND n.id = ${id}
    RETURNING n.email, o.status AS was`);
  if (r.rows[0]) return { kind: 'done', email: r.rows[0].email, already: r.rows[0].was === 'unsubscribed' };
  return { kind: 'not_found' };
}

/** The ids of the team's confirmed recipients among `emails`, by recipientKey (their unsubscribe links name them). */
export async function confirmedRecipientIds(db: Db, teamId: string, emails: string[]): Promise<Map<string, string>> {
  const keys = [...new Set(emails.map(recipientKey))];
  if (!keys.length) return new Map();
  const r = await db.execute<{ id: string; email: string }>(sql`
    SELECT id, email FROM monitor_email_recipients WHERE team_id = ${teamId} AND status = 'confirmed' AND email = ANY(${sql.param(keys)}::text[])`);
  return new Map(r.rows.map((x) => [x.email, x.id]));
}

async function recipientExists(db: Db, id: string): Promise<boolean> {
  const r = await db.execute(sql`SELECT 1 FROM monitor_email_recipients WHERE id = ${id}`);
  return r.rows.length > 0;
}
