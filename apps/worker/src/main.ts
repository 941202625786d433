import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { temporalBrowserAvailability, temporalQueueAvailability, temporalQueueBacklog } from '@wds/activities';
import { TaskQueues } from '@wds/workflows/common';
import { ConfigError, exitOnConfigError } from '@wds/config';
import { llmEnvOf } from '@wds/config/common';
import { closeSchemaThreads, createLlmClient, loadTokenizer, resolveLlmConfig, warmSchemaThreads } from '@wds/llm';
import { connectDb, migrateDb, setSearchIndexing } from '@wds/db';
import { announce, createLogger } from '@wds/log';
import { collectProcessMetrics, observeBrowserPool, observeBrowserSessions, observeTaskQueueBacklog, serveMetrics } from '@wds/metrics';
import { warmPdfWorker } from '@wds/documents';
import { configureHostOverrides, loadCharsets, parseHostOverrides } from '@wds/fetch';
import { closeTransformThreads, configureTransformThreads, transformThreadsSetting } from '@wds/transform';
import { loadWorkerEnv } from './env';
import { browserPages, createBrowserResources } from './browser';
import { createFileResources } from './files';
import { createMediaResources } from './media';
import { coreLogFilter, TemporalPinoLogger } from './logging';
import { createInteractResources } from './interact';
import { queueOptions, sessionQueueOptions } from './queues';
import { startLoops } from './loops';
import { workflowBundleOption } from './workflow-bundle';
import { serveDirectScrapes } from './direct';
import { startPoliteness } from './politeness';

const env = loadWorkerEnv();
const log = createLogger({ name: 'worker', level: env.LOG_LEVEL });
/** How long after the grace time a worker still waits for activities that ignore cancellation. */
const FORCE_AFTER_GRACE_MS = 5_000;
// Runtime.install must come before any connection or worker is created.
// The SDK's own metrics (task latencies, slots, polls) go to their own Prometheus port.
const temporalMetricsAddr = env.WDS_TEMPORAL_METRICS_PORT ? `${env.WDS_METRICS_HOST}:${env.WDS_TEMPORAL_METRICS_PORT}` : undefined;
// The SDK's lines, Core's included (forwarded rather than printed by Rust), go through our logger.
Runtime.install({
  logger: new TemporalPinoLogger(log),
  telemetryOptions: {
    logging: { filter: { core: coreLogFilter(env.LOG_LEVEL), other: 'ERROR' }, forward: {} },
    ...(temporalMetricsAddr ? { metrics: { prometheus: { bindAddress: temporalMetricsAddr, useSecondsForDurations: true } } } : {}),
  },
});
// Ours (prom-client) on another port, up before the slow start so a stuck start is visible.
collectProcessMetrics();
const metrics = await serveMetrics(env.WDS_METRICS_PORT, env.WDS_METRICS_HOST).catch((e: Error) => {
  exitOnConfigError(new ConfigError('WDS_METRICS_PORT', `cannot listen on ${env.WDS_METRICS_PORT}: ${e.message}`));
  throw e;
});
// The test harness reads the metrics URL from this message (packages/launch/src/processes.ts).
announce(
  log,
  { port: metrics.port, ...(temporalMetricsAddr ? { temporalMetrics: `http://${temporalMetricsAddr}/metrics` } : {}) },
  `wds-worker: metrics on http://${env.WDS_METRICS_HOST}:${metrics.port}/metrics`,
);
let hostOverrides: Record<string, string> = {};
try {
  hostOverrides = parseHostOverrides(env.WDS_HOST_OVERRIDES);
  configureHostOverrides(hostOverrides);
} catch (e) {
  exitOnConfigError(new ConfigError('WDS_HOST_OVERRIDES', (e as Error).message));
}
const dbh = connectDb(env.DATABASE_URL, { max: Math.min(50, env.WDS_FETCH_CONCURRENCY + 5) });
// Pages are indexed for search by the statements that store them (packages/db/src/search-index.ts).
setSearchIndexing(env.WDS_SEARCH_INDEX);
await migrateDb(dbh);
const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS });
// Workers that reach sites take their requests' slots from the deployment's per-origin budget.
const politeness = env.WDS_WORKER_QUEUES.some((q) => q === 'wds-fetch' || q === 'wds-browser' || q === 'wds-media') ? await startPoliteness(env, dbh.db, log) : null;

// Fetch workers convert PDFs: load pdf.js in a worker thread now rather than on the first PDF.
if (env.WDS_WORKER_QUEUES.includes('wds-fetch')) warmPdfWorker();
// Workers that build documents convert HTML on every core, not only on the main thread.
if (env.WDS_WORKER_QUEUES.some((q) => q === 'wds-fetch' || q === 'wds-browser')) {
  configureTransformThreads(transformThreadsSetting(env.WDS_TRANSFORM_THREADS));
}
// Workers that make files (screenshots, media) share one file store and its sweep.
const fileResources = env.WDS_WORKER_QUEUES.some((q) => q === 'wds-browser' || q === 'wds-media') ? await createFileResources(env, log) : undefined;
// Browser workers own one Chromium pool; nothing browser-related is loaded or started otherwise.
let browser: (Awaited<ReturnType<typeof createBrowserResources>> & { interact: Awaited<ReturnType<typeof createInteractResources>> }) | undefined;
if (env.WDS_WORKER_QUEUES.includes('wds-browser')) {
  try {
    const rendering = await createBrowserResources(env, hostOverrides, fileResources!.files);
    browser = { ...rendering, interact: await createInteractResources(env, dbh.db, log) };
    observeBrowserPool(browser.pool, browserPages(env));
    observeBrowserSessions(browser.interact.sessions);
  } catch (e) {
    // Like a queue without activities: said once, the other queues are still served.
    // The error's message says what is missing and how to get it (e.g. no Chromium: which package, or CHROMIUM_PATH).
    log.error({ err: e }, `not serving wds-browser (requests that need a browser answer 503 until it is): ${(e as Error).message}`);
    if (env.WDS_WORKER_QUEUES.length === 1) process.exit(78);
  }
}
// Media workers need ffmpeg (and use yt-dlp when it is there); like the browser, missing tools turn the queue off, said once.
let media: (Awaited<ReturnType<typeof createMediaResources>> & { files: NonNullable<typeof fileResources>['files'] }) | undefined;
if (env.WDS_WORKER_QUEUES.includes('wds-media')) {
  try {
    media = { ...(await createMediaResources(env, log)), files: fileResources!.files };
  } catch (e) {
    log.error({ err: e }, `not serving wds-media (the audio and video formats answer 503 until it is): ${(e as Error).message}`);
    if (env.WDS_WORKER_QUEUES.length === 1) process.exit(78);
  }
}
// Model calls: one client per process (keep-alive pool, what it learned about the model).
const llmConfig = resolveLlmConfig(llmEnvOf(env).env, llmEnvOf(env).settings);
const llm = env.WDS_WORKER_QUEUES.includes('wds-llm') && llmConfig.ok ? createLlmClient(llmConfig.config) : undefined;
// Lazily loaded tables every task of these queues needs, loaded before the first task instead of inside it.
if (llm) {
  loadTokenizer();
  warmSchemaThreads(); // model answers are validated against users' schemas there
}
if (env.WDS_WORKER_QUEUES.includes('wds-fetch')) loadCharsets();
if (env.WDS_WORKER_QUEUES.includes('wds-llm') && !llmConfig.ok) log.warn({ queue: 'wds-llm' }, `not serving wds-llm: ${llmConfig.message}`);
const workflows = env.WDS_WORKER_QUEUES.includes('wds-control') ? await workflowBundleOption(log) : undefined;
// Control workers export the task queues' backlog (one view of the whole fleet; rules take the max over replicas).
if (env.WDS_WORKER_QUEUES.includes('wds-control')) observeTaskQueueBacklog(temporalQueueBacklog(connection, env.TEMPORAL_NAMESPACE));
const resources = {
  db: dbh.db,
  browserAvailable: temporalBrowserAvailability(connection, env.TEMPORAL_NAMESPACE),
  mediaAvailable: temporalQueueAvailability(connection, env.TEMPORAL_NAMESPACE, TaskQueues.media),
  browser,
  media,
  llm,
  llmConfigured: llmConfig.ok,
  workflows,
};
const workers: Worker[] = [];
for (const queue of env.WDS_WORKER_QUEUES) {
  const opts = queueOptions(queue, env, resources);
  if (!opts) {
    // wds-llm, wds-browser and wds-media said why above (no LLM configured, no Chromium, no ffmpeg).
    if (!['wds-llm', 'wds-browser', 'wds-media'].includes(queue)) log.warn({ queue }, 'queue has no activities in this version; not serving it');
    continue;
  }
  workers.push(
    await Worker.create({
      connection,
      namespace: env.TEMPORAL_NAMESPACE,
      taskQueue: queue,
      shutdownGraceTime: env.WDS_SHUTDOWN_GRACE_MS,
      shutdownForceTime: env.WDS_SHUTDOWN_GRACE_MS + FORCE_AFTER_GRACE_MS,
      ...opts,
    }),
  );
}
// Browser workers also serve their own queue: interact calls about the pages they hold.
const sessionQueue = sessionQueueOptions(env, resources);
if (sessionQueue) {
  workers.push(
    await Worker.create({
      connection,
      namespace: env.TEMPORAL_NAMESPACE,
      shutdownGraceTime: env.WDS_SHUTDOWN_GRACE_MS,
      shutdownForceTime: env.WDS_SHUTDOWN_GRACE_MS + FORCE_AFTER_GRACE_MS,
      ...sessionQueue,
    }),
  );
}
// Background loops (webhooks, sweepers, mail, retention: loops.ts says which workers run which).
const loops = await startLoops({ env, db: dbh.db, temporal: connection, log });
// SIGINT/SIGTERM (the SDK's Runtime handles them): polling stops, in-flight tasks run on for
// WDS_SHUTDOWN_GRACE_MS, then activities are cancelled, which Temporal records as retryable
// failures and retries on another worker. Worker.run resolves once they have all returned; it
// gives up FORCE_AFTER_GRACE_MS later (an activity ignoring cancellation), and the process
// exits after twice that whatever hangs, so a deploy is never blocked.
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.once(sig, () => {
    log.info({ signal: sig, graceMs: env.WDS_SHUTDOWN_GRACE_MS }, 'draining in-flight tasks');
    setTimeout(() => {
      log.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, env.WDS_SHUTDOWN_GRACE_MS + 2 * FORCE_AFTER_GRACE_MS).unref();
  });
}
// Fetch workers also run scrapes the API dispatches through Postgres (WDS_SCRAPE_FETCH=direct),
// with as many slots again as their wds-fetch activities.
const direct = env.WDS_WORKER_QUEUES.includes('wds-fetch')
  ? serveDirectScrapes({
      deps: { db: dbh.db, allowPrivateNetwork: env.WDS_ALLOW_PRIVATE_NETWORK, maxBodyBytes: env.WDS_MAX_BODY_BYTES, browserAvailable: resources.browserAvailable, llmAvailable: llmConfig.ok },
      databaseUrl: env.DATABASE_URL,
      concurrency: env.WDS_FETCH_CONCURRENCY,
      connection,
      namespace: env.TEMPORAL_NAMESPACE,
      log,
    })
  : null;
let directDrained: Promise<void> | undefined;
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => void (directDrained ??= direct?.drain(env.WDS_SHUTDOWN_GRACE_MS)));
// "serving" is printed once the workers poll (fetch workers look for wds-browser pollers).
const running = workers.map((w) => w.run());
// The launcher and the tests wait for this message (packages/launch/src/processes.ts).
const queues = workers.map((w) => w.options.taskQueue);
announce(log, { queues, temporal: env.TEMPORAL_ADDRESS }, `wds-worker: serving ${queues.join(', ')}`);
let exitCode = 0;
try {
  await Promise.all(running);
} catch (e) {
  log.error({ err: e }, 'worker failed');
  exitCode = 1;
}
// Direct scrapes drain like activities: within the grace time, then given back to other workers.
await (directDrained ?? direct?.drain(0));
await loops.stop();
// After the drain: renders still running past the grace time were cancelled with their activities.
await browser?.interact.stop();
await browser?.stop();
await media?.stop();
fileResources?.stop();
await Promise.all([closeTransformThreads(), closeSchemaThreads()]);
await politeness?.stop();
await connection.close();
await dbh.close();
metrics.server.close();
// Explicit: a leftover handle (a kept-alive metrics scrape, a helper thread) must not keep a drained worker alive.
process.exit(exitCode);
