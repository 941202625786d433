import { ConfigError, envBool, envInt, envStr, envUrl, exitOnConfigError, loadEnv, z } from '@wds/config';
import { commonEnvShape } from '@wds/config/common';
import { ALL_QUEUES, type TaskQueue } from '@wds/workflows/common';

const queuesVar = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (!v) return ['wds-control', 'wds-fetch', 'wds-llm'] as TaskQueue[];
    const list = v.split(',').map((s) => s.trim()).filter(Boolean);
    const bad = list.filter((q) => !(ALL_QUEUES as string[]).includes(q));
    if (bad.length || !list.length) {
      ctx.addIssue({ code: 'custom', message: `must be a comma-separated list of ${ALL_QUEUES.join(', ')}` });
      return z.NEVER;
    }
    return list as TaskQueue[];
  });

const launchArgsVar = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const t = v?.trim();
    if (!t) return [] as string[];
    if (!t.startsWith('[')) return t.split(/\s+/);
    try {
      const a: unknown = JSON.parse(t);
      if (Array.isArray(a) && a.every((x) => typeof x === 'string')) return a as string[];
    } catch {
      // reported below
    }
    ctx.addIssue({ code: 'custom', message: 'must be a JSON array of strings or whitespace-separated switches' });
    return z.NEVER;
  });

/** A worker's settings (`npm run worker`); docs/configuration.md is generated from this shape. */
export const workerEnvShape = {
  ...commonEnvShape,
  DATABASE_URL: z.string({ error: 'is required (postgres://...)' }).url('must be a postgres:// URL'),
  TEMPORAL_ADDRESS: envStr('127.0.0.1:7233'),
  /**
   * The worker's own default is `wds-control,wds-fetch,wds-llm`; an unknown queue name stops it.
   * @values comma-separated task queues
   */
  WDS_WORKER_QUEUES: queuesVar,
  // ---- Fetching ----
  /** Fetch activities (and directly dispatched scrapes) a worker runs at once: its `wds-fetch` slots. */
  WDS_FETCH_CONCURRENCY: envInt(50, 1, 1000),
  /**
   * Static DNS for a worker's fetches and renders, `name=ip,*.name=ip` (split-horizon networks, test
   * sites); browser workers pass it to Chromium as `--host-resolver-rules`.
   */
  WDS_HOST_OVERRIDES: envStr(),
  // ---- Politeness: one budget per origin for the whole deployment ----
  /**
   * Every request a worker makes to a site (HTTP fetches of scrapes, crawls, batches, maps, monitors, agent and extract
   * tools, robots.txt and sitemaps, media downloads; browser renders) takes a slot of its origin's budget, shared through
   * Postgres by every worker, job and team: the caps below, robots.txt `Crawl-delay` for crawls that respect robots, and
   * the backoff after 429/503. `false` turns all of it off (each job then limits only itself).
   */
  WDS_POLITENESS: envBool(true),
  /** Requests in flight at once to one origin (scheme://host:port) across the deployment; `0`: no cap. */
  WDS_ORIGIN_MAX_IN_FLIGHT: envInt(0, 0, 100_000),
  /** Least time between two request starts at one origin across the deployment (ms); `0`: none. */
  WDS_ORIGIN_MIN_INTERVAL_MS: envInt(0, 0, 3_600_000),
  /**
   * Per-origin overrides of the two above, a JSON object from an origin (`https://shop.example`), a host (`example.com`,
   * any scheme and port) or a domain with its subdomains (`*.example.org`) to `{"maxInFlight": n, "minIntervalMs": ms}`;
   * the most specific entry wins, fields it leaves out keep the defaults. Give every worker the same value.
   * @values JSON object
   */
  WDS_ORIGIN_LIMITS: envStr(),
  /** robots.txt `Crawl-delay` is honoured up to this (ms): a site asking for more gets this. */
  WDS_ORIGIN_MAX_CRAWL_DELAY_MS: envInt(30_000, 0, 3_600_000),
  /**
   * First backoff step after a 429 or 503 without `Retry-After` (or a burst of connection resets); each further step
   * doubles it, with ±50% jitter. `Retry-After` (seconds or a date) is honoured instead when the answer has it.
   */
  WDS_ORIGIN_BACKOFF_BASE_MS: envInt(1_000, 10, 3_600_000),
  /** No backoff window is longer than this, `Retry-After` included. */
  WDS_ORIGIN_BACKOFF_MAX_MS: envInt(300_000, 100, 86_400_000),
  /**
   * After a backoff window, starts at the origin are spaced by this, doubled per step left, and each success at least
   * this long after the last step removes one step (recovery step by step).
   */
  WDS_ORIGIN_RECOVERY_MS: envInt(500, 10, 600_000),
  /** How long a worker's slots outlive it: a SIGKILLed worker's in-flight slots come back after this (renewed a third as often). */
  WDS_ORIGIN_SLOT_LEASE_MS: envInt(15_000, 1_000, 600_000),
  // ---- Webhooks (delivered by workers serving wds-control) ----
  /** HMAC-SHA256 key of `X-Firecrawl-Signature: sha256=…` on webhook deliveries; unsigned when unset. */
  WDS_WEBHOOK_SECRET: envStr(),
  /**
   * Deadline of one webhook delivery attempt, connecting and the receiver's answer together. A receiver
   * that misses it is retried with exponential backoff (1 s, 2 s, 4 s … 5 min; given up after 8 attempts).
   * Every attempt is recorded in `webhook_attempts` (status code or error, duration).
   */
  WDS_WEBHOOK_TIMEOUT_MS: envInt(5_000, 100, 120_000),
  /**
   * Webhook deliveries in flight at once to one receiver origin (scheme://host:port), per worker: a
   * receiver that hangs holds at most this many delivery slots, and deliveries to other origins go on.
   * Events of one job are always delivered one at a time, in order.
   */
  WDS_WEBHOOK_CONCURRENCY_PER_ORIGIN: envInt(4, 1, 1_000),
  /** Webhook deliveries in flight at once per worker, all receivers together. */
  WDS_WEBHOOK_MAX_IN_FLIGHT: envInt(64, 1, 10_000),
  // ---- Browser workers (wds-browser) ----
  /**
   * Pages a browser worker renders at once (one Chromium process per worker); `0`: two per core. Its
   * `wds-browser` activity slots are half as many again: while one activity claims its page or stores its
   * document, another's render already holds the page (a few renders wait in the pool's queue, at most
   * about one render's time).
   */
  WDS_BROWSER_PAGES: envInt(0, 0, 256),
  /** Renders after which a browser worker replaces its Chromium process (bounds leaks). */
  WDS_BROWSER_RECYCLE_AFTER: envInt(200, 1, 1_000_000),
  /**
   * Extra Chromium switches: a JSON array (`'["--host-resolver-rules=MAP x.test 127.0.0.1"]'`) or
   * whitespace-separated switches.
   * @values JSON array of strings, or whitespace-separated switches
   */
  WDS_BROWSER_LAUNCH_ARGS: launchArgsVar,
  /**
   * Chromium's sandbox. `auto`: sandboxed unless the worker runs as root (Chromium refuses its sandbox to
   * root), falling back to `--no-sandbox` where the kernel or container forbids the user namespaces it
   * needs (Docker's default seccomp profile does); `on`: always (an error at start as root, a failed
   * launch where namespaces are forbidden); `off`: never. Whatever the setting, Chromium gets a minimal
   * environment (paths, fonts, locale, timezone), never the worker's variables. The trade-off:
   * `packages/browser/README.md`.
   */
  WDS_BROWSER_SANDBOX: z.enum(['auto', 'on', 'off']).default('auto'),
  /** Interact sessions one browser worker holds at once (their pages stay open between calls, outside the render slots); beyond it a new session is 503. */
  WDS_INTERACT_SESSIONS: envInt(8, 1, 1_000),
  /**
   * Of a browser worker's `WDS_INTERACT_SESSIONS`, how many one team may hold at once; beyond it 429 `INTERACT_SESSIONS_PER_TEAM` (other
   * teams keep their room). Must be below `WDS_INTERACT_SESSIONS` (when that is more than 1), so that no
   * team holds every session of a worker. `0`: half of `WDS_INTERACT_SESSIONS`, at least 1.
   */
  WDS_INTERACT_SESSIONS_PER_TEAM: envInt(0, 0, 1_000),
  /**
   * Rendered scrape pages a browser worker keeps (least recently used go first) so that a first
   * interaction continues from them instead of replaying the scrape; `0` keeps none.
   */
  WDS_INTERACT_PARKED_PAGES: envInt(4, 0, 1_000),
  // ---- Metrics ----
  /**
   * Port of the worker's `GET /metrics` (prom-client: jobs, scrape durations, crawl pages, cache,
   * credits, browser pool, process); `0` picks a free one (printed at start).
   */
  WDS_METRICS_PORT: envInt(9464, 0, 65535),
  /** Port of the Temporal SDK's own Prometheus exporter (task slots, schedule-to-start latencies, polls); `0` turns it off. */
  WDS_TEMPORAL_METRICS_PORT: envInt(9465, 0, 65535),
  /** Bind address of both metrics ports. */
  WDS_METRICS_HOST: envStr('0.0.0.0'),
  // ---- Background work of control workers (wds-control) ----
  /**
   * A crawl, batch or extract job still running this long after it was stored with no workflow running
   * it (the API died between storing and starting it, or its workflow was terminated) is failed. Keep it
   * above the API's 10 s start deadline.
   */
  WDS_STRANDED_JOB_GRACE_MS: envInt(30_000, 1_000, 3_600_000),
  /** How often control workers look for such stranded jobs. */
  WDS_STRANDED_JOB_SWEEP_MS: envInt(15_000, 100, 3_600_000),
  /**
   * Change tracking: a page version replaced by a newer one is deleted this many days after the newer one
   * appeared, with markdown no version references any more (control workers prune hourly).
   */
  WDS_CHANGE_TRACKING_RETENTION_DAYS: envInt(30, 1, 36_500),
  /** Change tracking: a page nobody scraped with the format for this many days is forgotten (its next scrape is `new`). */
  WDS_CHANGE_TRACKING_FORGET_DAYS: envInt(180, 1, 36_500),
  /**
   * Control workers index, in the background at start (batches of 200, a pause between them), the pages
   * stored before the own search index existed: completed scrapes and crawl, batch and extract pages, never
   * those of zero-data-retention or lockdown jobs; once, resumable and idempotent, shared by several
   * workers (when `WDS_SEARCH_INDEX` is on). `npm run search:backfill` does it in the foreground.
   */
  WDS_SEARCH_BACKFILL: envBool(true),
  /**
   * Zero data retention: how long an ended crawl's or batch scrape's results wait for their reader; read
   * to the last page they go at once, unread they are deleted after this.
   */
  WDS_ZDR_RESULT_TTL_MS: envInt(3_600_000, 1_000, 7 * 24 * 3_600_000),
  // ---- Media workers (wds-media: the audio and video formats) ----
  /** Media steps (downloads and ffmpeg) a worker runs at once: its `wds-media` slots. */
  WDS_MEDIA_CONCURRENCY: envInt(2, 1, 64),
  /** Largest media file downloaded (each) and produced; a bigger one is `null` with a warning. */
  WDS_MEDIA_MAX_BYTES: envInt(200 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024),
  /**
   * ffmpeg for `wds-media` (ffprobe is taken from beside it); unset: `ffmpeg` on PATH (`apt-get install
   * ffmpeg`). Without ffmpeg the worker says so and does not serve `wds-media`.
   */
  FFMPEG_PATH: envStr(),
  /**
   * yt-dlp for `wds-media`; unset: `yt-dlp` on PATH (`apt-get install yt-dlp`). Optional: without it the
   * worker serves `wds-media`, and pages that do not name their media get `null` with a warning.
   */
  YTDLP_PATH: envStr(),
  // ---- Model steps (wds-llm) ----
  /** Model steps a worker runs at once (its `wds-llm` slots); each waits on the provider. */
  WDS_LLM_CONCURRENCY: envInt(8, 1, 1000),
  /** Model steps started per minute across the deployment (the `wds-llm` task queue's rate, enforced by the Temporal server for every worker); `0`: unbounded. */
  WDS_LLM_REQUESTS_PER_MINUTE: envInt(0, 0, 1_000_000),
  /**
   * Model tokens per minute across the deployment, counted in Postgres (one row per minute): a model step
   * reserves its prompts' tokens and its output budgets before it runs and is corrected by the provider's
   * reported usage after; a step that would pass the cap waits for the next minute (a scrape's retry is
   * timed to the window's end; a crawl page is held back until then), never fails for it. A step larger
   * than the whole cap runs alone in an empty minute. `0`: unbounded.
   */
  WDS_LLM_TOKENS_PER_MINUTE: envInt(0, 0, 1_000_000_000),
  /**
   * How long the model step of a crawl or batch scrape page is retried through provider failures (429,
   * 5xx, timeouts), counted from its first such failure (time a page waits for its turn does not count),
   * before the page fails with the last error (a crawl has no `timeout` of its own).
   */
  WDS_LLM_PAGE_PATIENCE_MS: envInt(30 * 60_000, 1_000, 7 * 24 * 3_600_000),
};

export function loadWorkerEnv(source: Record<string, string | undefined> = process.env) {
  try {
    const env = loadEnv(workerEnvShape, source);
    const perTeam = env.WDS_INTERACT_SESSIONS_PER_TEAM || Math.max(1, Math.floor(env.WDS_INTERACT_SESSIONS / 2));
    if (env.WDS_INTERACT_SESSIONS > 1 && perTeam >= env.WDS_INTERACT_SESSIONS) {
      throw new ConfigError('WDS_INTERACT_SESSIONS_PER_TEAM', `must be below WDS_INTERACT_SESSIONS (${env.WDS_INTERACT_SESSIONS}): one team must not hold every session of a worker (got ${perTeam})`);
    }
    return { ...env, WDS_INTERACT_SESSIONS_PER_TEAM: perTeam };
  } catch (e) {
    return exitOnConfigError(e);
  }
}
export type WorkerEnv = ReturnType<typeof loadWorkerEnv>;
