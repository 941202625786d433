import { ConfigError, envInt, envStr, exitOnConfigError, loadEnv, z } from '@wds/config';
import { commonEnvShape } from '@wds/config/common';

export function loadApiEnv(source: Record<string, string | undefined> = process.env) {
  try {
    const env = loadEnv(
      {
        ...commonEnvShape,
        DATABASE_URL: z.string({ error: 'is required (postgres://...)' }).url('must be a postgres:// URL'),
        TEMPORAL_ADDRESS: envStr('127.0.0.1:7233'),
        PORT: envInt(3002, 0, 65535),
        HOST: envStr('0.0.0.0'),
        /** When set, this key is created for the default team at start, so scripts can know it. */
        WDS_API_KEY: z.string().min(8, 'must be at least 8 characters').max(200).optional(),
        WDS_DEFAULT_TEAM: envStr('default'),
        /** Request bodies above this many bytes get 413 Payload Too Large. */
        WDS_MAX_REQUEST_BYTES: envInt(10 * 1024 * 1024, 1024),
        /** Files uploaded to POST /v2/parse above this many bytes get 413 Payload Too Large. */
        WDS_MAX_UPLOAD_BYTES: envInt(50 * 1024 * 1024, 1024),
        /** Pages a crawl fetches at once when the request sets no maxConcurrency. */
        WDS_CRAWL_CONCURRENCY: envInt(20, 1, 1000),
        /** Batch activities one crawl workflow run starts before continuing as new (bounds its history). */
        WDS_CRAWL_BATCHES_PER_RUN: envInt(1000, 1, 100_000),
        /** Size bound of one page of crawl/batch documents; beyond it the response carries `next`. */
        WDS_STATUS_PAGE_BYTES: envInt(10 * 1024 * 1024, 1024),
        /** A scrape over its team's concurrency limit waits this long for a slot, then gets 429. */
        WDS_CONCURRENCY_QUEUE_MS: envInt(30_000, 0, 600_000),
        /**
         * Default limits of every team (a team_limits row overrides them field by field); 0 = none.
         * Requests per minute per team by endpoint class, then scrapes running at once per team.
         */
        WDS_RATE_LIMIT_SCRAPE: envInt(600, 0),
        WDS_RATE_LIMIT_CRAWL: envInt(60, 0),
        WDS_RATE_LIMIT_BATCH: envInt(60, 0),
        WDS_RATE_LIMIT_MAP: envInt(300, 0),
        WDS_RATE_LIMIT_PARSE: envInt(120, 0),
        WDS_RATE_LIMIT_STATUS: envInt(6_000, 0),
        WDS_RATE_LIMIT_OTHER: envInt(1_200, 0),
        WDS_MAX_CONCURRENT_SCRAPES: envInt(100, 0),
        /** Largest crawl `limit` accepted (400 above; an omitted limit, 10,000, is lowered to it). */
        WDS_MAX_CRAWL_LIMIT: envInt(100_000, 1, 1_000_000),
        /** Pages one /v2/extract may fetch and read, named and wildcard-expanded together (400 above for named URLs). */
        WDS_EXTRACT_MAX_PAGES: envInt(100, 1, 10_000),
        /** Time the model steps of one extract may take; pages not read by then are left out (partial data, warning). */
        WDS_EXTRACT_TIMEOUT_MS: envInt(15 * 60_000, 10_000, 24 * 3_600_000),
        /** Pages one extract fetches at once. */
        WDS_EXTRACT_CONCURRENCY: envInt(10, 1, 1000),
        /** Time turning a crawl `prompt` (and POST /v2/crawl/params-preview) into options may take, retries included. */
        WDS_CRAWL_PROMPT_TIMEOUT_MS: envInt(60_000, 5_000, 600_000),
        /** WebSocket watchers open at once per API key, per API process (429 above); 0 = no limit. */
        WDS_WS_CONNECTIONS_PER_KEY: envInt(50, 0),
        /**
         * WebSocket backpressure: a watcher's stream holds back while more than this many bytes are
         * unsent to it, and a watcher that leaves it so for WDS_WS_STALL_MS is disconnected.
         */
        WDS_WS_MAX_BUFFERED_BYTES: envInt(4 * 1024 * 1024, 1024),
        WDS_WS_STALL_MS: envInt(30_000, 100, 3_600_000),
        /**
         * Where a single scrape runs: `direct` through Postgres to a fetch worker (no workflow unless the
         * page needs the browser or a model), or the scrape workflow with its fetch as an activity on
         * wds-fetch (`queue`) or a local activity of the control worker (`local`).
         */
        WDS_SCRAPE_FETCH: z.enum(['direct', 'queue', 'local']).default('direct'),
        /** Hours after a scrape during which POST /v2/scrape/{id}/interact may replay it (later: 410). */
        WDS_INTERACT_WINDOW_HOURS: envInt(24, 1, 24 * 365),
        /** Tests only: check every response against the OpenAPI document and append mismatches to this file. */
        WDS_RESPONSE_CHECK_FILE: z.string().min(1).optional(),
      },
      source,
    );
    if ((env.WDS_SEARCH_PROVIDER === 'searxng' || env.WDS_SEARCH_PROVIDER === 'both') && !env.SEARXNG_ENDPOINT) {
      throw new ConfigError('WDS_SEARCH_PROVIDER', `is ${env.WDS_SEARCH_PROVIDER} but SEARXNG_ENDPOINT is not set`);
    }
    return env;
  } catch (e) {
    return exitOnConfigError(e);
  }
}
export type ApiEnv = ReturnType<typeof loadApiEnv>;
