import { createServer, type Server } from 'node:http';
import client from 'prom-client';

/**
 * The process's Prometheus registry and every WDS metric definition. One registry per
 * process (API or worker); label sets are bounded by construction: routes are patterns,
 * kinds/engines/outcomes are small enums, never URLs or ids.
 */
export const registry = new client.Registry();
let defaultsOn = false;

/** Process metrics (CPU, memory, event loop lag, GC) with the `wds_` prefix; call once per process. */
export function collectProcessMetrics(labels: Record<string, string> = {}): void {
  if (defaultsOn) return;
  defaultsOn = true;
  registry.setDefaultLabels(labels);
  client.collectDefaultMetrics({ register: registry, prefix: 'wds_' });
}

export type JobKind = 'scrape' | 'crawl' | 'batch' | 'map' | 'parse';
export type Engine = 'http' | 'browser' | 'cache';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const httpRequests = new client.Counter({
  name: 'wds_http_requests_total',
  help: 'HTTP requests answered by the API, by method, route pattern and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});
export const httpDuration = new client.Histogram({
  name: 'wds_http_request_duration_seconds',
  help: 'API request latency by method, route pattern and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});
export const httpInFlight = new client.Gauge({
  name: 'wds_http_requests_in_flight',
  help: 'API requests being served now.',
  registers: [registry],
});

export const jobsStarted = new client.Counter({
  name: 'wds_jobs_started_total',
  help: 'Jobs accepted by the API, by kind.',
  labelNames: ['kind'] as const,
  registers: [registry],
});
export const jobsFinished = new client.Counter({
  name: 'wds_jobs_finished_total',
  help: 'Jobs finished, by kind and status (completed, failed, cancelled).',
  labelNames: ['kind', 'status'] as const,
  registers: [registry],
});
export const jobDuration = new client.Histogram({
  name: 'wds_job_duration_seconds',
  help: 'Wall time of synchronous jobs (scrape, map, parse) as the API served them.',
  labelNames: ['kind', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const scrapeDuration = new client.Histogram({
  name: 'wds_scrape_duration_seconds',
  help: 'Time to produce one page (fetch or render, then formats), by engine and outcome.',
  labelNames: ['engine', 'outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});
/** Model calls (packages/llm through the wds-llm activities). `model` is the configured model name: one per deployment. */
export const llmCalls = new client.Counter({
  name: 'wds_llm_calls_total',
  help: 'LLM steps run by workers, by model, what they served (scrape, crawl, extract) and outcome (success, error code).',
  labelNames: ['model', 'use', 'outcome'] as const,
  registers: [registry],
});
export const llmTokens = new client.Counter({
  name: 'wds_llm_tokens_total',
  help: 'Tokens sent to (prompt) and received from (completion) the model, by model.',
  labelNames: ['model', 'direction'] as const,
  registers: [registry],
});
export const llmDuration = new client.Histogram({
  name: 'wds_llm_step_duration_seconds',
  help: 'Wall time of one LLM step (every model call of a page), by model and outcome.',
  labelNames: ['model', 'outcome'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  registers: [registry],
});
export const llmCredits = new client.Counter({
  name: 'wds_llm_credits_total',
  help: 'Credits charged for model-made formats, by model.',
  labelNames: ['model'] as const,
  registers: [registry],
});
/** WDS_LLM_TOKENS_PER_MINUTE at work: model steps held back to the next minute window. */
export const llmTokenLimitWaits = new client.Counter({
  name: 'wds_llm_token_limit_waits_total',
  help: 'Model steps that found the deployment token window (WDS_LLM_TOKENS_PER_MINUTE) full and waited for the next minute.',
  registers: [registry],
});

export const pagesCrawled = new client.Counter({
  name: 'wds_crawl_pages_total',
  help: 'Crawl and batch-scrape pages stored, by job kind.',
  labelNames: ['kind'] as const,
  registers: [registry],
});
export const cacheLookups = new client.Counter({
  name: 'wds_cache_lookups_total',
  help: 'Page cache look-ups by result (hit, miss) and where they happened (api, worker).',
  labelNames: ['result', 'source'] as const,
  registers: [registry],
});
export const creditsUsed = new client.Counter({
  name: 'wds_credits_used_total',
  help: 'Credits charged, by job kind.',
  labelNames: ['kind'] as const,
  registers: [registry],
});

/**
 * Monitors (worker): checks by how they ended (completed, partial, failed — counted when they
 * end — and skipped_overlap, skipped_no_credits — when their due time is claimed); pages by
 * result and by how an unchanged one was proved (not_modified: a 304; same_body: identical
 * bytes; converted: compared by markdown); the lag from a check's due time to its start.
 * Labels are pre-set to 0 so a dashboard shows the series before the first check.
 */
export const monitorChecksEnded = new client.Counter({
  name: 'wds_monitor_checks_total',
  help: 'Monitor checks, by status (completed, partial, failed when they end; skipped_overlap, skipped_no_credits when due).',
  labelNames: ['status'] as const,
  registers: [registry],
});
export const monitorPagesChecked = new client.Counter({
  name: 'wds_monitor_pages_total',
  help: 'Monitor check pages, by result (same, new, changed, removed, error) and path (not_modified, same_body, converted, failed).',
  labelNames: ['status', 'path'] as const,
  registers: [registry],
});
export const monitorScheduleLag = new client.Histogram({
  name: 'wds_monitor_schedule_lag_seconds',
  help: "Seconds from a scheduled check's due time (cron + jitter) to its start.",
  buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 900],
  registers: [registry],
});
for (const status of ['completed', 'partial', 'failed', 'skipped_overlap', 'skipped_no_credits']) monitorChecksEnded.inc({ status }, 0);
for (const status of ['same', 'changed']) monitorPagesChecked.inc({ status, path: 'converted' }, 0);

/** Webhook attempts (control workers' dispatcher) by outcome: delivered, failed (retried later), given_up (no retry left or undeliverable). */
export const webhookAttempts = new client.Counter({
  name: 'wds_webhook_attempts_total',
  help: 'Webhook delivery attempts by outcome (delivered, failed: will be retried, given_up: no retry left or undeliverable).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
for (const outcome of ['delivered', 'failed', 'given_up']) webhookAttempts.inc({ outcome }, 0);
/** From the job event to its delivery's 2xx (retries included): what a receiver waits for a webhook. */
export const webhookDeliveryLag = new client.Histogram({
  name: 'wds_webhook_delivery_lag_seconds',
  help: 'Time from a job event to its webhook delivered (accepted by the receiver), retries included.',
  buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600],
  registers: [registry],
});

/** Agent jobs (POST /v2/agent): runs by outcome and error code, model steps, tool calls. */
export const agentRunsStarted = new client.Counter({
  name: 'wds_agent_runs_started_total',
  help: 'Agent runs started by workers, by role (orchestrator = the job, subagent).',
  labelNames: ['role'] as const,
  registers: [registry],
});
export const agentRunsFinished = new client.Counter({
  name: 'wds_agent_runs_finished_total',
  help: 'Agent runs ended, by role, outcome (succeeded, failed, cancelled, refused, credit_limit_reached) and error code (none, cancelled, credit_limit_reached, parent_finished, refused, internal).',
  labelNames: ['role', 'outcome', 'code'] as const,
  registers: [registry],
});
export const agentSteps = new client.Counter({
  name: 'wds_agent_steps_total',
  help: 'Agent model steps run, by the Firecrawl model name asked for.',
  labelNames: ['model'] as const,
  registers: [registry],
});
export const agentToolCalls = new client.Counter({
  name: 'wds_agent_tool_calls_total',
  help: 'Agent tool calls run, by tool and outcome (success, error).',
  labelNames: ['tool', 'outcome'] as const,
  registers: [registry],
});

/** Browser pool gauges: read from the pool's stats() at every scrape (set by the worker that owns a pool). */
let poolSource: { pool: PoolStatsSource; capacity: number } | null = null;
function poolGauge(name: string, help: string, pick: (s: ReturnType<PoolStatsSource['stats']>, capacity: number) => number) {
  return new client.Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      if (poolSource) this.set(pick(poolSource.pool.stats(), poolSource.capacity));
    },
  });
}
export interface PoolStatsSource {
  stats(): { inUse: number; queued: number; browsers: number; pagesServed: number };
}
poolGauge('wds_browser_pages_in_use', 'Browser pages rendering now.', (s) => s.inUse);
poolGauge('wds_browser_pages_queued', 'Renders waiting for a browser page.', (s) => s.queued);
poolGauge('wds_browser_pages_capacity', 'Browser pages this worker may render at once.', (_s, c) => c);
poolGauge('wds_browser_processes', 'Running Chromium processes of this worker.', (s) => s.browsers);
poolGauge('wds_browser_pages_served', 'Pages rendered by this worker since it started (monotonic).', (s) => s.pagesServed);

/** What a browser page is rendered for. */
export type BrowserWork = 'scrape' | 'crawl' | 'batch' | 'agent';
const BROWSER_WORK: BrowserWork[] = ['scrape', 'crawl', 'batch', 'agent'];
/**
 * Browser page activities running now, by what they render for: how a browser worker's pool is
 * shared between single scrapes, crawl and batch pages and agent tools (pages kept open for
 * interact sessions have their own gauge). Every kind is exported from the start, at 0.
 */
export const browserPagesInFlight = new client.Gauge({
  name: 'wds_browser_pages_in_flight',
  help: 'Browser page activities running now, by job kind (scrape, crawl, batch, agent).',
  labelNames: ['kind'] as const,
  registers: [registry],
});
for (const kind of BROWSER_WORK) browserPagesInFlight.set({ kind }, 0);

/** Counts one browser page in flight for `kind` while `fn` runs. */
export async function browserPageInFlight<T>(kind: BrowserWork, fn: () => Promise<T>): Promise<T> {
  browserPagesInFlight.inc({ kind });
  try {
    return await fn();
  } finally {
    browserPagesInFlight.dec({ kind });
  }
}

/** Reads this process's browser pool at every scrape of /metrics. */
export function observeBrowserPool(pool: PoolStatsSource, capacity: number): void {
  poolSource = { pool, capacity };
}

/** Interact sessions' pages this browser worker holds (read from its session store at every scrape). */
let sessionSource: { stats(): { live: number; parked: number } } | null = null;
new client.Gauge({
  name: 'wds_browser_sessions',
  help: 'Pages a browser worker holds for interact: live = in an interact session, parked = a scrape\'s page kept for a first interaction.',
  labelNames: ['state'] as const,
  registers: [registry],
  collect() {
    // Processes without a browser export zeros, like the pool gauges.
    const s = sessionSource?.stats() ?? { live: 0, parked: 0 };
    this.set({ state: 'live' }, s.live);
    this.set({ state: 'parked' }, s.parked);
  },
});
export const interactCalls = new client.Counter({
  name: 'wds_interact_calls_total',
  help: 'Interact calls answered by the API, by mode (code, prompt) and outcome (success: the code ran to its end; failed: it threw or timed out; error: no answer, e.g. 409/410/502).',
  labelNames: ['mode', 'outcome'] as const,
  registers: [registry],
});

/** Reads this process's interact session store at every scrape of /metrics. */
export function observeBrowserSessions(source: { stats(): { live: number; parked: number } }): void {
  sessionSource = source;
}

/** One task queue's backlog as Temporal reports it (DescribeTaskQueue with report_stats). */
export interface TaskQueueBacklog {
  taskQueue: string;
  type: 'workflow' | 'activity';
  tasks: number;
  oldestSeconds: number;
}
let backlogSource: (() => Promise<TaskQueueBacklog[]>) | null = null;
let backlogRead: { at: number; value: Promise<TaskQueueBacklog[]> } | null = null;
/** Both backlog gauges read one lookup per scrape (a scrape collects them one after the other). */
function readBacklog(): Promise<TaskQueueBacklog[]> {
  if (!backlogSource) return Promise.resolve([]);
  if (!backlogRead || Date.now() - backlogRead.at > 2_000) backlogRead = { at: Date.now(), value: backlogSource().catch(() => []) };
  return backlogRead.value;
}
function backlogGauge(name: string, help: string, pick: (b: TaskQueueBacklog) => number) {
  return new client.Gauge({
    name,
    help,
    labelNames: ['task_queue', 'type'] as const,
    registers: [registry],
    async collect() {
      // A failed lookup exports nothing rather than a stale or zero backlog (absent is not "empty").
      this.reset();
      for (const b of await readBacklog()) this.set({ task_queue: b.taskQueue, type: b.type }, pick(b));
    },
  });
}
backlogGauge('wds_task_queue_backlog_tasks', 'Tasks waiting in a Temporal task queue for a worker (ApproximateBacklogCount; exported by control workers).', (b) => b.tasks);
backlogGauge('wds_task_queue_backlog_age_seconds', 'Age of the oldest task waiting in a Temporal task queue (ApproximateBacklogAge; exported by control workers).', (b) => b.oldestSeconds);

/** Reads the task queues' backlog at every scrape of /metrics (control workers: one answer for the fleet). */
export function observeTaskQueueBacklog(source: () => Promise<TaskQueueBacklog[]>): void {
  backlogSource = source;
}

/**
 * The per-origin politeness budget as this worker sees it (@wds/fetch's gate calls these hooks).
 * `origin` is a label only for a bounded set — the origins the operator names in
 * WDS_ORIGIN_LIMITS and the first POLITENESS_ORIGIN_LABELS others that made a request wait, back
 * off or answer 429/503 here — every other origin is `other`, so a crawl of a million sites adds
 * no series.
 */
export const POLITENESS_ORIGIN_LABELS = 20;
export const politenessInFlight = new client.Gauge({
  name: 'wds_politeness_in_flight',
  help: "Requests of this worker in flight, by origin (labelled origins, the rest `other`).",
  labelNames: ['origin'] as const,
  registers: [registry],
});
export const politenessWait = new client.Histogram({
  name: 'wds_politeness_wait_seconds',
  help: "Time requests waited for their origin's politeness budget (cap, interval, Crawl-delay, backoff), by origin; only requests that waited.",
  labelNames: ['origin'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
  registers: [registry],
});
export const politenessBackoffs = new client.Counter({
  name: 'wds_politeness_backoffs_total',
  help: 'Backoff steps recorded for an origin after its answers, by origin and reason (429, 503, connection resets).',
  labelNames: ['origin', 'reason'] as const,
  registers: [registry],
});
export const politenessAnswers = new client.Counter({
  name: 'wds_politeness_slow_down_answers_total',
  help: 'Answers asking to slow down (429, 503), by origin and status.',
  labelNames: ['origin', 'status'] as const,
  registers: [registry],
});
politenessInFlight.set({ origin: 'other' }, 0);

/** The gate's observer: hooks that feed the metrics above, labels bounded as described there. */
export function politenessMetrics(namedOrigins: string[] = []) {
  const labelled = new Set(namedOrigins);
  let others = 0;
  const label = (origin: string, notable: boolean): string => {
    if (labelled.has(origin)) return origin;
    if (notable && others < POLITENESS_ORIGIN_LABELS) {
      others++;
      labelled.add(origin);
      return origin;
    }
    return 'other';
  };
  // In-flight counts stay on the label they started under, even if the origin earns its own meanwhile.
  const startedAs = new Map<string, string[]>();
  return {
    inFlight(origin: string, delta: 1 | -1) {
      if (delta > 0) {
        const l = label(origin, false);
        const open = startedAs.get(origin);
        if (open) open.push(l);
        else startedAs.set(origin, [l]);
        politenessInFlight.inc({ origin: l });
        return;
      }
      const open = startedAs.get(origin);
      const l = open?.pop() ?? 'other';
      if (open && !open.length) startedAs.delete(origin);
      politenessInFlight.dec({ origin: l });
    },
    waited(origin: string, ms: number) {
      politenessWait.observe({ origin: label(origin, true) }, ms / 1000);
    },
    backedOff(origin: string, reason: string) {
      politenessBackoffs.inc({ origin: label(origin, true), reason });
    },
    answered(origin: string, status: number) {
      if (status === 429 || status === 503) politenessAnswers.inc({ origin: label(origin, true), status: String(status) });
    },
  };
}

/** Time a page scrape: call the returned function with the outcome and engine actually used. */
export function startScrapeTimer(): (engine: Engine, outcome: 'success' | 'error') => void {
  const t0 = performance.now();
  return (engine, outcome) => scrapeDuration.observe({ engine, outcome }, (performance.now() - t0) / 1000);
}

/** The exposition text and its content type. */
export async function exposition(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/**
 * A bare HTTP server answering GET /metrics (workers; the API serves /metrics through Fastify).
 * Resolves with the bound port (0 picks a free one).
 */
export async function serveMetrics(port: number, host = '0.0.0.0'): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || !(req.url === '/metrics' || req.url?.startsWith('/metrics?'))) {
      res.writeHead(404).end();
      return;
    }
    exposition().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (e) => res.writeHead(500).end(String(e)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  server.unref();
  const addr = server.address();
  return { server, port: typeof addr === 'object' && addr ? addr.port : port };
}

export { client };

/** A crawl or batch page was stored (counted once: the caller only calls it when the write happened). */
export function crawlPageStored(kind: 'crawl' | 'batch', credits: number): void {
  pagesCrawled.inc({ kind });
  creditsUsed.inc({ kind }, credits);
}
