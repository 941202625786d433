import { DefaultLogger, NativeConnection, Runtime, Worker, type LogLevel } from '@temporalio/worker';
import { startStrandedJobSweeper, startWebhookDispatcher, temporalBrowserAvailability } from '@wds/activities';
import { ConfigError, exitOnConfigError } from '@wds/config';
import { connectDb, migrateDb } from '@wds/db';
import { collectProcessMetrics, observeBrowserPool, serveMetrics } from '@wds/metrics';
import { warmPdfWorker } from '@wds/documents';
import { configureHostOverrides, parseHostOverrides } from '@wds/fetch';
import { closeTransformThreads, configureTransformThreads, transformThreadsSetting } from '@wds/transform';
import { loadWorkerEnv } from './env';
import { browserPages, createBrowserResources } from './browser';
import { queueOptions } from './queues';

const env = loadWorkerEnv();
/** How long after the grace time a worker still waits for activities that ignore cancellation. */
const FORCE_AFTER_GRACE_MS = 5_000;
// Runtime.install must come before any connection or worker is created.
const level = env.LOG_LEVEL.toUpperCase();
// The SDK's own metrics (task latencies, slots, polls) go to their own Prometheus port.
const temporalMetricsAddr = env.WDS_TEMPORAL_METRICS_PORT ? `${env.WDS_METRICS_HOST}:${env.WDS_TEMPORAL_METRICS_PORT}` : undefined;
Runtime.install({
  logger: new DefaultLogger((['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'].includes(level) ? level : 'WARN') as LogLevel),
  ...(temporalMetricsAddr ? { telemetryOptions: { metrics: { prometheus: { bindAddress: temporalMetricsAddr, useSecondsForDurations: true } } } } : {}),
});
// Ours (prom-client) on another port, up before the slow start so a stuck start is visible.
collectProcessMetrics();
const metrics = await serveMetrics(env.WDS_METRICS_PORT, env.WDS_METRICS_HOST).catch((e: Error) => {
  exitOnConfigError(new ConfigError('WDS_METRICS_PORT', `cannot listen on ${env.WDS_METRICS_PORT}: ${e.message}`));
  throw e;
});
process.stdout.write(
  `wds-worker: metrics on http://${env.WDS_METRICS_HOST}:${metrics.port}/metrics` +
    (temporalMetricsAddr ? `, temporal metrics on http://${temporalMetricsAddr}/metrics` : '') +
    '\n',
);
let hostOverrides: Record<string, string> = {};
try {
  hostOverrides = parseHostOverrides(env.WDS_HOST_OVERRIDES);
  configureHostOverrides(hostOverrides);
} catch (e) {
  exitOnConfigError(new ConfigError('WDS_HOST_OVERRIDES', (e as Error).message));
}
const dbh = connectDb(env.DATABASE_URL, { max: Math.min(50, env.WDS_FETCH_CONCURRENCY + 5) });
await migrateDb(dbh);
const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS });

// Fetch workers convert PDFs: load pdf.js in a worker thread now rather than on the first PDF.
if (env.WDS_WORKER_QUEUES.includes('wds-fetch')) warmPdfWorker();
// Workers that build documents convert HTML on every core, not only on the main thread.
if (env.WDS_WORKER_QUEUES.some((q) => q === 'wds-fetch' || q === 'wds-browser')) {
  configureTransformThreads(transformThreadsSetting(env.WDS_TRANSFORM_THREADS));
}
// Browser workers own one Chromium pool; nothing browser-related is loaded or started otherwise.
let browser: Awaited<ReturnType<typeof createBrowserResources>> | undefined;
if (env.WDS_WORKER_QUEUES.includes('wds-browser')) {
  try {
    browser = await createBrowserResources(env, hostOverrides);
    observeBrowserPool(browser.pool, browserPages(env));
  } catch (e) {
    // Like a queue without activities: said once, the other queues are still served.
    process.stderr.write(`wds-worker: not serving wds-browser (requests that need a browser answer 503 until it is): ${(e as Error).message.split('\n')[0]}\n`);
    if (env.WDS_WORKER_QUEUES.length === 1) process.exit(78);
  }
}
const resources = { db: dbh.db, browserAvailable: temporalBrowserAvailability(connection, env.TEMPORAL_NAMESPACE), browser };
const workers: Worker[] = [];
for (const queue of env.WDS_WORKER_QUEUES) {
  const opts = queueOptions(queue, env, resources);
  if (!opts) {
    process.stderr.write(`wds-worker: queue ${queue} has no activities in this version; not serving it\n`);
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
// Control workers also deliver webhooks (they have the database and no heavy work).
const dispatcher = env.WDS_WORKER_QUEUES.includes('wds-control')
  ? startWebhookDispatcher({
      db: dbh.db,
      secret: env.WDS_WEBHOOK_SECRET,
      allowPrivateNetwork: env.WDS_ALLOW_PRIVATE_NETWORK,
      timeoutMs: env.WDS_WEBHOOK_TIMEOUT_MS,
      perOrigin: env.WDS_WEBHOOK_CONCURRENCY_PER_ORIGIN,
      maxInFlight: env.WDS_WEBHOOK_MAX_IN_FLIGHT,
    })
  : null;
// ...and fail crawl/batch jobs whose workflow never started (an API that died mid-request).
const sweeper = env.WDS_WORKER_QUEUES.includes('wds-control')
  ? startStrandedJobSweeper({
      db: dbh.db,
      temporal: connection,
      namespace: env.TEMPORAL_NAMESPACE,
      graceMs: env.WDS_STRANDED_JOB_GRACE_MS,
      everyMs: env.WDS_STRANDED_JOB_SWEEP_MS,
      onFailed: (jobId, reason) => process.stderr.write(`wds-worker: job ${jobId} failed: ${reason}\n`),
    })
  : null;
// SIGINT/SIGTERM (the SDK's Runtime handles them): polling stops, in-flight tasks run on for
// WDS_SHUTDOWN_GRACE_MS, then activities are cancelled, which Temporal records as retryable
// failures and retries on another worker. Worker.run resolves once they have all returned; it
// gives up FORCE_AFTER_GRACE_MS later (an activity ignoring cancellation), and the process
// exits after twice that whatever hangs, so a deploy is never blocked.
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.once(sig, () => {
    process.stdout.write(`wds-worker: ${sig}, draining in-flight tasks (up to ${env.WDS_SHUTDOWN_GRACE_MS} ms)\n`);
    setTimeout(() => {
      process.stderr.write('wds-worker: shutdown did not finish in time; exiting\n');
      process.exit(1);
    }, env.WDS_SHUTDOWN_GRACE_MS + 2 * FORCE_AFTER_GRACE_MS).unref();
  });
}
// "serving" is printed once the workers poll (fetch workers look for wds-browser pollers).
const running = workers.map((w) => w.run());
process.stdout.write(`wds-worker: serving ${workers.map((w) => w.options.taskQueue).join(', ')} on ${env.TEMPORAL_ADDRESS}\n`);
let exitCode = 0;
try {
  await Promise.all(running);
} catch (e) {
  process.stderr.write(`wds-worker: ${(e as Error).message}\n`);
  exitCode = 1;
}
await dispatcher?.stop();
await sweeper?.stop();
// After the drain: renders still running past the grace time were cancelled with their activities.
await browser?.stop();
await closeTransformThreads();
await connection.close();
await dbh.close();
metrics.server.close();
// Explicit: a leftover handle (a kept-alive metrics scrape, a helper thread) must not keep a drained worker alive.
process.exit(exitCode);
