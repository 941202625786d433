import { envBool, envInt, envStr, envUrl, exitOnConfigError, loadEnv, z } from '@wds/config';
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

export function loadWorkerEnv(source: Record<string, string | undefined> = process.env) {
  try {
    const env = loadEnv(
      {
        ...commonEnvShape,
        DATABASE_URL: z.string({ error: 'is required (postgres://...)' }).url('must be a postgres:// URL'),
        TEMPORAL_ADDRESS: envStr('127.0.0.1:7233'),
        /** Which task queues this process serves; run copies with different lists to scale each. */
        WDS_WORKER_QUEUES: queuesVar,
        WDS_FETCH_CONCURRENCY: envInt(50, 1, 1000),
        /** HMAC key for X-Firecrawl-Signature on webhook deliveries; unsigned when unset. */
        WDS_WEBHOOK_SECRET: envStr(),
        /** Deadline of one webhook delivery attempt (connect, send, the receiver's answer); then it is retried with backoff. */
        WDS_WEBHOOK_TIMEOUT_MS: envInt(5_000, 100, 120_000),
        /** Webhook deliveries in flight at once to one receiver origin, per worker: a hanging receiver holds no more. */
        WDS_WEBHOOK_CONCURRENCY_PER_ORIGIN: envInt(4, 1, 1_000),
        /** Webhook deliveries in flight at once per worker, all receivers together. */
        WDS_WEBHOOK_MAX_IN_FLIGHT: envInt(64, 1, 10_000),
        /** Static DNS overrides for fetches, `name=ip,*.name=ip` (split-horizon networks, test sites). */
        WDS_HOST_OVERRIDES: envStr(),
        /** Browser pages rendering at once in this worker (its wds-browser activity slots are half as many again); 0 = two per core. */
        WDS_BROWSER_PAGES: envInt(0, 0, 256),
        /** A Chromium process is replaced after this many renders (bounds leaks). */
        WDS_BROWSER_RECYCLE_AFTER: envInt(200, 1, 1_000_000),
        /** Extra Chromium switches: a JSON array of strings, or whitespace-separated switches. */
        WDS_BROWSER_LAUNCH_ARGS: launchArgsVar,
        /** Chromium's sandbox: auto = on unless the worker runs as root (Chromium refuses it to root), on (root is an error), off. */
        WDS_BROWSER_SANDBOX: z.enum(['auto', 'on', 'off']).default('auto'),
        /** Interact sessions one browser worker holds at once (their pages stay open between calls); beyond it a new session is 503. */
        WDS_INTERACT_SESSIONS: envInt(8, 1, 1_000),
        /** Scrapes' rendered pages a browser worker keeps for a first interaction (least recently used go first); 0 = none (interact replays). */
        WDS_INTERACT_PARKED_PAGES: envInt(4, 0, 1_000),
        /** Port of this worker's GET /metrics (prom-client); 0 picks a free one (printed at start). */
        WDS_METRICS_PORT: envInt(9464, 0, 65535),
        /** Port of the Temporal SDK's Prometheus exporter (its own metrics); 0 turns it off. */
        WDS_TEMPORAL_METRICS_PORT: envInt(9465, 0, 65535),
        /** Bind address of both metrics ports. */
        WDS_METRICS_HOST: envStr('0.0.0.0'),
        /**
         * Control workers fail crawl/batch jobs that no workflow runs (the API died between storing
         * and starting one): a job is looked at once it is this old, every WDS_STRANDED_JOB_SWEEP_MS.
         */
        WDS_STRANDED_JOB_GRACE_MS: envInt(30_000, 1_000, 3_600_000),
        WDS_STRANDED_JOB_SWEEP_MS: envInt(15_000, 100, 3_600_000),
        /** Change tracking: a page version replaced by a newer one is kept this many days after the newer one appeared (control workers prune hourly). */
        WDS_CHANGE_TRACKING_RETENTION_DAYS: envInt(30, 1, 36_500),
        /** Change tracking: a page nobody scraped with the format for this many days is forgotten (its next scrape is `new`). */
        WDS_CHANGE_TRACKING_FORGET_DAYS: envInt(180, 1, 36_500),
        /** Control workers index, in the background at start, pages stored before the search index existed (when WDS_SEARCH_INDEX is on). */
        WDS_SEARCH_BACKFILL: envBool(true),
        /**
         * Zero data retention: how long an ended crawl/batch job's results wait to be read before
         * they are deleted unread (read to the last page, they go at once).
         */
        WDS_ZDR_RESULT_TTL_MS: envInt(3_600_000, 1_000, 7 * 24 * 3_600_000),
        /** Media steps this worker runs at once (its wds-media slots: each downloads and runs ffmpeg). */
        WDS_MEDIA_CONCURRENCY: envInt(2, 1, 64),
        /** Largest media file downloaded (each) and produced, in bytes. */
        WDS_MEDIA_MAX_BYTES: envInt(200 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024),
        /** ffmpeg (with ffprobe beside it) for wds-media; unset: `ffmpeg` on PATH (Debian's package). */
        FFMPEG_PATH: envStr(),
        /** yt-dlp for wds-media (optional: finds media on sites that do not name it in their HTML); unset: `yt-dlp` on PATH. */
        YTDLP_PATH: envStr(),
        /** Model steps this worker runs at once (its wds-llm slots); each waits on the provider. */
        WDS_LLM_CONCURRENCY: envInt(8, 1, 1000),
        /** Model steps started per minute across the deployment (the wds-llm task queue's rate; 0 = unbounded). */
        WDS_LLM_REQUESTS_PER_MINUTE: envInt(0, 0, 1_000_000),
        /** Model tokens (prompts + output budgets, corrected by real usage) per minute across the deployment, counted in Postgres; 0 = unbounded. */
        WDS_LLM_TOKENS_PER_MINUTE: envInt(0, 0, 1_000_000_000),
        /** How long a crawl or batch page's model step is retried through provider failures before the page fails with the last error. */
        WDS_LLM_PAGE_PATIENCE_MS: envInt(30 * 60_000, 1_000, 7 * 24 * 3_600_000),
      },
      source,
    );
    return env;
  } catch (e) {
    return exitOnConfigError(e);
  }
}
export type WorkerEnv = ReturnType<typeof loadWorkerEnv>;
