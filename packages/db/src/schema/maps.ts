import { jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { teams } from './teams';

/** One row per map request; the (possibly 100k-entry) link list stays here, never in Temporal. */
export const mapJobs = pgTable('map_jobs', {
  id: uuid('id').primaryKey(),
  teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
  options: jsonb('options').notNull(),
  status: text('status').$type<'pending' | 'completed' | 'failed'>().notNull().default('pending'),
  links: jsonb('links'),
  error: jsonb('error'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  completedAt: timestamp('completed_at', { withTimezone: true }),
});
