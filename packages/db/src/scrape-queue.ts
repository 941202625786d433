import { sql } from 'drizzle-orm';
import type { Db } from './client';
import { scrapeJobs } from './schema/index';

/**
 * Direct dispatch of single scrapes (WDS_SCRAPE_FETCH=direct): the scrape_jobs row is the queue
 * entry. The API inserts it and announces its id on SCRAPE_QUEUE_CHANNEL in one statement; fetch
 * workers LISTEN, take it with a lease (`claimDirectScrape`), renew the lease while they work, and
 * complete or fail it (completeScrapeJob / failScrapeJob, which announce it to the waiting API on
 * SCRAPE_DONE_CHANNEL). A worker that dies stops renewing: once the lease has passed, any fetch
 * worker takes the row over (they sweep for such rows), `attempts` counting each take.
 */
export const SCRAPE_QUEUE_CHANNEL = 'wds_scrape_queue';

/** Inserts a directly dispatched scrape job and announces it to fetch workers, in one statement. */
export async function enqueueDirectScrape(db: Db, row: { id: string; teamId: string; url: string | null; options: unknown }): Promise<void> {
  await db.execute(sql`
    WITH job AS (
      INSERT INTO ${scrapeJobs} (id, team_id, url, options, dispatch)
      VALUES (${row.id}::uuid, ${row.teamId}::uuid, ${row.url}::text, ${JSON.stringify(row.options)}::jsonb, 'direct')
      RETURNING id
    )
    SELECT pg_notify(${SCRAPE_QUEUE_CHANNEL}, job.id::text) FROM job`);
}

export interface ClaimedScrape {
  id: string;
  options: unknown;
  /** Takes of this job so far, this one included. */
  attempts: number;
  createdAt: Date;
}

/**
 * Takes a direct scrape for `leaseMs`: the one announced (`id`), else the oldest one nobody holds
 * (never taken: its announcement was missed; lease passed: its worker died). Null when there is
 * none, or another worker was first. SKIP LOCKED: workers never wait for each other here.
 */
export async function claimDirectScrape(db: Db, owner: string, leaseMs: number, id?: string): Promise<ClaimedScrape | null> {
  const r = await db.execute<{ id: string; options: unknown; attempts: number; created_at: Date | string }>(sql`
    UPDATE ${scrapeJobs} SET lease_owner = ${owner}, lease_until = now() + ${leaseMs} * interval '1 millisecond', attempts = attempts + 1
    WHERE id = (
      SELECT id FROM ${scrapeJobs}
      WHERE status = 'pending' AND dispatch = 'direct' AND (lease_until IS NULL OR lease_until < now())
        ${id ? sql`AND id = ${id}::uuid` : sql``}
      ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING id, options, attempts, created_at`);
  const row = r.rows[0];
  return row ? { id: row.id, options: row.options, attempts: Number(row.attempts), createdAt: new Date(row.created_at) } : null;
}

/** Extends the leases a worker holds on its running scrapes (one statement for all of them). */
export async function renewDirectLeases(db: Db, owner: string, ids: string[], leaseMs: number): Promise<void> {
  if (!ids.length) return;
  await db.execute(sql`
    UPDATE ${scrapeJobs} SET lease_until = now() + ${leaseMs} * interval '1 millisecond'
    WHERE id = ANY(${sql.param(ids)}::uuid[]) AND lease_owner = ${owner} AND status = 'pending'`);
}

/** Counts one more attempt of a scrape its worker retries itself (a retryable failure). */
export async function countDirectAttempt(db: Db, id: string, owner: string): Promise<void> {
  await db.execute(sql`UPDATE ${scrapeJobs} SET attempts = attempts + 1 WHERE id = ${id}::uuid AND lease_owner = ${owner}`);
}

/** Gives a scrape back at once (a draining worker past its grace time) and announces it to the others. */
export async function releaseDirectScrape(db: Db, id: string, owner: string): Promise<void> {
  await db.execute(sql`
    WITH job AS (
      UPDATE ${scrapeJobs} SET lease_until = NULL WHERE id = ${id}::uuid AND lease_owner = ${owner} AND status = 'pending' RETURNING id
    )
    SELECT pg_notify(${SCRAPE_QUEUE_CHANNEL}, job.id::text) FROM job`);
}

/** The rest of a direct scrape goes to a Temporal workflow (a render): no worker sweeps it any more. */
export async function handOffDirectScrape(db: Db, id: string, owner: string): Promise<void> {
  await db.execute(sql`UPDATE ${scrapeJobs} SET dispatch = NULL, lease_until = NULL WHERE id = ${id}::uuid AND lease_owner = ${owner}`);
}
