import { and, eq, sql } from 'drizzle-orm';
import type { Db } from './client';
import { chargeCtes } from './ledger';
import { parseJobs } from './schema/index';
import { storable, storableText } from './text';

export interface NewParseJob {
  id: string;
  teamId: string;
  filename: string | null;
  contentType: string | null;
  upload: Buffer;
  options: unknown;
}

export async function insertParseJob(db: Db, row: NewParseJob) {
  // The file name and type come from the upload's multipart headers, not from validated JSON.
  await db.insert(parseJobs).values({ ...row, filename: row.filename === null ? null : storableText(row.filename), contentType: row.contentType === null ? null : storableText(row.contentType), uploadBytes: row.upload.length });
}

/** The job with its upload (the activity's read). */
export async function loadParseJob(db: Db, id: string) {
  const [row] = await db.select().from(parseJobs).where(eq(parseJobs.id, id));
  return row ?? null;
}

/** The outcome only, team-scoped (the API's read; the upload bytes stay in Postgres). */
export async function loadParseResult(db: Db, teamId: string, id: string) {
  const [row] = await db
    .select({ status: parseJobs.status, document: parseJobs.document, error: parseJobs.error, creditsUsed: parseJobs.creditsUsed })
    .from(parseJobs)
    .where(and(eq(parseJobs.id, id), eq(parseJobs.teamId, teamId)));
  return row ?? null;
}

/**
 * Idempotent: a retried activity rewrites the same row, and its credits are charged to the
 * ledger once (key parse:<id>), in the same statement. The upload is dropped with it.
 */
export async function completeParseJob(db: Db, id: string, document: unknown, creditsUsed: number) {
  await db.execute(sql`
    WITH done AS (
      UPDATE ${parseJobs} SET status = 'completed', document = ${JSON.stringify(storable(document))}::jsonb, credits_used = ${creditsUsed}, upload = NULL, completed_at = now(), error = NULL
      WHERE id = ${id} RETURNING id, team_id
    ), ${chargeCtes(sql`SELECT team_id, id, 'parse', ${creditsUsed}::int, ${`parse:${id}`}::text FROM done`)}
    SELECT 1`);
}

export async function failParseJob(db: Db, id: string, error: unknown) {
  await db
    .update(parseJobs)
    .set({ status: 'failed', error: storable(error), upload: null, completedAt: new Date() })
    .where(and(eq(parseJobs.id, id), eq(parseJobs.status, 'pending')));
}

/** Zero data retention: the row goes once its document has been handed back. */
export async function deleteParseJob(db: Db, id: string) {
  await db.delete(parseJobs).where(eq(parseJobs.id, id));
}
