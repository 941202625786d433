import { resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import {
  startJobSweeper, startMonitorMailer, startMonitorUpkeep, startPageVersionPruner, startRetentionSweeper, startWebhookDispatcher,
} from '@wds/activities';
import type { Db } from '@wds/db';
import type { Logger } from '@wds/log';
import { lazySigningSecret } from '@wds/storage';
import { MONITOR_RUN_PLAN } from '@wds/workflows/monitor';
import type { WorkerEnv } from './env';
import { startSearchBackfill } from './search-backfill';

/**
 * The worker's background loops, in one table: what each does, which workers run it (control
 * workers: they have the database and no heavy work), and how it starts. main.ts starts the ones
 * that apply after its Temporal workers and stops them in reverse order once they drained.
 */

export interface LoopContext {
  env: WorkerEnv;
  db: Db;
  temporal: NativeConnection;
  log: Logger;
}

export interface Loop {
  stop(): Promise<void>;
}

interface LoopSpec {
  name: string;
  /** Whether this worker runs it. */
  runs(env: WorkerEnv): boolean;
  start(ctx: LoopContext): Loop | Promise<Loop>;
}

const onControl = (env: WorkerEnv) => env.WDS_WORKER_QUEUES.includes('wds-control');

const sweeping = (ctx: LoopContext) => ({
  db: ctx.db,
  temporal: ctx.temporal,
  namespace: ctx.env.TEMPORAL_NAMESPACE,
  graceMs: ctx.env.WDS_STRANDED_JOB_GRACE_MS,
  everyMs: ctx.env.WDS_STRANDED_JOB_SWEEP_MS,
});

export const LOOPS: LoopSpec[] = [
  {
    name: 'webhook dispatcher: delivers job and monitor webhooks',
    runs: onControl,
    start: ({ env, db }) =>
      startWebhookDispatcher({
        db,
        secret: env.WDS_WEBHOOK_SECRET,
        allowPrivateNetwork: env.WDS_ALLOW_PRIVATE_NETWORK,
        timeoutMs: env.WDS_WEBHOOK_TIMEOUT_MS,
        perOrigin: env.WDS_WEBHOOK_CONCURRENCY_PER_ORIGIN,
        maxInFlight: env.WDS_WEBHOOK_MAX_IN_FLIGHT,
      }),
  },
  {
    name: 'stranded-job sweeper: ends jobs of the kernel table whose workflow is gone (agent runs, crawls, batch scrapes, extracts and monitor runs through their own end)',
    runs: onControl,
    start: (ctx) => startJobSweeper({ ...sweeping(ctx), onFailed: (jobId, reason) => ctx.log.warn({ jobId, reason }, 'stranded job ended') }),
  },
  {
    name: "page-version pruner: change tracking's old versions",
    runs: onControl,
    start: ({ env, db, log }) =>
      startPageVersionPruner({
        db,
        retentionDays: env.WDS_CHANGE_TRACKING_RETENTION_DAYS,
        forgetDays: env.WDS_CHANGE_TRACKING_FORGET_DAYS,
        onPruned: (r) => log.info(r, 'pruned page versions'),
      }),
  },
  {
    name: 'monitor upkeep: the tick Schedules (recreated from the monitors table when missing)',
    runs: onControl,
    async start(ctx) {
      const { env, log } = ctx;
      const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
      const upkeep = startMonitorUpkeep({
        db: ctx.db,
        everyMs: env.WDS_STRANDED_JOB_SWEEP_MS,
        client: new Client({ connection, namespace: env.TEMPORAL_NAMESPACE }),
        ticking: {
          shards: env.WDS_MONITOR_SHARDS,
          tickMs: env.WDS_MONITOR_TICK_MS,
          maxChecksPerRun: env.WDS_MONITOR_CHECKS_PER_RUN,
          catchupWindowMs: env.WDS_MONITOR_CATCHUP_WINDOW_MS,
          plan: MONITOR_RUN_PLAN,
        },
        onError: (e) => log.warn({ err: e }, 'could not set up the monitor tick schedules (retried in a minute)'),
      });
      return {
        async stop() {
          await upkeep.stop();
          await connection.close();
        },
      };
    },
  },
  {
    name: "monitor mailer: email summaries through the operator's SMTP server",
    runs: (env) => onControl(env) && !!env.WDS_SMTP_URL,
    start: ({ env, db }) =>
      startMonitorMailer({
        db, smtpUrl: env.WDS_SMTP_URL!, from: env.WDS_SMTP_FROM, publicUrl: env.WDS_PUBLIC_URL,
        // Confirm and unsubscribe links are signed with the file-link secret, which the API checks them with.
        secret: lazySigningSecret(env.WDS_FILE_SIGNING_SECRET, resolve(env.WDS_DATA_DIR)), confirmTtlSeconds: env.WDS_MONITOR_CONFIRM_TTL_SECONDS,
        confirmationsPerHour: env.WDS_MONITOR_CONFIRMATIONS_PER_HOUR,
      }),
  },
  {
    name: 'search backfill: indexes the pages stored before the index existed (once; resumable)',
    runs: (env) => onControl(env) && env.WDS_SEARCH_INDEX && env.WDS_SEARCH_BACKFILL,
    start: ({ db, log }) => startSearchBackfill({ db, log }),
  },
  {
    name: 'retention sweep: what zero-data-retention requests left behind, and expired jobs (packages/db retention.ts)',
    runs: onControl,
    start: ({ env, db, log }) =>
      startRetentionSweeper({
        db,
        everyMs: env.WDS_STRANDED_JOB_SWEEP_MS,
        resultTtlMs: env.WDS_ZDR_RESULT_TTL_MS,
        graceMs: 120_000,
        onSwept: (n) => log.info(n, 'retention sweep: rows left by ZDR requests whose API died, and expired jobs, deleted'),
      }),
  },
];

/** Starts the loops this worker runs; the handle stops them, last started first. */
export async function startLoops(ctx: LoopContext): Promise<Loop> {
  const started: Loop[] = [];
  for (const loop of LOOPS) if (loop.runs(ctx.env)) started.push(await loop.start(ctx));
  return {
    async stop() {
      for (const l of started.reverse()) await l.stop();
    },
  };
}
