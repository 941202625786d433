import type { CrawlRequest, ScrapeOptions, WebhookConfig } from '@wds/contracts';
import { loadCrawlJob, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';

/** What a crawl or batch job's row holds in `options` (written once by the API, never changed). */
export type StoredCrawlOptions = Omit<CrawlRequest, 'url' | 'scrapeOptions' | 'webhook'> & {
  scrapeOptions: ScrapeOptions;
  webhook?: WebhookConfig | null;
};
export type StoredBatchOptions = ScrapeOptions & { webhook?: WebhookConfig | null; maxConcurrency?: number | null };

export interface LoadedJob {
  id: string;
  teamId: string;
  /** The job keeps no page data (zero data retention): change tracking keeps hashes only. */
  zeroDataRetention: boolean;
  kind: 'crawl' | 'batch';
  url: string | null;
  scrape: ScrapeOptions;
  crawl: StoredCrawlOptions | null;
  webhook: WebhookConfig | null;
}

/** An extract job's frontier row: its pages are fetched by the frontier engine, but it keeps no scrape options of its own. */
interface ExtractRowMarker {
  id: string;
  kind: 'extract';
}

/** Options are immutable per job, so each worker keeps the recent ones in memory. */
const cache = new Map<string, LoadedJob | ExtractRowMarker>();
const CACHE_MAX = 500;

/** The options of a crawl or batch scrape job; an extract job's row has none, and asking for them is a bug. */
export async function loadJobOptions(db: Db, jobId: string): Promise<LoadedJob> {
  const job = await loadFrontierJob(db, jobId);
  if (job.kind === 'extract') throw new WdsError('INTERNAL', { message: `Job ${jobId} is an extract job: its frontier row keeps no crawl or batch options` });
  return job;
}

/** A crawl's options, or null for the other frontier jobs (batch scrapes and extracts: no site crawled). */
export async function loadCrawlOptions(db: Db, jobId: string): Promise<LoadedJob | null> {
  const job = await loadFrontierJob(db, jobId);
  return job.kind === 'crawl' ? job : null;
}

async function loadFrontierJob(db: Db, jobId: string): Promise<LoadedJob | ExtractRowMarker> {
  const hit = cache.get(jobId);
  if (hit) return hit;
  const row = await loadCrawlJob(db, jobId);
  if (!row) throw new WdsError('NOT_FOUND', { message: `Job ${jobId} not found` });
  const job = row.kind === 'extract' ? ({ id: jobId, kind: 'extract' } as const) : jobOf(jobId, row);
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(jobId, job);
  return job;
}

function jobOf(jobId: string, row: NonNullable<Awaited<ReturnType<typeof loadCrawlJob>>>): LoadedJob {
  const opts = row.options as StoredCrawlOptions | StoredBatchOptions;
  const stored = row.kind === 'crawl' ? (opts as StoredCrawlOptions).scrapeOptions : (opts as StoredBatchOptions);
  // A zero-data-retention job (its top-level flag) scrapes every page as a ZDR scrape: no cache
  // entry, URLs kept out of logs and failures, billed as ZDR.
  const scrape = row.zeroDataRetention && !stored.zeroDataRetention ? { ...stored, zeroDataRetention: true } : stored;
  return row.kind === 'crawl'
    ? { id: jobId, teamId: row.teamId, zeroDataRetention: row.zeroDataRetention, kind: 'crawl', url: row.url, scrape, crawl: opts as StoredCrawlOptions, webhook: opts.webhook ?? null }
    : { id: jobId, teamId: row.teamId, zeroDataRetention: row.zeroDataRetention, kind: 'batch', url: null, scrape, crawl: null, webhook: opts.webhook ?? null };
}
