import { envBool, envInt, envLogLevel, envStr, envUrl, z } from './index';

/**
 * Settings every process understands. Defaults are the embedded single-machine setup;
 * docs/configuration.md is generated from this shape and its comments (scripts/gen-config-docs.ts).
 */
export const commonEnvShape = {
  // ---- Postgres, Temporal and local data ----
  /**
   * External Postgres (`postgres://user:pass@host:5432/db`). Unset, `npm start` boots an embedded one
   * with its data in `$WDS_DATA_DIR/postgres`; `npm run api` and `npm run worker` require it. The CLIs
   * (`npm run keys`, …) use the embedded Postgres of a running `npm start` when it is unset.
   */
  DATABASE_URL: envUrl(),
  /**
   * External Temporal frontend, `host:port`. Unset, `npm start` boots the Temporal CLI's dev server
   * (its SQLite file in `$WDS_DATA_DIR`, so jobs survive a restart); `npm run api` and `npm run worker`
   * then use `127.0.0.1:7233`.
   */
  TEMPORAL_ADDRESS: envStr(),
  /** Temporal namespace every workflow, schedule and task queue lives in. */
  TEMPORAL_NAMESPACE: envStr('default'),
  /**
   * The `temporal` binary `npm start` runs as its embedded dev server. Unset: `temporal` on PATH, then
   * `~/go/bin/temporal` (`go install github.com/temporalio/cli/cmd/temporal@v1.5.1`); see
   * WDS_TEMPORAL_DOWNLOAD for a machine with none.
   */
  TEMPORAL_CLI_PATH: envStr(),
  /**
   * Where `npm start` keeps the embedded Postgres and Temporal data, the bootstrap API key
   * (`bootstrap-api-key`), the file signing secret and, by default, stored files. Running as root, it
   * must be enterable by other users (Postgres runs as `postgres`).
   */
  WDS_DATA_DIR: envStr('.wds'),
  // ---- Fetching ----
  /**
   * Allow outbound fetches (scrapes, crawls, renders, webhooks, media, catalog providers) to loopback,
   * private, link-local, CGNAT, multicast and metadata addresses. Checked after DNS and after every
   * redirect; off, such targets are refused. Tests set it to reach their fixture sites.
   */
  WDS_ALLOW_PRIVATE_NETWORK: envBool(false),
  /** Largest page body fetched, after decompression; a bigger page fails the fetch. */
  WDS_MAX_BODY_BYTES: envInt(20 * 1024 * 1024, 1024),
  /**
   * Chromium for the browser engine. Unset: Debian's `/usr/lib/chromium/chromium-headless-shell`, then
   * `chromium-headless-shell` or `chromium` on PATH. A worker asked to serve `wds-browser` without one says
   * so and serves its other queues; requests that need the browser then answer 503 `BROWSER_UNAVAILABLE`.
   */
  CHROMIUM_PATH: envStr(),
  // ---- Processes ----
  /**
   * Every process (API, worker, `npm start`, the CLIs) writes JSON lines at or above this level
   * (docs/operations.md, Logs). The Temporal SDK's native (Core) lines follow it but never below `info`.
   */
  LOG_LEVEL: envLogLevel('info'),
  /**
   * Drain time on SIGTERM. The API lets in-flight requests finish for this long, then closes their
   * connections (their jobs go on in the workers); a worker lets in-flight activities finish for this
   * long, then cancels them so that Temporal retries them on another worker (directly dispatched scrapes
   * are given back at once then). On a fleet give the API well over the scrape heartbeat timeout (10 s;
   * the compose file gives 25 s), so that a scrape whose worker dies during the drain still answers.
   */
  WDS_SHUTDOWN_GRACE_MS: envInt(10_000, 0, 600_000),
  /**
   * Threads converting HTML to markdown/html/links (the CPU-heavy step) and running the test whether a
   * page needs the browser: on workers for every scraped and crawled page, so that one worker process
   * uses every core and no page can stop its event loop; on the API for cache hits. `0`: one per core;
   * `-1`: convert on the main thread (every step is linear in the page, but a huge page then holds the
   * event loop while it is converted). A conversion that outlives its request's timeout is cut (408) and
   * its thread replaced.
   */
  WDS_TRANSFORM_THREADS: envInt(0, -1, 64),
  // ---- Files and links ----
  /**
   * The API's address as clients reach it: the base of `url`/`next` links (unset: the request's Host),
   * of file links signed by workers and of the confirm/unsubscribe links in monitor emails (unset there:
   * `http://localhost:3002`; `npm start` passes its API's address to its worker). Set it on the API and
   * on every browser, media and control worker of a fleet.
   */
  WDS_PUBLIC_URL: envUrl(),
  /**
   * Screenshots, action PDFs, audio and video: written by browser and media workers, served by the API
   * (`GET /v2/files/...`). Unset: `$WDS_DATA_DIR/files`. On a fleet it must be a volume shared by the API,
   * the browser and the media workers, or the files go to a bucket instead (`WDS_FILES_S3_BUCKET`). Files are
   * deleted an hour after their links expire.
   */
  WDS_FILES_DIR: envStr(),
  /**
   * Store files in this S3-compatible bucket instead of `WDS_FILES_DIR` (a fleet without a shared disk): the
   * API, browser and media workers then need only the same bucket settings. The bucket must exist. Credentials
   * come from the AWS SDK's usual chain (`AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, a profile, an
   * instance role). Links stay the API's signed `/v2/files/...` links, streamed from the bucket, unless
   * `WDS_FILES_S3_PRESIGNED` is set.
   */
  WDS_FILES_S3_BUCKET: envStr(),
  /** The S3 API's address for a server other than AWS (SeaweedFS, Versity, Ceph, R2: `http://s3:8333`); unset: AWS. */
  WDS_FILES_S3_ENDPOINT: envUrl(),
  /** The bucket's region (any value for most S3-compatible servers). */
  WDS_FILES_S3_REGION: envStr('us-east-1'),
  /** Address buckets as `<endpoint>/<bucket>` rather than `<bucket>.<endpoint>`: what most self-hosted servers need. */
  WDS_FILES_S3_FORCE_PATH_STYLE: envBool(true),
  /** A prefix for every object key (`wds/`), to share a bucket; sweeps touch only objects under it. */
  WDS_FILES_S3_PREFIX: envStr(''),
  /**
   * Hand out presigned GETs of the bucket instead of API links: clients then fetch from `WDS_FILES_S3_ENDPOINT`
   * (it must be reachable by them) and an expired link answers the bucket's own 403, not the API's 410.
   * Presigned links live at most 7 days (S3's limit), so `WDS_FILE_URL_TTL_SECONDS` is capped at that.
   */
  WDS_FILES_S3_PRESIGNED: envBool(false),
  /**
   * HMAC key of file links and of monitor emails' confirm/unsubscribe links. The API and every browser,
   * media and control worker must have the same one. Unset, `npm start` generates one once into
   * `$WDS_DATA_DIR/file-signing-secret` and passes it to its API and worker.
   */
  WDS_FILE_SIGNING_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Lifetime of file links (the spec's 24 hours for screenshots); later a link answers 410. */
  WDS_FILE_URL_TTL_SECONDS: envInt(86_400, 1, 365 * 86_400),
  // ---- Interact and task queues ----
  /**
   * Interact: a session ends after this many seconds without a call (the API gives each session its
   * value; its profile is saved then), and a browser worker closes a scrape's page kept for a first
   * interaction after as long unused (sessions a minute later, if their workflow's close never came).
   */
  WDS_INTERACT_IDLE_SECONDS: envInt(300, 1, 86_400),
  /**
   * Task queues a worker serves, comma-separated: `wds-control` (workflows, bookkeeping, webhooks),
   * `wds-fetch` (HTTP fetch and transform, parse, map, directly dispatched scrapes), `wds-browser`
   * (Chromium renders), `wds-llm` (model steps), `wds-media` (the `audio`/`video` formats). Run copies
   * with different lists to scale each. Chromium starts only on workers serving `wds-browser`, at their
   * first render; `wds-llm` is served only when an LLM is configured (else the worker says so and serves
   * the rest); `wds-media` needs ffmpeg (likewise) and, like `wds-browser`, `WDS_PUBLIC_URL`,
   * `WDS_FILES_DIR` and `WDS_FILE_SIGNING_SECRET` shared with the API. `npm start` passes it on to its
   * worker, or gives it every queue (`wds-control,wds-fetch,wds-browser,wds-llm,wds-media`).
   * @values comma-separated task queues
   */
  WDS_WORKER_QUEUES: envStr(),
  // ---- LLM provider (Firecrawl's self-host names, so its users migrate unchanged; see packages/llm) ----
  /**
   * Key for OpenAI or an OpenAI-compatible server. With none of `OPENAI_API_KEY`, `OPENAI_BASE_URL`,
   * `OLLAMA_BASE_URL` set, the LLM features (model-made formats, extract, agent, crawl `prompt`, interact
   * `prompt`, monitor judges) answer 400 `FEATURE_NOT_AVAILABLE` naming the variable to set. The API and the
   * workers must have the same LLM settings.
   */
  OPENAI_API_KEY: envStr(),
  /** Any OpenAI-compatible server: vLLM, LM Studio, LiteLLM, a cloud (`http://vllm:8000/v1`). Unset: OpenAI. */
  OPENAI_BASE_URL: envUrl(),
  /** The model of every LLM feature: `gpt-4o-mini` against OpenAI itself, required for any other server. */
  MODEL_NAME: envStr(),
  /** An embeddings model, passed to the LLM configuration; no feature uses embeddings yet. */
  MODEL_EMBEDDING_NAME: envStr(),
  /** Ollama instead (wins when set; Firecrawl's `http://host:11434/api` form works); `MODEL_NAME` is required. */
  OLLAMA_BASE_URL: envUrl(),
  /**
   * The model's context window in tokens (`0`: the known size of an OpenAI model, else 32,768). Pages are
   * truncated to fit, with a `warning`. Set it to what your server really serves (Ollama: its `num_ctx`).
   */
  WDS_LLM_CONTEXT_TOKENS: envInt(0, 0, 10_000_000),
  /**
   * The model's output limit in tokens (`0`: the known limit of an OpenAI model, else 4,096);
   * `onlyCleanContent` is skipped, with a `warning`, for a page whose markdown exceeds it. Every
   * call's reply is capped by it and by half the context window (the page keeps the other half).
   * With a small local model, a few hundred tokens keep a reply that repeats itself from running
   * until the scrape's timeout.
   */
  WDS_LLM_MAX_OUTPUT_TOKENS: envInt(0, 0, 1_000_000),
  /** One model request's timeout (a scrape's own `timeout` bounds its whole model step). */
  WDS_LLM_TIMEOUT_MS: envInt(120_000, 1_000, 3_600_000),
  // ---- Search (POST /v2/search, /v2/map search; packages/search) ----
  /**
   * A SearXNG instance for `POST /v2/search` (Firecrawl's self-host name), e.g. `http://searxng:8080`; its
   * `settings.yml` must list `json` in `search.formats` (a 403 from it says so).
   */
  SEARXNG_ENDPOINT: envUrl(),
  /** Comma-separated SearXNG engines for web results (default: the instance's). */
  SEARXNG_ENGINES: envStr(),
  /** Comma-separated SearXNG categories for web results (default: `general`); news and images use SearXNG's `news` and `images`. */
  SEARXNG_CATEGORIES: envStr(),
  /**
   * Who answers `POST /v2/search`: `auto` (SearXNG when `SEARXNG_ENDPOINT` is set, else the own index),
   * `index` (only the pages this deployment stored), `searxng`, or `both` (stored pages first, then
   * SearXNG; one failing is a `warning`). The API refuses `searxng` and `both` without `SEARXNG_ENDPOINT`.
   */
  WDS_SEARCH_PROVIDER: z.enum(['auto', 'index', 'searxng', 'both']).default('auto'),
  /**
   * The own index answers every team with every team's pages (search and map ranking) — except pages
   * fetched with a team's request `headers`, browser `profile` or `actions` (they may show what only that
   * team can see: they stay in that team's own index), and pages indexed before migration 0029 until they
   * are stored again (how they were fetched is unknown). Default: a team searches only what it stored.
   */
  WDS_SEARCH_SHARED_INDEX: envBool(false),
  /**
   * Index pages for search in the statement that stores them (API and workers). `false`: pages are
   * stored as before and the index stays as it is (`npm run search:backfill -- --reset` catches up later).
   */
  WDS_SEARCH_INDEX: envBool(true),
  // ---- Agent jobs (POST /v2/agent; workflows/src/agent/README.md) ----
  /** Firecrawl's agent model names mapped to your provider's models, `spark-1-mini=gpt-4o-mini,spark-2=gpt-4o`; a name left out runs on `MODEL_NAME`. */
  WDS_AGENT_MODELS: envStr(),
  /** Model steps one agent workflow run takes before it continues as new (each run's history stays near 2,500 events). */
  WDS_AGENT_STEPS_PER_RUN: envInt(200, 1, 1_000),
  /** Model steps an agent may take in all; the last one may only call `finish`, past it the run fails `internal`. */
  WDS_AGENT_MAX_STEPS: envInt(1_000, 1, 100_000),
  // ---- Monitors (/v2/monitor; workflows/src/monitor) ----
  /**
   * The shortest interval a monitor's schedule may have (Firecrawl's 5 minutes: faster is a 400 naming
   * the field). Below 60, `every N seconds` and six-field crons are accepted: tests use it.
   */
  WDS_MONITOR_MIN_INTERVAL_SECONDS: envInt(300, 1, 86_400),
  /**
   * The most a monitor's due time is spread past its cron time (a stable offset from its id, at most a
   * fifth of its interval), so that monitors on one cron do not all fire at the same instant. API and
   * workers must agree.
   */
  WDS_MONITOR_JITTER_MS: envInt(60_000, 0, 3_600_000),
  /**
   * Tick Schedules (`wds-monitor-tick-<n>`); each claims the due monitors of its shard (shard key %
   * shards), so that the ticks of a large deployment run side by side. Changing it updates the Schedules
   * at the next worker start.
   */
  WDS_MONITOR_SHARDS: envInt(1, 1, 256),
  /** Interval of each tick Schedule (a check starts on average half a tick after it is due). */
  WDS_MONITOR_TICK_MS: envInt(10_000, 1_000, 300_000),
  /** Checks one run (one workflow and its batch activities) holds at most; a tick with more due starts more runs. */
  WDS_MONITOR_CHECKS_PER_RUN: envInt(1_000, 1, 100_000),
  /** A monitor overdue by more than this (the deployment was down) is not checked late; it moves on to its next due time. */
  WDS_MONITOR_CATCHUP_WINDOW_MS: envInt(3_600_000, 0, 7 * 24 * 3_600_000),
  /**
   * SMTP server for monitor email summaries (`notification.email`), `smtp://user:pass@host:587`
   * (STARTTLS when offered) or `smtps://…:465`; unset: email notifications answer 400
   * `FEATURE_NOT_AVAILABLE`. Control workers send; the API only checks it is set.
   * @values `smtp://` or `smtps://` URL
   */
  WDS_SMTP_URL: z.string().optional().transform(smtpUrlCheck),
  /** Sender of monitor email summaries (`Name <address>` or an address). */
  WDS_SMTP_FROM: envStr('WDS monitors <wds-monitors@localhost>'),
  /**
   * Workers: lifetime of the link in a recipient's confirmation email (7 days). API: how long a sent
   * invitation counts toward `WDS_MONITOR_MAX_PENDING_RECIPIENTS` (API and workers should agree). Links are
   * signed with `WDS_FILE_SIGNING_SECRET` (API and workers must share it) and point at `WDS_PUBLIC_URL`;
   * unsubscribe links do not expire.
   */
  WDS_MONITOR_CONFIRM_TTL_SECONDS: envInt(7 * 86_400, 60, 90 * 86_400),
  /** At most one confirmation email per recipient address and team this often (resends, and naming an unsubscribed address again). */
  WDS_MONITOR_CONFIRM_RESEND_SECONDS: envInt(600, 0, 7 * 86_400),
  /**
   * Email recipient addresses a team may have awaiting confirmation at once (an invitation not sent yet,
   * or sent less than `WDS_MONITOR_CONFIRM_TTL_SECONDS` ago); a monitor create, update or resend that would
   * invite more is 429 `PENDING_RECIPIENTS_LIMIT` and stores nothing.
   */
  WDS_MONITOR_MAX_PENDING_RECIPIENTS: envInt(25, 1, 10_000),
  /**
   * Confirmation emails (the only mail to addresses that have not opted in) one team's monitors send: at
   * most this many at once, refilled evenly at this many an hour; the others stay due until the team's
   * budget has one. Sent by control workers.
   */
  WDS_MONITOR_CONFIRMATIONS_PER_HOUR: envInt(10, 1, 100_000),
};

/** Only the scheme is checked here: nodemailer reads the rest (host, port, credentials, query options). */
function smtpUrlCheck(v: string | undefined, ctx: z.RefinementCtx): string | undefined {
  if (v === undefined || v === '') return undefined;
  if (!/^smtps?:\/\/[^/]+/.test(v)) {
    ctx.addIssue({ code: 'custom', message: 'must be an smtp:// or smtps:// URL (smtp://user:pass@host:587)' });
    return z.NEVER;
  }
  return v;
}

/** WDS_AGENT_MODELS parsed: `name=model` pairs separated by commas (unknown names are ignored by the caller). */
export function agentModelsOf(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    const [name, model] = pair.split('=').map((x) => x.trim());
    if (name && model) out[name] = model;
  }
  return out;
}

/** The LLM part of a parsed env, as packages/llm takes it. */
export function llmEnvOf(env: {
  OPENAI_API_KEY?: string; OPENAI_BASE_URL?: string; MODEL_NAME?: string; MODEL_EMBEDDING_NAME?: string; OLLAMA_BASE_URL?: string;
  WDS_LLM_CONTEXT_TOKENS: number; WDS_LLM_MAX_OUTPUT_TOKENS: number; WDS_LLM_TIMEOUT_MS: number;
}) {
  return {
    env: { OPENAI_API_KEY: env.OPENAI_API_KEY, OPENAI_BASE_URL: env.OPENAI_BASE_URL, MODEL_NAME: env.MODEL_NAME, MODEL_EMBEDDING_NAME: env.MODEL_EMBEDDING_NAME, OLLAMA_BASE_URL: env.OLLAMA_BASE_URL },
    settings: {
      contextWindowTokens: env.WDS_LLM_CONTEXT_TOKENS || undefined,
      maxOutputTokens: env.WDS_LLM_MAX_OUTPUT_TOKENS || undefined,
      requestTimeoutMs: env.WDS_LLM_TIMEOUT_MS,
    },
  };
}

/** The search part of a parsed env, as packages/search's createSearchProvider takes it. */
export function searchEnvOf(env: {
  SEARXNG_ENDPOINT?: string; SEARXNG_ENGINES?: string; SEARXNG_CATEGORIES?: string;
  WDS_SEARCH_PROVIDER: 'auto' | 'index' | 'searxng' | 'both'; WDS_SEARCH_SHARED_INDEX: boolean;
}) {
  return {
    provider: env.WDS_SEARCH_PROVIDER,
    searxng: env.SEARXNG_ENDPOINT ? { endpoint: env.SEARXNG_ENDPOINT, engines: env.SEARXNG_ENGINES, categories: env.SEARXNG_CATEGORIES } : null,
    sharedIndex: env.WDS_SEARCH_SHARED_INDEX,
  };
}
