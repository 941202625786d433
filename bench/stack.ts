import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectDb, createKey, ensureTeam, migrateDb } from '@wds/db';
import { freePort, spawnApp, startEmbeddedPostgres, startTemporalDevServer, stopChild, type AppProcess } from '@wds/launch';

/** The embedded stack as users run it (Temporal persisted to SQLite), for benchmarks. */
export interface BenchStack {
  base: string;
  key: string;
  /** Bearer key and JSON content type, for every request to the API. */
  headers: Record<string, string>;
  api: AppProcess;
  worker: AppProcess;
  /** Where Postgres and Temporal keep their files (it appears in their command lines). */
  dataDir: string;
  databaseUrl: string;
  temporalAddress: string;
  /** The env the API and worker were started with (to start another worker like them). */
  env: Record<string, string>;
  /** The stack's processes for cpuByRole (bench/stats.ts): Postgres backends and Temporal come with their parents. */
  roles: Record<'api' | 'worker' | 'postgres' | 'temporal', number | RegExp>;
  stop(): Promise<void>;
}

export async function startBenchStack(opts: { temporalInMemory?: boolean; /** Extra Postgres server arguments. */ pgFlags?: string[]; nodeArgs?: string[]; /** More env for the API and worker (e.g. an LLM provider). */ env?: Record<string, string> } = {}): Promise<BenchStack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'wds-bench-'));
  chmodSync(dataDir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir, port: await freePort(), flags: opts.pgFlags });
  const temporal = await startTemporalDevServer({ dataDir, port: await freePort(), persistent: !opts.temporalInMemory });
  const dbh = connectDb(pg.url, { max: 2 });
  await migrateDb(dbh);
  const { key } = await createKey(dbh.db, await ensureTeam(dbh.db, 'bench'));
  await dbh.close();
  const env = {
    DATABASE_URL: pg.url,
    TEMPORAL_ADDRESS: temporal.address,
    PORT: '0',
    HOST: '127.0.0.1',
    WDS_ALLOW_PRIVATE_NETWORK: 'true',
    LOG_LEVEL: 'warn',
    WDS_METRICS_PORT: '0',
    WDS_TEMPORAL_METRICS_PORT: '0',
    // Benchmarks measure throughput: the default per-team limits (600 scrapes a minute, ...) would cap it.
    ...Object.fromEntries(['SCRAPE', 'CRAWL', 'BATCH', 'MAP', 'PARSE', 'STATUS', 'OTHER'].map((c) => [`WDS_RATE_LIMIT_${c}`, '0'])),
    WDS_MAX_CONCURRENT_SCRAPES: '0',
    // The monitor bench creates more monitors, the agent bench asks for more maxCredits, than a team may by default.
    WDS_MAX_MONITORS: '0',
    WDS_AGENT_MAX_CREDITS: '0',
    ...opts.env,
  };
  // BENCH_PROFILE_DIR: CPU profiles of the API and worker (written when they stop) for Chrome DevTools.
  const prof = process.env.BENCH_PROFILE_DIR;
  const nodeArgs = [...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []), ...(opts.nodeArgs ?? [])];
  const [worker, api] = await Promise.all([spawnApp('worker', env, { nodeArgs }), spawnApp('api', env, { nodeArgs })]);
  return {
    base: api.url!.replace('localhost', '127.0.0.1'),
    key,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    api,
    worker,
    dataDir,
    env,
    databaseUrl: pg.url,
    temporalAddress: temporal.address,
    // Temporal by its port: its command line names the data dir only when it persists to SQLite.
    roles: { api: api.child.pid!, worker: worker.child.pid!, postgres: new RegExp(`postgres.*${dataDir}`), temporal: new RegExp(`temporal.*--port ${temporal.address.split(':').pop()}\\b`) },
    async stop() {
      await Promise.all([stopChild(api.child), stopChild(worker.child)]);
      await temporal.stop();
      await pg.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
