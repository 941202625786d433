import { jsonb, pgTable, uuid } from 'drizzle-orm/pg-core';
import { jobs } from './jobs';

/** A map's extension of its job row: the (possibly 100k-entry) link list stays here, never in Temporal. */
export const mapJobs = pgTable('map_jobs', {
  id: uuid('id').primaryKey().references(() => jobs.id, { onDelete: 'cascade' }),
  links: jsonb('links'),
});
