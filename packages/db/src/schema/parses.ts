import { customType, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { jobs } from './jobs';

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

/**
 * A parse's extension of its job row (POST /v2/parse). The API stores the uploaded bytes here
 * (they are content, so they never cross Temporal); the worker's activity reads them, writes
 * `document` (or the job's error) and drops the upload, which is not kept once the parse ended.
 */
export const parseJobs = pgTable('parse_jobs', {
  id: uuid('id').primaryKey().references(() => jobs.id, { onDelete: 'cascade' }),
  /** File name and Content-Type of the multipart file part, as the client sent them. */
  filename: text('filename'),
  contentType: text('content_type'),
  /** null once the parse has completed or failed. */
  upload: bytea('upload'),
  uploadBytes: integer('upload_bytes').notNull(),
  document: jsonb('document'),
});
