import { sql } from 'drizzle-orm';
import { customType, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { teams } from './teams';

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

/**
 * One row per POST /v2/parse. The API stores the uploaded bytes here (they are content, so
 * they never cross Temporal); the worker's activity reads them, writes `document` (or
 * `error`) and drops the upload, which is not kept once the parse has ended.
 */
export const parseJobs = pgTable(
  'parse_jobs',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    /** File name and Content-Type of the multipart file part, as the client sent them. */
    filename: text('filename'),
    contentType: text('content_type'),
    /** null once the parse has completed or failed. */
    upload: bytea('upload'),
    uploadBytes: integer('upload_bytes').notNull(),
    options: jsonb('options').notNull(),
    status: text('status').$type<'pending' | 'completed' | 'failed'>().notNull().default('pending'),
    document: jsonb('document'),
    error: jsonb('error'),
    creditsUsed: integer('credits_used').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [
    index('parse_jobs_team_created_idx').on(t.teamId, t.createdAt),
    // Zero-data-retention parses whose API died before deleting them: found by the retention sweep.
    index('parse_jobs_zdr_created_idx').on(t.createdAt).where(sql`options ->> 'zeroDataRetention' = 'true'`),
  ],
);
