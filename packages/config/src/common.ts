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
  /**
   * Interact: a session (and a scrape's page kept for a first interaction) ends after this many
   * seconds without a call. The API gives it to each session; browser workers close pages idle
   * this long (sessions a minute later, if their workflow's close never came).
   */
  WDS_INTERACT_IDLE_SECONDS: envInt(300, 1, 86_400),
  /** Raw queue list; the worker validates it (worker env.ts), `npm start` passes it on or picks its own default. */
  WDS_WORKER_QUEUES: envStr(),
  // ---- LLM provider (Firecrawl's self-host names, so its users migrate unchanged; see packages/llm) ----
  /** Key for OpenAI or an OpenAI-compatible server. With none of these four set, LLM features answer 400 FEATURE_NOT_AVAILABLE. */
  OPENAI_API_KEY: envStr(),
  /** An OpenAI-compatible server (vLLM, LM Studio, LiteLLM, a cloud), e.g. http://vllm:8000/v1. */
  OPENAI_BASE_URL: envUrl(),
  /** The model of every LLM feature (required unless the server is OpenAI itself: gpt-4o-mini). */
  MODEL_NAME: envStr(),
  MODEL_EMBEDDING_NAME: envStr(),
  /** Ollama instead (wins when set); MODEL_NAME required. */
  OLLAMA_BASE_URL: envUrl(),
  /** MODEL_NAME's context window and output limit in tokens (0 = known OpenAI sizes, else 32,768 / 4,096). */
  WDS_LLM_CONTEXT_TOKENS: envInt(0, 0, 10_000_000),
  WDS_LLM_MAX_OUTPUT_TOKENS: envInt(0, 0, 1_000_000),
  /** One model request's timeout. */
  WDS_LLM_TIMEOUT_MS: envInt(120_000, 1_000, 3_600_000),
  // ---- Search (POST /v2/search, /v2/map search; packages/search) ----
  /** A SearXNG instance (Firecrawl's self-host name), e.g. http://searxng:8080; its settings.yml must enable the json format. */
  SEARXNG_ENDPOINT: envUrl(),
  /** Comma-separated SearXNG engines for web results (default: the instance's). */
  SEARXNG_ENGINES: envStr(),
  /** Comma-separated SearXNG categories for web results (default: general). */
  SEARXNG_CATEGORIES: envStr(),
  /** auto (SearXNG when SEARXNG_ENDPOINT is set, else the own index), index, searxng, or both (own index first, then SearXNG). */
  WDS_SEARCH_PROVIDER: z.enum(['auto', 'index', 'searxng', 'both']).default('auto'),
  /** The own index answers every team with every team's pages (one organisation). Default: a team searches only its own pages. */
  WDS_SEARCH_SHARED_INDEX: envBool(false),
  /** Index stored pages for search as they are stored (false: pages are stored as before, the own index stays as it is). */
  WDS_SEARCH_INDEX: envBool(true),
  // ---- Agent jobs (POST /v2/agent; workflows/src/agent/README.md) ----
  /** Firecrawl's agent model names → provider models, e.g. `spark-1-mini=gpt-4o-mini,spark-2=gpt-4o`; unnamed ones use MODEL_NAME. */
  WDS_AGENT_MODELS: envStr(),
  /** Model steps one workflow run takes before it continues as new (keeps every run's history small). */
  WDS_AGENT_STEPS_PER_RUN: envInt(200, 1, 1_000),
  /** Model steps an agent may take in all; the last may only call `finish`. */
  WDS_AGENT_MAX_STEPS: envInt(1_000, 1, 100_000),
  // ---- Monitors (/v2/monitor; workflows/src/monitor) ----
  /** Shortest interval a monitor's schedule may have (Firecrawl's 5 minutes); below 60, "every N seconds" and six-field crons are accepted (tests). */
  WDS_MONITOR_MIN_INTERVAL_SECONDS: envInt(300, 1, 86_400),
  /** The most a monitor's due time is spread past its cron time (a stable offset from its id, at most a tenth of its interval). API and workers must agree. */
  WDS_MONITOR_JITTER_MS: envInt(60_000, 0, 3_600_000),
  /** Worker: tick Schedules (shards); a tick of shard s claims monitors whose shard key % shards = s. */
  WDS_MONITOR_SHARDS: envInt(1, 1, 256),
  /** Worker: interval of each tick Schedule. */
  WDS_MONITOR_TICK_MS: envInt(10_000, 1_000, 300_000),
  /** Worker: checks one run (one workflow, its batches) holds at most; a tick with more due starts more runs. */
  WDS_MONITOR_CHECKS_PER_RUN: envInt(1_000, 1, 100_000),
  /** Worker: a monitor overdue by more than this (the deployment was down) is not run late; it moves on to its next due time. */
  WDS_MONITOR_CATCHUP_WINDOW_MS: envInt(3_600_000, 0, 7 * 24 * 3_600_000),
  /**
   * SMTP server for monitor email summaries (`notification.email`), `smtp://user:pass@host:587`
   * (STARTTLS when offered) or `smtps://…:465`; unset: email notifications answer 400
   * FEATURE_NOT_AVAILABLE. Control workers send; the API only checks it is set.
   */
  WDS_SMTP_URL: z.string().optional().transform(smtpUrlCheck),
  /** Sender of monitor email summaries (`Name <address>` or an address). */
  WDS_SMTP_FROM: envStr('WDS monitors <wds-monitors@localhost>'),
  /** Worker: lifetime of the link in a recipient's confirmation email (signed with WDS_FILE_SIGNING_SECRET; 7 days). API: how long a sent invitation counts as pending. */
  WDS_MONITOR_CONFIRM_TTL_SECONDS: envInt(7 * 86_400, 60, 90 * 86_400),
  /** API: at most one confirmation email per recipient address and team this often (resends, and re-adding an unsubscribed address). */
  WDS_MONITOR_CONFIRM_RESEND_SECONDS: envInt(600, 0, 7 * 86_400),
  /**
   * API: addresses a team may have awaiting confirmation at once (an invitation not sent yet, or
   * whose link still works); a create, update or resend naming more new ones is 429 PENDING_RECIPIENTS_LIMIT.
   */
  WDS_MONITOR_MAX_PENDING_RECIPIENTS: envInt(25, 1, 10_000),
  /** Workers (control): confirmation emails a team's monitors send, at most this many at once and refilled at this many an hour; beyond, they wait. */
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
