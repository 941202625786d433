import { WdsError } from '@wds/errors';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Firecrawl's one sentence for a malformed id on every job route (scrape, interact, crawl, batch, extract, agent). */
export const INVALID_JOB_ID = 'Invalid job ID format. Job ID must be a valid UUID.';

/** The path's job id, or 400 before anything is looked up. */
export function checkJobId(id: string): string {
  if (!UUID.test(id)) throw new WdsError('BAD_REQUEST', { message: INVALID_JOB_ID });
  return id;
}
