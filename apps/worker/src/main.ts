import { DefaultLogger, NativeConnection, Runtime, Worker, type LogLevel } from '@temporalio/worker';
import { startWebhookDispatcher } from '@wds/activities';
import { ConfigError, exitOnConfigError } from '@wds/config';
import { connectDb, migrateDb } from '@wds/db';
import { configureHostOverrides, parseHostOverrides, warmPdfWorker } from '@wds/scraper';
import { loadWorkerEnv } from './env';
import { queueOptions } from './queues';

const env = loadWorkerEnv();
// Runtime.install must come before any connection or worker is created.
const level = env.LOG_LEVEL.toUpperCase();
Runtime.install({ logger: new DefaultLogger((['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'].includes(level) ? level : 'WARN') as LogLevel) });
try {
  configureHostOverrides(parseHostOverrides(env.WDS_HOST_OVERRIDES));
} catch (e) {
  exitOnConfigError(new ConfigError('WDS_HOST_OVERRIDES', (e as Error).message));
}
const dbh = connectDb(env.DATABASE_URL, { max: Math.min(50, env.WDS_FETCH_CONCURRENCY + 5) });
await migrateDb(dbh);
const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS });

// Fetch workers convert PDFs: load pdf.js in a worker thread now rather than on the first PDF.
if (env.WDS_WORKER_QUEUES.includes('wds-fetch')) warmPdfWorker();
const workers: Worker[] = [];
for (const queue of env.WDS_WORKER_QUEUES) {
  const opts = queueOptions(queue, env, dbh.db);
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
      ...opts,
    }),
  );
}
// Control workers also deliver the webhook outbox (they have the database and no heavy work).
const dispatcher = env.WDS_WORKER_QUEUES.includes('wds-control')
  ? startWebhookDispatcher({ db: dbh.db, secret: env.WDS_WEBHOOK_SECRET, allowPrivateNetwork: env.WDS_ALLOW_PRIVATE_NETWORK })
  : null;
process.stdout.write(`wds-worker: serving ${env.WDS_WORKER_QUEUES.join(', ')} on ${env.TEMPORAL_ADDRESS}\n`);
// Worker.run resolves after SIGINT/SIGTERM once in-flight tasks finish or the grace time passes.
await Promise.all(workers.map((w) => w.run()));
await dispatcher?.stop();
await connection.close();
await dbh.close();
