import { ConfigError, envInt, envStr, exitOnConfigError, loadEnv, z } from '@wds/config';
import { commonEnvShape } from '@wds/config/common';
import { DEFAULT_SCRAPE_DISPATCH, SCRAPE_DISPATCHES } from '@wds/workflows/scrape';

/** The API's settings (`npm run api`); docs/configuration.md is generated from this shape. */
export const apiEnvShape = {
  ...commonEnvShape,
  DATABASE_URL: z.string({ error: 'is required (postgres://...)' }).url('must be a postgres:// URL'),
  TEMPORAL_ADDRESS: envStr('127.0.0.1:7233'),
  // ---- Listening and keys ----
  /** The API's port (`0` picks a free one). */
  PORT: envInt(3002, 0, 65535),
  /** The API's bind address. */
  HOST: envStr('0.0.0.0'),
  /**
   * When set, this key is created for `WDS_DEFAULT_TEAM` at start, so scripts can know it. Otherwise
   * `npm start` generates one once and keeps it in `$WDS_DATA_DIR/bootstrap-api-key`; on a fleet create
   * keys with `npm run keys`.
   */
  WDS_API_KEY: z.string().min(8, 'must be at least 8 characters').max(200).optional(),
  /** The team `WDS_API_KEY` is created for (made when missing). */
  WDS_DEFAULT_TEAM: envStr('default'),
  // ---- Request limits ----
  /** Request bodies above this many bytes get 413 Payload Too Large. */
  WDS_MAX_REQUEST_BYTES: envInt(10 * 1024 * 1024, 1024),
  /** Files uploaded to `POST /v2/parse` above this many bytes get 413; an upload is kept in Postgres only until it is parsed. */
  WDS_MAX_UPLOAD_BYTES: envInt(50 * 1024 * 1024, 1024),
  // ---- Crawls and batches ----
  /** Pages a crawl or batch fetches at once when the request sets no `maxConcurrency`. */
  WDS_CRAWL_CONCURRENCY: envInt(20, 1, 1000),
  /**
   * Batch activities one crawl or batch workflow run starts before it continues as new: bounds every
   * run's history (a 100k-page crawl: 2 runs, at most about 4,100 events).
   */
  WDS_CRAWL_BATCHES_PER_RUN: envInt(1000, 1, 100_000),
  /** Size bound of one page of crawl/batch documents in a status answer; beyond it the answer carries `next`. */
  WDS_STATUS_PAGE_BYTES: envInt(10 * 1024 * 1024, 1024),
  // ---- Team limits (defaults; a team_limits row overrides them field by field; 0 = no limit) ----
  /** The longest a scrape over its team's concurrency limit waits for a slot before 429 `Concurrency limit reached`. */
  WDS_CONCURRENCY_QUEUE_MS: envInt(30_000, 0, 600_000),
  /**
   * Requests per minute per team to `POST /v2/scrape` (and `POST /v2/search`), counted in Postgres across
   * API processes; beyond, 429 with `Retry-After`. `0`: no limit.
   */
  WDS_RATE_LIMIT_SCRAPE: envInt(600, 0),
  /** Requests per minute per team to `POST /v2/crawl` (and `POST /v2/extract`); `0`: no limit. */
  WDS_RATE_LIMIT_CRAWL: envInt(60, 0),
  /** Requests per minute per team to `POST /v2/batch/scrape`; `0`: no limit. */
  WDS_RATE_LIMIT_BATCH: envInt(60, 0),
  /** Requests per minute per team to `POST /v2/map`; `0`: no limit. */
  WDS_RATE_LIMIT_MAP: envInt(300, 0),
  /** Requests per minute per team to `POST /v2/parse`; `0`: no limit. */
  WDS_RATE_LIMIT_PARSE: envInt(120, 0),
  /** Requests per minute per team to `GET` routes of one resource by id (a job's status, its errors, a monitor, …); `0`: no limit. */
  WDS_RATE_LIMIT_STATUS: envInt(6_000, 0),
  /** Requests per minute per team to every other route; `0`: no limit. */
  WDS_RATE_LIMIT_OTHER: envInt(1_200, 0),
  /** Scrapes running at once per team (beyond, a scrape waits up to `WDS_CONCURRENCY_QUEUE_MS`); `0`: no limit. */
  WDS_MAX_CONCURRENT_SCRAPES: envInt(100, 0),
  /**
   * Monitors a team may have (not deleted); one more is `403 MONITOR_LIMIT_REACHED`. A team's
   * `team_limits.max_monitors` overrides it; `0`: no limit.
   */
  WDS_MAX_MONITORS: envInt(50, 0),
  /**
   * The ceiling of an agent job's `maxCredits` (above it `400` naming `maxCredits`); a job that sets none
   * gets Firecrawl's default 2,500, or this ceiling when it is lower. A team's `team_limits.agent_max_credits`
   * overrides it; `0`: no ceiling.
   */
  WDS_AGENT_MAX_CREDITS: envInt(2_500, 0),
  /**
   * Minutes one interact session of a team may live (Firecrawl's session TTL default) before it closes and its
   * scrape answers `410 SESSION_EXPIRED`, never beyond `WDS_INTERACT_MAX_SESSION_SECONDS`. A team's
   * `team_limits.interact_session_minutes` overrides it; `0`: only that ceiling.
   */
  WDS_INTERACT_SESSION_MINUTES: envInt(10, 0),
  /** Largest crawl `limit` accepted (400 naming `limit` above); an omitted limit (10,000) is lowered to it. */
  WDS_MAX_CRAWL_LIMIT: envInt(100_000, 1, 1_000_000),
  // ---- Extract and crawl prompts ----
  /**
   * Pages one `/v2/extract` may fetch and read, named and wildcard-expanded together (more named URLs:
   * 400; wildcard matches beyond it are left out, with a `warning`).
   */
  WDS_EXTRACT_MAX_PAGES: envInt(100, 1, 10_000),
  /**
   * Time the model steps of one extract may take (a provider that is down is retried until then); pages
   * not read by then are left out: partial `data` with a `warning`.
   */
  WDS_EXTRACT_TIMEOUT_MS: envInt(15 * 60_000, 10_000, 24 * 3_600_000),
  /** Pages one extract fetches at once. */
  WDS_EXTRACT_CONCURRENCY: envInt(10, 1, 1000),
  /** Time turning a crawl `prompt` (and `POST /v2/crawl/params-preview`) into options may take, provider retries included (408 after). */
  WDS_CRAWL_PROMPT_TIMEOUT_MS: envInt(60_000, 5_000, 600_000),
  // ---- WebSockets ----
  /** Job WebSockets open at once per API key, per API process (429 beyond); `0`: no limit. */
  WDS_WS_CONNECTIONS_PER_KEY: envInt(50, 0),
  /**
   * WebSocket backpressure: a watcher's stream holds back while more than this many bytes are unsent to
   * it. Bounds the API's memory per watcher.
   */
  WDS_WS_MAX_BUFFERED_BYTES: envInt(4 * 1024 * 1024, 1024),
  /** A watcher that leaves more than `WDS_WS_MAX_BUFFERED_BYTES` unread for this long is disconnected (the job and other watchers go on). */
  WDS_WS_STALL_MS: envInt(30_000, 100, 3_600_000),
  // ---- Scrapes and interact ----
  /**
   * How `POST /v2/scrape` runs a scrape. `direct`: the job row is dispatched through Postgres (an INSERT
   * with a NOTIFY) to a fetch worker (any worker serving `wds-fetch`, with `WDS_FETCH_CONCURRENCY` slots
   * for them), which takes it with a lease renewed while it works, runs the HTTP engine and stores the
   * result; no workflow, unless the request needs the browser or the media step from the start, asks for
   * model-made formats (the scrape workflow takes over after the fetch, for the model step on `wds-llm`),
   * or the page turns out to be script-rendered (the workflow takes over at the render). A worker that
   * dies stops renewing: after the 10 s lease another worker retries the scrape (3 attempts, as the
   * workflow's retry policy). `queue`: every scrape is a workflow whose fetch is an activity on
   * `wds-fetch`; `local`: a local activity of the control worker that runs the workflow. Measurements
   * behind the default: `bench/README.md` (scrape). The values and default are the scrape contract's
   * (SCRAPE_DISPATCHES in @wds/workflows/scrape), the one place that decides them.
   * @values one of `direct`, `queue`, `local`
   */
  WDS_SCRAPE_FETCH: z.enum(SCRAPE_DISPATCHES).default(DEFAULT_SCRAPE_DISPATCH),
  /** Hours after a scrape during which `POST /v2/scrape/{id}/interact` may replay it; later 410 `SCRAPE_EXPIRED`. */
  WDS_INTERACT_WINDOW_HOURS: envInt(24, 1, 24 * 365),
  /**
   * An interact session ends this long after it opened, however often it is called (a durable
   * workflow timer; a call running then finishes first). Later calls on its scrape answer 410
   * `SESSION_EXPIRED`: scrape the page again for a new session.
   */
  WDS_INTERACT_MAX_SESSION_SECONDS: envInt(3_600, 1, 7 * 86_400),
  // ---- Tests ----
  /** Tests only (the harness sets it): check every response and WebSocket message against the OpenAPI document and append mismatches to this file. */
  WDS_RESPONSE_CHECK_FILE: z.string().min(1).optional(),
};

export function loadApiEnv(source: Record<string, string | undefined> = process.env) {
  try {
    const env = loadEnv(apiEnvShape, source);
    if ((env.WDS_SEARCH_PROVIDER === 'searxng' || env.WDS_SEARCH_PROVIDER === 'both') && !env.SEARXNG_ENDPOINT) {
      throw new ConfigError('WDS_SEARCH_PROVIDER', `is ${env.WDS_SEARCH_PROVIDER} but SEARXNG_ENDPOINT is not set`);
    }
    return env;
  } catch (e) {
    return exitOnConfigError(e);
  }
}
export type ApiEnv = ReturnType<typeof loadApiEnv>;
