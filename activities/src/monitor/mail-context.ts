import type { Transporter } from 'nodemailer';
import type { Db } from '@wds/db';

/** What the monitor mailer (mailer.ts) and its recipient opt-in (recipient-mail.ts) share. */
export interface MailerOptions {
  db: Db;
  /** smtp://user:pass@host:port or smtps://… (nodemailer's transport URL). */
  smtpUrl: string;
  from: string;
  /** Base of the check's link and of confirm/unsubscribe links (WDS_PUBLIC_URL; default http://localhost:3002). */
  publicUrl?: string;
  /** The link-signing secret the API checks links with (WDS_FILE_SIGNING_SECRET). */
  secret: () => string;
  /** Lifetime of a confirmation link (WDS_MONITOR_CONFIRM_TTL_SECONDS). */
  confirmTtlSeconds?: number;
  /** Confirmation emails per team: at most this many at once, refilled at this many an hour (WDS_MONITOR_CONFIRMATIONS_PER_HOUR). */
  confirmationsPerHour: number;
  pollMs?: number;
  maxAttempts?: number;
  /** Deadline of one SMTP conversation. */
  timeoutMs?: number;
}

/** What the senders share: the options, the SMTP transport and its limits. */
export interface MailContext {
  o: MailerOptions & { publicUrl: string };
  transport: Transporter;
  maxAttempts: number;
  claimMs: number;
}

/** A check's summary, before it is addressed to each confirmed recipient. */
export type Summary = { to: string[]; subject: string; text: string; teamId: string; monitorId: string };

/** Wait before retrying a failed send: 1 s, 2 s, 4 s … 5 min. */
export const backoffMs = (attempt: number) => Math.min(1_000 * 2 ** (attempt - 1), 5 * 60_000);
