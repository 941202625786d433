import { createHash } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { BALANCE_SHARDS, type BillingKind } from './schema/ledger';

/**
 * The credit ledger (schema/ledger.ts): every job kind bills here, every limit check reads here.
 *
 * - Charges are idempotent on (team, key): a retried activity bills once. Job kinds that store
 *   their result in one statement charge in that statement (chargeCtes), so the result and its
 *   bill commit together.
 * - Reservations set credits aside against a job cap and/or the team cap, atomically: under
 *   any concurrency the caps are never over-granted. A reservation is settled once, by the
 *   charge that converts it or by its release.
 * - team_credit_balances is maintained by the same statements, so a check reads a few rows.
 *
 * Lock order (keep it, or deadlocks become possible): a job's event head (events.ts) before a
 * team balance shard; a job's reservation lock, then a reservation's ledger row, then shard 0.
 */

export interface CreditBalance {
  /** Credits charged. */
  used: number;
  /** Credits reserved and not yet settled. */
  reserved: number;
}

/** Btree keys are limited to ~2.7 kB: long natural keys (URL keys) are hashed. */
export function boundedKey(...parts: string[]): string {
  const k = parts.join(':');
  return k.length <= 512 ? k : `${parts[0]}:sha256:${createHash('sha256').update(k).digest('hex')}`;
}

/**
 * Two CTEs to put in a WITH list, `credit_charge` and `credit_balance`, billing each row of
 * `source` once per (team, key) and adding it to the team's balance, in the caller's statement.
 * `source` yields (team_id uuid, job_id uuid, job_kind text, amount int, idempotency_key text);
 * rows of amount 0 bill nothing. `credit_charge` returns (team_id, amount) of the rows billed now.
 * Shard rows are updated in (team, shard) order, so statements billing several keys (finishPages)
 * lock them in one order and cannot deadlock each other.
 */
export function chargeCtes(source: SQL): SQL {
  return sql`credit_charge AS (
      INSERT INTO credit_ledger (team_id, job_id, job_kind, entry, amount, idempotency_key)
      SELECT s.team_id, s.job_id, s.job_kind, 'charge', s.amount, s.idempotency_key
      FROM (${source}) s(team_id, job_id, job_kind, amount, idempotency_key)
      WHERE s.amount > 0
      ON CONFLICT (team_id, idempotency_key) DO NOTHING
      RETURNING team_id, amount, ${chargeShard(sql`idempotency_key`)} AS shard
    ), credit_balance AS (
      INSERT INTO team_credit_balances AS b (team_id, shard, used)
      SELECT team_id, shard, sum(amount) FROM credit_charge GROUP BY team_id, shard ORDER BY team_id, shard
      ON CONFLICT (team_id, shard) DO UPDATE SET used = b.used + excluded.used
    )`;
}

/** Plain charges spread over shards 1…BALANCE_SHARDS−1 by their key (schema/ledger.ts says why). */
function chargeShard(key: SQL): SQL {
  return sql`(1 + (hashtext(${key}) & 2147483647) % ${BALANCE_SHARDS - 1})::smallint`;
}

export interface ChargeInput {
  teamId: string;
  jobId: string;
  kind: BillingKind;
  amount: number;
  /** Unique per team: a second charge with this key bills nothing. */
  key: string;
  /** The reservation this charge converts: it is released, whatever the amount charged. */
  reservationKey?: string;
}

/**
 * Bills `amount` once per key. With `reservationKey`, the charge settles that reservation: its
 * credits leave `reserved` as the charge enters `used` (a charge larger than the reservation is
 * billed in full; a smaller one frees the rest). A reservation already settled, or unknown, is
 * left alone and the charge is billed as a plain one: billing never fails after the work is done.
 * `charged` is false when the key had been billed before.
 */
export async function chargeCredits(db: Db, c: ChargeInput): Promise<{ charged: boolean }> {
  checkAmount(c.amount);
  if (!c.reservationKey) {
    const r = await db.execute<{ n: number }>(sql`
      WITH ${chargeCtes(sql`SELECT ${c.teamId}::uuid, ${c.jobId}::uuid, ${c.kind}::text, ${c.amount}::int, ${c.key}::text`)}
      SELECT count(*)::int AS n FROM credit_charge`);
    // An amount of 0 appends nothing: report it as charged unless the key exists.
    if (r.rows[0]!.n > 0) return { charged: true };
    return { charged: c.amount === 0 && !(await keyExists(db, c.teamId, c.key)) };
  }
  return settle(db, { ...c, entry: 'charge', reservationKey: c.reservationKey });
}

export interface ReleaseInput {
  teamId: string;
  jobId: string;
  kind: BillingKind;
  reservationKey: string;
}

/** Gives an unsettled reservation back (idempotent; a settled one is left alone). Returns the credits freed. */
export async function releaseReservation(db: Db, r: ReleaseInput): Promise<{ released: number }> {
  const out = await settle(db, { ...r, entry: 'release', amount: 0, key: `release:${r.reservationKey}` });
  return { released: out.released };
}

/**
 * Settles a reservation in a transaction: the reservation row is locked first, so two settlers
 * of one reservation run one after the other and only the first releases its credits.
 */
async function settle(
  db: Db,
  s: { teamId: string; jobId: string; kind: BillingKind; amount: number; key: string; entry: 'charge' | 'release'; reservationKey: string },
): Promise<{ charged: boolean; released: number }> {
  return db.transaction(async (tx) => {
    const res = await tx.execute<{ amount: number }>(sql`
      SELECT amount FROM credit_ledger WHERE team_id = ${s.teamId} AND idempotency_key = ${s.reservationKey} AND entry = 'reservation' FOR UPDATE`);
    const settled = await tx.execute(sql`
      SELECT 1 FROM credit_ledger WHERE team_id = ${s.teamId} AND reservation_key = ${s.reservationKey} LIMIT 1`);
    const released = res.rows.length && !settled.rows.length ? res.rows[0]!.amount : 0;
    // A release of nothing (unknown or settled reservation) leaves no row.
    if (s.entry === 'release' && released === 0) return { charged: false, released: 0 };
    const amount = s.entry === 'release' ? released : s.amount;
    const r = await tx.execute<{ n: number }>(sql`
      WITH entry AS (
        INSERT INTO credit_ledger (team_id, job_id, job_kind, entry, amount, reservation_key, released, idempotency_key)
        VALUES (${s.teamId}, ${s.jobId}, ${s.kind}, ${s.entry}, ${amount}, ${s.reservationKey}, ${released}, ${s.key})
        ON CONFLICT (team_id, idempotency_key) DO NOTHING
        RETURNING amount, released
      ), balance AS (
        INSERT INTO team_credit_balances AS b (team_id, shard, used, reserved)
        SELECT ${s.teamId}, 0, CASE WHEN ${s.entry} = 'charge' THEN amount ELSE 0 END, -released FROM entry
        ON CONFLICT (team_id, shard) DO UPDATE SET used = b.used + excluded.used, reserved = b.reserved + excluded.reserved
      )
      SELECT count(*)::int AS n FROM entry`);
    const appended = r.rows[0]!.n > 0;
    return { charged: appended, released: appended ? released : 0 };
  });
}

export interface ReserveInput {
  teamId: string;
  jobId: string;
  kind: BillingKind;
  amount: number;
  /** Unique per team: a retried reservation with this key is granted again without reserving twice. */
  key: string;
  /** The job may not have more than this charged + reserved; null/undefined = no job cap. */
  jobCap?: number | null;
  /** The team may not have more than this charged + reserved; null/undefined = no team cap. */
  teamCap?: number | null;
}

export type ReserveOutcome =
  | { granted: true; replay: boolean }
  | { granted: false; reason: 'job_cap' | 'team_cap'; cap: number; balance: CreditBalance };

/**
 * Reserves `amount` credits, or refuses, atomically: concurrent reservations never take more
 * than a cap allows. The team cap under the lock of the team's balance shard 0, which every
 * reservation takes before it reads the team's sums;
 * the job cap under a per-job transaction advisory lock, summing the job's ledger rows (jobs
 * with a cap — agents — have few). Charges that convert no reservation (pages of a crawl) are
 * not checked against caps: they bill work already done, and may take `used` past a cap.
 * Without a team cap this is two statements in the transaction (agents reserve several times
 * a step): the job's lock with the insert, then the job's sum with shard 0's update.
 */
export async function reserveCredits(db: Db, r: ReserveInput): Promise<ReserveOutcome> {
  checkAmount(r.amount);
  const refused = Symbol('refused');
  const jobCapped = r.jobCap !== null && r.jobCap !== undefined;
  const teamCapped = r.teamCap !== null && r.teamCap !== undefined;
  let outcome: ReserveOutcome | null = null;
  try {
    return await db.transaction(async (tx) => {
      // The job's lock is taken before the row is inserted, by the same statement; every later
      // statement of the transaction starts after it and so sees every reservation granted before.
      const ins = await tx.execute(sql`
        WITH job_lock AS (SELECT ${jobCapped ? sql`pg_advisory_xact_lock(hashtextextended('wds-credit-job:' || ${r.jobId}, 0))` : sql`NULL`})
        INSERT INTO credit_ledger (team_id, job_id, job_kind, entry, amount, idempotency_key)
        SELECT ${r.teamId}::uuid, ${r.jobId}::uuid, ${r.kind}::text, 'reservation', ${r.amount}::int, ${r.key}::text FROM job_lock
        ON CONFLICT (team_id, idempotency_key) DO NOTHING RETURNING id`);
      if (!ins.rows.length) {
        const [prior] = (await tx.execute<{ entry: string }>(sql`SELECT entry FROM credit_ledger WHERE team_id = ${r.teamId} AND idempotency_key = ${r.key}`)).rows;
        if (prior?.entry !== 'reservation') throw new Error(`credit ledger key ${r.key} is already used by a ${prior?.entry ?? 'missing'} entry`);
        return { granted: true as const, replay: true };
      }
      if (!teamCapped) {
        // The job's sum (the row just inserted is part of it: over the cap if the total is) and,
        // only when it fits, the reservation added to shard 0; a refusal rolls the row back.
        const r2 = await tx.execute<{ used: string; reserved: string; granted: boolean }>(sql`
          WITH job AS (${jobCapped ? balanceSql(sql`job_id = ${r.jobId}`) : sql`SELECT 0 AS used, 0 AS reserved`}),
          shard AS (
            INSERT INTO team_credit_balances AS b (team_id, shard, reserved)
            SELECT ${r.teamId}::uuid, 0, ${r.amount}::bigint FROM job WHERE ${jobCapped ? sql`job.used + job.reserved <= ${r.jobCap}` : sql`true`}
            ON CONFLICT (team_id, shard) DO UPDATE SET reserved = b.reserved + excluded.reserved
            RETURNING 1
          )
          SELECT used, reserved, EXISTS (SELECT 1 FROM shard) AS granted FROM job`);
        const row = r2.rows[0]!;
        if (row.granted) return { granted: true as const, replay: false };
        outcome = { granted: false, reason: 'job_cap', cap: r.jobCap!, balance: { used: Number(row.used), reserved: Number(row.reserved) - r.amount } };
        throw refused;
      }
      if (jobCapped) {
        const job = await balanceOf(tx, sql`job_id = ${r.jobId}`);
        if (job.used + job.reserved > r.jobCap!) {
          outcome = { granted: false, reason: 'job_cap', cap: r.jobCap!, balance: { used: job.used, reserved: job.reserved - r.amount } };
          throw refused;
        }
      }
      // Shard 0's row lock serialises the team's reservations; the sum is read after taking it
      // (a new snapshot), so it includes every reservation granted before.
      await tx.execute(sql`
        INSERT INTO team_credit_balances AS b (team_id, shard) VALUES (${r.teamId}, 0)
        ON CONFLICT (team_id, shard) DO UPDATE SET reserved = b.reserved`);
      const team = await teamCreditBalance(tx, r.teamId);
      if (team.used + team.reserved + r.amount > r.teamCap!) {
        outcome = { granted: false, reason: 'team_cap', cap: r.teamCap!, balance: team };
        throw refused;
      }
      await tx.execute(sql`UPDATE team_credit_balances SET reserved = reserved + ${r.amount} WHERE team_id = ${r.teamId} AND shard = 0`);
      return { granted: true as const, replay: false };
    });
  } catch (e) {
    // Thrown inside the transaction so that it rolls back: the reservation row goes with it.
    if (e === refused && outcome) return outcome;
    throw e;
  }
}

export interface ReduceInput {
  teamId: string;
  jobId: string;
  kind: BillingKind;
  /** The open reservation to give back. */
  reservationKey: string;
  /** The smaller reservation that takes its place (unique per team, like any reservation key). */
  key: string;
  amount: number;
}

/**
 * Swaps an open reservation for a smaller one in one transaction (a step reserved its upper
 * bound and now knows its cost): nothing can take the difference in between, so the smaller one
 * is never refused and no cap is crossed. Locks as reserveCredits does (the job's lock, the
 * reservation's row, shard 0). Idempotent: once swapped, a repeat changes nothing. A reservation
 * that is not open (settled by an older, two-step swap) is replaced by a plain, cap-checked
 * reservation of `amount`. Returns whether `key` holds a reservation afterwards.
 */
export async function reduceReservation(db: Db, r: ReduceInput, caps: { jobCap?: number | null; teamCap?: number | null } = {}): Promise<boolean> {
  checkAmount(r.amount);
  const swapped = await db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended('wds-credit-job:' || ${r.jobId}, 0))`);
    // After the lock (a new statement, a new snapshot): whether the swap is done, else the open reservation, locked.
    const [state] = (
      await tx.execute<{ done: boolean; open: number | null }>(sql`
        SELECT EXISTS (SELECT 1 FROM credit_ledger WHERE team_id = ${r.teamId} AND idempotency_key = ${r.key}) AS done,
          (SELECT amount FROM credit_ledger res WHERE team_id = ${r.teamId} AND idempotency_key = ${r.reservationKey} AND entry = 'reservation'
            AND NOT EXISTS (SELECT 1 FROM credit_ledger s WHERE s.team_id = res.team_id AND s.reservation_key = res.idempotency_key)
            FOR UPDATE) AS open`)
    ).rows;
    if (state!.done) return true;
    const open = state!.open;
    if (open === null) return false;
    if (r.amount > open) throw new RangeError(`a reservation of ${open} cannot be reduced to ${r.amount}`);
    await tx.execute(sql`
      WITH entries AS (
        INSERT INTO credit_ledger (team_id, job_id, job_kind, entry, amount, reservation_key, released, idempotency_key) VALUES
          (${r.teamId}, ${r.jobId}, ${r.kind}, 'release', ${open}, ${r.reservationKey}, ${open}, ${`release:${r.reservationKey}`}),
          (${r.teamId}, ${r.jobId}, ${r.kind}, 'reservation', ${r.amount}, NULL, 0, ${r.key})
      )
      INSERT INTO team_credit_balances AS b (team_id, shard, reserved) VALUES (${r.teamId}, 0, ${r.amount - open})
      ON CONFLICT (team_id, shard) DO UPDATE SET reserved = b.reserved + excluded.reserved`);
    return true;
  });
  if (swapped) return true;
  const again = await reserveCredits(db, { teamId: r.teamId, jobId: r.jobId, kind: r.kind, amount: r.amount, key: r.key, ...caps });
  return again.granted;
}

/**
 * Releases every unsettled reservation of a job: call it when the job ends, whatever the
 * outcome, so that reservations of a crashed step do not hold the team's credits for ever.
 */
export async function releaseJobReservations(db: Db, jobId: string): Promise<{ released: number }> {
  const open = await db.execute<{ team_id: string; job_kind: BillingKind; idempotency_key: string }>(sql`
    SELECT r.team_id, r.job_kind, r.idempotency_key FROM credit_ledger r
    WHERE r.job_id = ${jobId} AND r.entry = 'reservation'
      AND NOT EXISTS (SELECT 1 FROM credit_ledger s WHERE s.team_id = r.team_id AND s.reservation_key = r.idempotency_key)`);
  let released = 0;
  for (const o of open.rows) {
    released += (await releaseReservation(db, { teamId: o.team_id, jobId, kind: o.job_kind, reservationKey: o.idempotency_key })).released;
  }
  return { released };
}

/** The team's running balance: at most BALANCE_SHARDS rows read by key (the 402 check and GET /v2/team/credit-usage). */
export async function teamCreditBalance(db: Pick<Db, 'execute'>, teamId: string): Promise<CreditBalance> {
  const r = await db.execute<{ used: string; reserved: string }>(sql`
    SELECT coalesce(sum(used), 0) AS used, coalesce(sum(reserved), 0) AS reserved FROM team_credit_balances WHERE team_id = ${teamId}`);
  return { used: Number(r.rows[0]!.used), reserved: Number(r.rows[0]!.reserved) };
}

/** A job's credits, summed from its ledger rows. */
export async function jobCreditBalance(db: Pick<Db, 'execute'>, jobId: string): Promise<CreditBalance> {
  return balanceOf(db, sql`job_id = ${jobId}`);
}

export async function jobCreditsUsed(db: Pick<Db, 'execute'>, jobId: string): Promise<number> {
  return (await jobCreditBalance(db, jobId)).used;
}

/** The team's balance recomputed from the whole ledger (audits and tests: it must equal teamCreditBalance). */
export async function teamLedgerTotals(db: Pick<Db, 'execute'>, teamId: string): Promise<CreditBalance> {
  return balanceOf(db, sql`team_id = ${teamId}`);
}

/** The used and reserved sums of the ledger rows matching `where` (one row). */
const balanceSql = (where: SQL) => sql`
    SELECT coalesce(sum(amount) FILTER (WHERE entry = 'charge'), 0) AS used,
           coalesce(sum(amount) FILTER (WHERE entry = 'reservation'), 0) - coalesce(sum(released), 0) AS reserved
    FROM credit_ledger WHERE ${where}`;

async function balanceOf(db: Pick<Db, 'execute'>, where: SQL): Promise<CreditBalance> {
  const r = await db.execute<{ used: string; reserved: string }>(balanceSql(where));
  return { used: Number(r.rows[0]!.used), reserved: Number(r.rows[0]!.reserved) };
}

async function keyExists(db: Db, teamId: string, key: string): Promise<boolean> {
  return (await db.execute(sql`SELECT 1 FROM credit_ledger WHERE team_id = ${teamId} AND idempotency_key = ${key}`)).rows.length > 0;
}

function checkAmount(n: number) {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`credit amounts are whole numbers ≥ 0 (got ${n})`);
}
