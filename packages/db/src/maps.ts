import { like, or, sql } from 'drizzle-orm';
import { mapJob } from '@wds/workflows/job-specs';
import type { FailureRecord } from '@wds/workflows/common';
import type { JobStatus } from '@wds/workflows/jobs';
import type { Db } from './client';
import { endJobSql, insertJobSql } from './jobs/index';
import { pageCache } from './schema/index';
import { storable } from './text';

/** A map job: its job row (running: the API starts its workflow next) and its extension, in one statement. */
export async function insertMapJob(db: Db, row: { id: string; teamId: string; options: unknown }) {
  const job = insertJobSql({ id: row.id, teamId: row.teamId, kind: 'map', status: 'running', options: row.options, workflowId: mapJob.workflowId(row.id) });
  await db.execute(sql`WITH j AS (${job}) INSERT INTO map_jobs (id) SELECT id FROM j`);
}

export type MapJobView = {
  id: string;
  teamId: string;
  status: JobStatus;
  options: unknown;
  links: unknown;
};

export async function loadMapJob(db: Db, id: string): Promise<MapJobView | null> {
  const r = await db.execute<MapJobView>(sql`
    SELECT j.id, j.team_id AS "teamId", j.status, j.options, m.links FROM jobs j JOIN map_jobs m ON m.id = j.id WHERE j.id = ${id}`);
  return r.rows[0] ?? null;
}

/** The links and the end, together; a retried activity finding the job ended changes nothing. */
export async function completeMapJob(db: Db, id: string, links: unknown) {
  await db.execute(sql`
    WITH j AS (${endJobSql(id, { status: 'completed', keptMs: mapJob.resultsKeptMs })})
    UPDATE map_jobs SET links = ${JSON.stringify(storable(links))}::jsonb WHERE id IN (SELECT id FROM j)`);
}

export async function failMapJob(db: Db, id: string, error: FailureRecord) {
  await db.execute(endJobSql(id, { status: 'failed', error, keptMs: mapJob.resultsKeptMs }));
}

/** URLs of a site already in the page cache (the service's own index of pages it has seen). */
export async function cachedUrlsOfHost(db: Db, origins: string[], limit: number): Promise<string[]> {
  if (!origins.length) return [];
  const rows = await db
    .select({ url: pageCache.url })
    .from(pageCache)
    .where(or(...origins.map((o) => like(pageCache.url, `${o.replace(/[%_\\]/g, (c) => `\\${c}`)}/%`))))
    .limit(limit);
  return rows.map((r) => r.url);
}
