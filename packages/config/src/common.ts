import { envBool, envInt, envLogLevel, envStr, envUrl, z } from './index';

/**
 * Settings every process understands. Defaults are the embedded single-machine setup;
 * README documents each one.
 */
export const commonEnvShape = {
  /** External Postgres; when unset `npm start` boots an embedded one. */
  DATABASE_URL: envUrl(),
  /** External Temporal frontend host:port; when unset `npm start` boots the dev server. */
  TEMPORAL_ADDRESS: envStr(),
  TEMPORAL_NAMESPACE: envStr('default'),
  TEMPORAL_CLI_PATH: envStr(),
  WDS_DATA_DIR: envStr('.wds'),
  /** Outbound fetches to private/loopback/link-local targets are refused unless this is true. */
  WDS_ALLOW_PRIVATE_NETWORK: envBool(false),
  WDS_MAX_BODY_BYTES: envInt(20 * 1024 * 1024, 1024),
  CHROMIUM_PATH: envStr(),
  /** trace, debug, info, warn, error, fatal or silent: every process logs JSON lines at or above it. */
  LOG_LEVEL: envLogLevel('info'),
  /**
   * SIGTERM drain bound: the API lets in-flight requests finish for this long, a worker its
   * in-flight activities (then cancels them, so Temporal retries them on another worker).
   */
  WDS_SHUTDOWN_GRACE_MS: envInt(10_000, 0, 600_000),
  /**
   * Threads converting HTML to formats: workers for every scraped page, the API for cache hits.
   * 0 = one per core, -1 = none (converted on the main thread).
   */
  WDS_TRANSFORM_THREADS: envInt(0, -1, 64),
  /**
   * The API's address as clients reach it: `url`/`next` links, and the base of file links that
   * workers sign (screenshots, action PDFs). Unset: the API uses the request's Host; workers
   * use http://localhost:3002 (`npm start` passes the API's real address to its worker).
   */
  WDS_PUBLIC_URL: envUrl(),
  /** Where stored files (screenshots, PDFs) live; default `$WDS_DATA_DIR/files`. Shared by API and browser workers. */
  WDS_FILES_DIR: envStr(),
  /** HMAC key of file links; default: generated once into `$WDS_DATA_DIR/file-signing-secret`. API and workers must agree. */
  WDS_FILE_SIGNING_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Lifetime of file links in seconds (spec: screenshots expire after 24 hours). */
  WDS_FILE_URL_TTL_SECONDS: envInt(86_400, 1, 365 * 86_400),
  /** Raw queue list; the worker validates it (worker env.ts), `npm start` passes it on or picks its own default. */
  WDS_WORKER_QUEUES: envStr(),
};
