import { jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { teams } from './teams';

/**
 * Persistent browser storage of the scrape `profile` option (spec: Scrape request, `profile`):
 * a Playwright storageState (cookies + localStorage) per (team, name). The lease columns make
 * "one saving session at a time" hold across workers: a saving render takes the lease for its
 * budget; an expired lease (its worker died) is free again. Readers never look at the lease.
 */
export const browserProfiles = pgTable(
  'browser_profiles',
  {
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** null until a saving session has written state. */
    storageState: jsonb('storage_state'),
    /** The scrape job id holding the saving lease; null when free. */
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.name] })],
);
