import { sql } from 'drizzle-orm';
import { parseJob } from '@wds/workflows/job-specs';
import type { FailureRecord } from '@wds/workflows/common';
import type { JobStatus } from '@wds/workflows/jobs';
import type { Db } from './client';
import { deleteJob, endJobSql, insertJobSql } from './jobs/index';
import { ZDR_GRACE_MS } from './jobs/retention';
import { chargeCtes } from './ledger';
import { storable, storableText } from './text';

export interface NewParseJob {
  id: string;
  teamId: string;
  filename: string | null;
  contentType: string | null;
  upload: Buffer;
  options: { timeout: number; zeroDataRetention?: boolean } & Record<string, unknown>;
}

/**
 * The job row (running: the API starts its workflow next) and the upload, in one statement. A
 * zero-data-retention parse's row expires when its request is over (the API deletes it once it
 * answered; the expiry path takes what an API that died left).
 */
export async function insertParseJob(db: Db, row: NewParseJob) {
  const zdr = row.options.zeroDataRetention === true;
  const job = insertJobSql({
    id: row.id, teamId: row.teamId, kind: 'parse', status: 'running', options: row.options, workflowId: parseJob.workflowId(row.id),
    zeroDataRetention: zdr, expiresInMs: zdr ? row.options.timeout + ZDR_GRACE_MS : null,
  });
  // The file name and type come from the upload's multipart headers, not from validated JSON.
  const filename = row.filename === null ? null : storableText(row.filename);
  const contentType = row.contentType === null ? null : storableText(row.contentType);
  await db.execute(sql`
    WITH j AS (${job})
    INSERT INTO parse_jobs (id, filename, content_type, upload, upload_bytes) SELECT id, ${filename}, ${contentType}, ${row.upload}, ${row.upload.length} FROM j`);
}

export type ParseJobView = {
  id: string;
  teamId: string;
  status: JobStatus;
  creditsUsed: number;
  options: unknown;
  filename: string | null;
  contentType: string | null;
  upload: Buffer | null;
};

/** The job with its upload (the activity's read). */
export async function loadParseJob(db: Db, id: string): Promise<ParseJobView | null> {
  const r = await db.execute<ParseJobView>(sql`
    SELECT j.id, j.team_id AS "teamId", j.status, j.credits_used AS "creditsUsed", j.options, p.filename, p.content_type AS "contentType", p.upload
    FROM jobs j JOIN parse_jobs p ON p.id = j.id WHERE j.id = ${id}`);
  return r.rows[0] ?? null;
}

export type ParseResult = {
  status: JobStatus;
  document: unknown;
  error: FailureRecord | null;
  creditsUsed: number;
};

/** The outcome only, team-scoped (the API's read; the upload bytes stay in Postgres). */
export async function loadParseResult(db: Db, teamId: string, id: string): Promise<ParseResult | null> {
  const r = await db.execute<ParseResult>(sql`
    SELECT j.status, p.document, j.error, j.credits_used AS "creditsUsed"
    FROM jobs j JOIN parse_jobs p ON p.id = j.id WHERE j.id = ${id} AND j.team_id = ${teamId}`);
  return r.rows[0] ?? null;
}

/**
 * The document, the end and the charge in one statement; the upload is dropped with it. A
 * retried activity finding the job ended changes and charges nothing (key parse:<id>).
 */
export async function completeParseJob(db: Db, id: string, document: unknown, creditsUsed: number) {
  await db.execute(sql`
    WITH done AS (${endJobSql(id, { status: 'completed', creditsUsed, keptMs: parseJob.resultsKeptMs })}
    ), doc AS (
      UPDATE parse_jobs SET document = ${JSON.stringify(storable(document))}::jsonb, upload = NULL WHERE id IN (SELECT id FROM done)
    ), ${chargeCtes(sql`SELECT team_id, id, 'parse', ${creditsUsed}::int, ${`parse:${id}`}::text FROM done`)}
    SELECT 1`);
}

export async function failParseJob(db: Db, id: string, error: FailureRecord) {
  await db.execute(sql`
    WITH j AS (${endJobSql(id, { status: 'failed', error, keptMs: parseJob.resultsKeptMs })})
    UPDATE parse_jobs SET upload = NULL WHERE id IN (SELECT id FROM j)`);
}

/** Zero data retention: the job goes once its document has been handed back. */
export async function deleteParseJob(db: Db, id: string) {
  await deleteJob(db, id);
}
