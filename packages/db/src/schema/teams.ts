import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * Team-level switches an operator turns on (spec: zero data retention, catalog, threat
 * protection), with `npm run keys -- flags` (setTeamFlags). Absent = off.
 */
export const TEAM_FLAGS = ['zeroDataRetention', 'catalog', 'threatProtection'] as const;
export type TeamFlag = (typeof TEAM_FLAGS)[number];
export type TeamFlags = Partial<Record<TeamFlag, boolean>>;

export const teams = pgTable('teams', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull().unique(),
  flags: jsonb('flags').$type<TeamFlags>().notNull().default(sql`'{}'::jsonb`),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    /** sha256 of the key; the key itself is never stored. */
    keyHash: text('key_hash').notNull().unique(),
    /** First characters, so an operator can tell keys apart in listings. */
    keyPrefix: text('key_prefix').notNull(),
    name: text('name'),
    /** null = every scope. */
    scopes: text('scopes').array(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('api_keys_team_idx').on(t.teamId)],
);
