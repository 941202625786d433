import nodemailer from 'nodemailer';
import { checkPages, claimDueEmails, loadCheckById, monitorsById, recordEmail, type CheckPageRow, type Db, type DueEmail, type EmailOutcome } from '@wds/db';
import { startSweepLoop } from '../stranded/sweep';
import { backoffMs, type MailContext, type MailerOptions, type Summary } from './mail-context';
import { deliverSummary, sendDueConfirmations } from './recipient-mail';

export type { MailerOptions };

/**
 * Monitor email summaries (Firecrawl's `notification.email`), sent by control workers through the
 * operator's SMTP server (WDS_SMTP_URL, WDS_SMTP_FROM). The statement that ends a check writes an
 * outbox row when some page is not `same` (monitor_emails); this loop claims due rows, builds the
 * summary from the check, sends it, and records the outcome on the check (`notificationStatus`).
 * A failed send is retried with backoff (1 s, 2 s, 4 s … 5 min) up to `maxAttempts`. With judging
 * on, meaningful changes come first, and a check whose every change was judged noise (and has no
 * new, removed or failed page) sends nothing. Only recipients who confirmed get a summary, one
 * message each with its own unsubscribe link; confirmation emails go out from the same loop
 * (recipient-mail.ts).
 */

/** Pages a summary lists at most (the check's API lists them all). */
const LISTED = 50;
/** Characters of one page's diff a summary with includeDiffs shows. */
const DIFF_CHARS = 2_000;

export function startMonitorMailer(opts: MailerOptions): { stop(): Promise<void> } {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const transport = nodemailer.createTransport(opts.smtpUrl, { connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs });
  const ctx: MailContext = { o: { ...opts, publicUrl: opts.publicUrl ?? 'http://localhost:3002' }, transport, maxAttempts: opts.maxAttempts ?? 8, claimMs: timeoutMs * 3 };
  const loop = startSweepLoop(opts.pollMs ?? 1_000, async (stopped) => {
    await sendDueConfirmations(ctx, stopped);
    for (const e of await claimDueEmails(opts.db, 10, ctx.claimMs)) {
      if (stopped()) return;
      let outcome: EmailOutcome;
      try {
        const msg = await summaryOf(ctx.o, e);
        outcome = 'suppressed' in msg ? { kind: 'suppressed', reason: msg.suppressed } : await deliverSummary(ctx, e, msg);
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        outcome = e.attempt < ctx.maxAttempts ? { kind: 'retry', error, inMs: backoffMs(e.attempt) } : { kind: 'failed', error };
      }
      await recordEmail(opts.db, e.checkId, outcome).catch(() => {});
    }
  });
  return {
    async stop() {
      await loop.stop();
      transport.close();
    },
  };
}

type Message = Summary | { suppressed: string };

interface EmailSettings {
  enabled?: boolean;
  recipients?: string[];
  includeDiffs?: boolean;
}

/** The summary of one check, or why none is sent. */
export async function summaryOf(o: Pick<MailerOptions, 'db' | 'publicUrl'>, e: DueEmail): Promise<Message> {
  const [k, monitors] = await Promise.all([loadCheckById(o.db, e.checkId), monitorsById(o.db, [e.monitorId])]);
  const m = monitors.get(e.monitorId);
  const email = (m?.notification as { email?: EmailSettings } | null | undefined)?.email;
  if (!k || !m || m.status === 'deleted') return { suppressed: 'the monitor is gone' };
  if (!email?.enabled || !email.recipients?.length) return { suppressed: 'email notifications are off for this monitor' };
  const pages = await checkPages(o.db, k.id, { limit: LISTED, skip: 0, notSame: true });
  const judged = m.judgeEnabled && !!m.goal?.trim();
  const noise = (p: CheckPageRow) => p.status === 'changed' && (p.judgment as { meaningful?: boolean } | null)?.meaningful === false;
  if (judged && pages.length && pages.every(noise)) return { suppressed: 'every change was judged not meaningful for the goal' };
  const summary = k.summary as { changed: number; new: number; removed: number; error: number } | null;
  const counts = summary ? [`${summary.changed} changed`, `${summary.new} new`, `${summary.removed} removed`, `${summary.error} failed`].filter((x) => !x.startsWith('0 ')).join(', ') : k.status;
  const rank = (p: CheckPageRow) => (judged ? (noise(p) ? 2 : (p.judgment as { meaningful?: boolean } | null)?.meaningful ? 0 : 1) : 1);
  const listed = [...pages].sort((a, b) => rank(a) - rank(b));
  const lines = [
    `Monitor "${m.name}" — check ${k.id} (${k.status}): ${counts}.`,
    ...(m.goal && judged ? [`Goal: ${m.goal}`] : []),
    '',
    ...listed.flatMap((p) => pageLines(p, !!email.includeDiffs)),
    ...(o.publicUrl ? ['', `Details: ${o.publicUrl.replace(/\/$/, '')}/v2/monitor/${m.id}/checks/${k.id}`] : []),
  ];
  return { to: email.recipients, subject: `[WDS monitor] ${m.name}: ${counts}`, text: lines.join('\n'), teamId: m.teamId, monitorId: m.id };
}

function pageLines(p: CheckPageRow, includeDiffs: boolean): string[] {
  const j = p.judgment as { meaningful?: boolean; reason?: string } | null;
  const out = [`- ${p.status.toUpperCase()} ${p.url}${j?.reason ? ` — ${j.meaningful ? 'meaningful' : 'not meaningful'}: ${j.reason}` : ''}${p.error ? ` — ${p.error}` : ''}`];
  const diff = (p.diff as { text?: string } | null)?.text;
  if (includeDiffs && diff) out.push(...(diff.length > DIFF_CHARS ? `${diff.slice(0, DIFF_CHARS)}\n[… cut]` : diff).split('\n').map((l) => `    ${l}`));
  return out;
}
