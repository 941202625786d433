import { sql } from 'drizzle-orm';
import { bigint, bigserial, check, index, integer, pgTable, primaryKey, smallint, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { teams } from './teams';

/** Every kind of job that bills credits (the ledger's `job_kind`). */
export type BillingKind = 'scrape' | 'crawl' | 'batch' | 'parse' | 'map' | 'search' | 'extract' | 'agent' | 'monitor' | 'interact' | 'catalog';

/**
 * reservation: credits set aside against a cap before work whose cost is not known yet;
 * charge: credits billed (converting a reservation when it names one);
 * release: a reservation given back unused.
 */
export type CreditEntry = 'reservation' | 'charge' | 'release';

/**
 * The credit ledger: append-only, one row per reservation, charge or release of any job kind,
 * idempotent on (team, idempotency key). A team's balance is, by definition,
 *   used     = Σ amount of its charges
 *   reserved = Σ amount of its reservations − Σ released
 * and team_credit_balances holds those two sums, kept in the statement that appends the row.
 * See packages/db/README.md (Credits) for the API and its guarantees.
 */
export const creditLedger = pgTable(
  'credit_ledger',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    /** No foreign key: jobs of different kinds live in different tables, and billing outlives a deleted (zero-data-retention) job. */
    jobId: uuid('job_id').notNull(),
    jobKind: text('job_kind').$type<BillingKind>().notNull(),
    entry: text('entry').$type<CreditEntry>().notNull(),
    /** Credits reserved, charged or released by this row (never negative). */
    amount: integer('amount').notNull(),
    /** A charge or release that settles a reservation: that reservation's idempotency key. */
    reservationKey: text('reservation_key'),
    /** Credits this row takes out of the reserved total: the settled reservation's amount, else 0. */
    released: integer('released').notNull().default(0),
    idempotencyKey: text('idempotency_key').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('credit_ledger_team_key_idx').on(t.teamId, t.idempotencyKey),
    index('credit_ledger_job_idx').on(t.jobId),
    // Finds a reservation's settlement (a reservation is settled at most once).
    index('credit_ledger_settles_idx').on(t.teamId, t.reservationKey).where(sql`${t.reservationKey} IS NOT NULL`),
    check('credit_ledger_amount_check', sql`${t.amount} >= 0 AND ${t.released} >= 0`),
    check('credit_ledger_entry_check', sql`${t.entry} IN ('reservation', 'charge', 'release')`),
  ],
);

/**
 * Per-team running balance of the ledger, so a limit check reads at most BALANCE_SHARDS rows.
 * Written only in the statements (or transactions) that append ledger rows; a team without
 * rows has used nothing. Its sums are spread over shards because every stored page of a crawl
 * charges its team: one row per team would make all of a team's page writes commit one after
 * another (each holds the row until its commit is flushed). Plain charges go to shards
 * 1…BALANCE_SHARDS−1 by a hash of their key; reservations and what settles them go to shard 0,
 * whose lock serialises reservations.
 */
export const BALANCE_SHARDS = 16;

export const teamCreditBalances = pgTable(
  'team_credit_balances',
  {
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    shard: smallint('shard').notNull(),
    used: bigint('used', { mode: 'number' }).notNull().default(0),
    reserved: bigint('reserved', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.shard] })],
);
