import { sql } from 'drizzle-orm';
import type { Db } from './client';
import { recipientKey } from './monitor-recipients';

/**
 * The per-team bounds on monitor mail to addresses that have not opted in (the operator's
 * settings; README "Configuration"). The only such mail is the confirmation email, so a team
 * naming strangers can make the operator's SMTP server send them at most:
 * - `pendingRecipientCounts`: as many invitations as the team may have awaiting confirmation at
 *   once (the API refuses a create, update or resend that would pass the bound);
 * - `takeConfirmationBudget`: a token bucket of confirmation emails per team (the mailer defers
 *   the ones beyond it until the bucket has refilled), whatever asked for them.
 */

/**
 * An invitation that counts as awaiting confirmation (alias `r`): pending, and its email still due
 * (not sent yet) or sent less than `liveMs` ago (its link still works; unsent but failed ones
 * count from when they were asked for).
 */
const awaiting = (liveMs: number) =>
  sql`(r.status = 'pending' AND (r.confirm_due OR coalesce(r.confirm_sent_at, r.confirm_requested_at) > now() - make_interval(secs => ${liveMs / 1000})))`;

/**
 * How many of the team's addresses await confirmation, and how many of `emails` would be new
 * invitations (neither confirmed nor awaiting). Takes the team's recipient lock until the end of
 * the transaction `tx`, so that concurrent creates cannot both pass the bound: call it in the
 * transaction that then enlists them.
 */
export async function pendingRecipientCounts(tx: Pick<Db, 'execute'>, o: { teamId: string; emails: string[]; liveMs: number }): Promise<{ pending: number; adding: number }> {
  const keys = [...new Set(o.emails.map(recipientKey))];
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`monitor_email_recipients:${o.teamId}`}::text, 0))`);
  const r = await tx.execute<{ pending: string; adding: string }>(sql`
    SELECT (SELECT count(*) FROM monitor_email_recipients r WHERE r.team_id = ${o.teamId}::uuid AND ${awaiting(o.liveMs)}) AS pending,
      (SELECT count(*) FROM unnest(${sql.param(keys)}::text[]) AS e WHERE NOT EXISTS (
        SELECT 1 FROM monitor_email_recipients r WHERE r.team_id = ${o.teamId}::uuid AND r.email = e AND (r.status = 'confirmed' OR ${awaiting(o.liveMs)}))) AS adding`);
  return { pending: Number(r.rows[0]!.pending), adding: Number(r.rows[0]!.adding) };
}

/**
 * Takes one confirmation email from the team's bucket: at most `perHour` at once, refilled evenly
 * at `perHour` an hour (one statement: the row lock orders concurrent mailers). Empty: how long
 * until one is there.
 */
export async function takeConfirmationBudget(db: Db, teamId: string, perHour: number): Promise<{ ok: true } | { ok: false; waitMs: number }> {
  const perSecond = perHour / 3600;
  const available = sql`least(${perHour}::float8, b.tokens + extract(epoch FROM now() - b.refilled_at) * ${perSecond}::float8)`;
  const took = await db.execute(sql`
    INSERT INTO monitor_mail_budgets AS b (team_id, tokens, refilled_at) VALUES (${teamId}::uuid, ${perHour - 1}::float8, now())
    ON CONFLICT (team_id) DO UPDATE SET tokens = ${available} - 1, refilled_at = now() WHERE ${available} >= 1
    RETURNING 1`);
  if (took.rows.length) return { ok: true };
  const r = await db.execute<{ tokens: number }>(sql`SELECT ${available} AS tokens FROM monitor_mail_budgets b WHERE team_id = ${teamId}::uuid`);
  const tokens = Number(r.rows[0]?.tokens ?? 0);
  return { ok: false, waitMs: Math.max(1_000, Math.ceil(((1 - tokens) / perSecond) * 1000)) };
}

/** A claimed confirmation email the team's budget did not allow: due again in `inMs`, its claim's attempt given back. */
export async function deferConfirmation(db: Db, id: string, inMs: number): Promise<void> {
  await db.execute(sql`
    UPDATE monitor_email_recipients SET confirm_attempts = greatest(confirm_attempts - 1, 0),
      confirm_next_attempt_at = now() + make_interval(secs => ${inMs / 1000}), updated_at = now()
    WHERE id = ${id} AND confirm_due`);
}
