import { llmEnvOf, searchEnvOf } from '@wds/config/common';
import type { Deployment } from '@wds/contracts';
import { connectDb, createKey, ensureTeam, listenForScrapeDone, migrateDb, setSearchIndexing } from '@wds/db';
import { createSearchProvider } from '@wds/search';
import { closeSchemaThreads, resolveLlmConfig, warmSchemaThreads } from '@wds/llm';
import { announce, createLogger } from '@wds/log';
import { collectProcessMetrics } from '@wds/metrics';
import { closeTransformThreads, configureTransformThreads, transformThreadsSetting } from '@wds/transform';
import { fileStoreFromEnv } from '@wds/storage';
import { buildApp } from './app';
import { loadApiEnv } from './env';
import { fileRecorder } from './response-check';
import { drainOnSignal } from './shutdown';
import { connectTemporal } from './temporal';
import { MONITOR_RUN_PLAN } from '@wds/workflows/monitor';

const env = loadApiEnv();
const log = createLogger({ name: 'api', level: env.LOG_LEVEL });
collectProcessMetrics();
// Cache hits are converted off the event loop, which stays free to route other requests.
configureTransformThreads(transformThreadsSetting(env.WDS_TRANSFORM_THREADS));
const dbh = connectDb(env.DATABASE_URL, { max: 20 });
// Cache hits the API stores index their page as the workers' stores do.
setSearchIndexing(env.WDS_SEARCH_INDEX);
await migrateDb(dbh);
if (env.WDS_API_KEY) {
  const teamId = await ensureTeam(dbh.db, env.WDS_DEFAULT_TEAM);
  await createKey(dbh.db, teamId, { key: env.WDS_API_KEY, name: 'WDS_API_KEY' });
}
const { client, connection, workflows, starters } = await connectTemporal(env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE, { scrapeDispatch: env.WDS_SCRAPE_FETCH });
const scrapeDone = listenForScrapeDone(env.DATABASE_URL);
// Files written by browser and media workers: the same directory (one machine, or a shared volume) or bucket.
const { store: fileStore, secret } = fileStoreFromEnv({ ...env, WDS_PUBLIC_URL: env.WDS_PUBLIC_URL ?? `http://localhost:${env.PORT}` });

// The API never calls the model; it only needs to know whether the workers can (same env).
const llm = resolveLlmConfig(llmEnvOf(env).env, llmEnvOf(env).settings);
const deployment: Deployment = { llm: llm.ok ? { ok: true } : { ok: false, message: llm.message } };
// Users' JSON Schemas are checked on a schema thread: start it now, not on the first request.
if (llm.ok) warmSchemaThreads();

const app = await buildApp(
  {
    db: dbh.db,
    workflows,
    starters,
    scrapeDone,
    scrapeDispatch: env.WDS_SCRAPE_FETCH,
    deployment,
    search: createSearchProvider(dbh.db, searchEnvOf(env)),
    sharedIndex: env.WDS_SEARCH_SHARED_INDEX,
    async ready() {
      const [postgres, temporal] = await Promise.all([
        dbh.pool.query('SELECT 1').then(() => true, () => false),
        connection.healthService.check({}).then(() => true, () => false),
      ]);
      return { postgres, temporal };
    },
  },
  {
    maxRequestBytes: env.WDS_MAX_REQUEST_BYTES,
    log,
    defaultConcurrency: env.WDS_CRAWL_CONCURRENCY,
    batchesPerRun: env.WDS_CRAWL_BATCHES_PER_RUN,
    statusPageBytes: env.WDS_STATUS_PAGE_BYTES,
    limits: {
      concurrencyQueueMs: env.WDS_CONCURRENCY_QUEUE_MS,
      defaults: {
        ratePerMinute: {
          scrape: env.WDS_RATE_LIMIT_SCRAPE,
          crawl: env.WDS_RATE_LIMIT_CRAWL,
          batch: env.WDS_RATE_LIMIT_BATCH,
          map: env.WDS_RATE_LIMIT_MAP,
          parse: env.WDS_RATE_LIMIT_PARSE,
          status: env.WDS_RATE_LIMIT_STATUS,
          other: env.WDS_RATE_LIMIT_OTHER,
        },
        maxConcurrency: env.WDS_MAX_CONCURRENT_SCRAPES,
        maxMonitors: env.WDS_MAX_MONITORS,
        agentMaxCredits: env.WDS_AGENT_MAX_CREDITS,
        interactSessionMinutes: env.WDS_INTERACT_SESSION_MINUTES,
      },
    },
    maxCrawlLimit: env.WDS_MAX_CRAWL_LIMIT,
    promptTimeoutMs: env.WDS_CRAWL_PROMPT_TIMEOUT_MS,
    extract: { maxPages: env.WDS_EXTRACT_MAX_PAGES, timeoutMs: env.WDS_EXTRACT_TIMEOUT_MS, concurrency: env.WDS_EXTRACT_CONCURRENCY },
    streams: { connectionsPerKey: env.WDS_WS_CONNECTIONS_PER_KEY, maxBufferedBytes: env.WDS_WS_MAX_BUFFERED_BYTES, stallMs: env.WDS_WS_STALL_MS },
    publicUrl: env.WDS_PUBLIC_URL,
    parse: { maxUploadBytes: env.WDS_MAX_UPLOAD_BYTES, },
    agent: { plan: { stepsPerRun: env.WDS_AGENT_STEPS_PER_RUN, maxSteps: env.WDS_AGENT_MAX_STEPS }, publicUrl: env.WDS_PUBLIC_URL },
    monitor: { minIntervalSeconds: env.WDS_MONITOR_MIN_INTERVAL_SECONDS, jitterMs: env.WDS_MONITOR_JITTER_MS, plan: MONITOR_RUN_PLAN, email: !!env.WDS_SMTP_URL, resendAfterMs: env.WDS_MONITOR_CONFIRM_RESEND_SECONDS * 1000,
      pendingRecipients: { max: env.WDS_MONITOR_MAX_PENDING_RECIPIENTS, liveMs: env.WDS_MONITOR_CONFIRM_TTL_SECONDS * 1000 } },
    interact: {
      idleMs: env.WDS_INTERACT_IDLE_SECONDS * 1000,
      windowMs: env.WDS_INTERACT_WINDOW_HOURS * 3_600_000,
      maxLifeMs: env.WDS_INTERACT_MAX_SESSION_SECONDS * 1000,
    },
    files: { store: fileStore, secret },
    responseCheck: env.WDS_RESPONSE_CHECK_FILE ? fileRecorder(env.WDS_RESPONSE_CHECK_FILE) : undefined,
  },
);

await app.listen({ port: env.PORT, host: env.HOST });
const addr = app.server.address();
const port = typeof addr === 'object' && addr ? addr.port : env.PORT;
// The launcher and the tests wait for this message (packages/launch/src/processes.ts).
announce(log, { port }, `wds-api: listening on http://localhost:${port}`);

drainOnSignal(app, log, {
  graceMs: env.WDS_SHUTDOWN_GRACE_MS,
  async release() {
    await starters.close();
    await scrapeDone.close();
    await dbh.close();
    await Promise.all([closeTransformThreads(), closeSchemaThreads()]);
  },
});
