import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnApp, stopChild, type AppProcess } from '@wds/launch';
import { connectDb, createKey, ensureTeam, type DbHandle, type TeamFlags } from '@wds/db';

/**
 * The real stack for one test file: its own API and worker processes, on the Postgres and
 * Temporal server that scripts/test.mjs started for the whole run. Each file gets its own
 * Temporal namespace (pre-created by the runner) so its worker never takes another file's
 * tasks — stacks differ in settings such as WDS_ALLOW_PRIVATE_NETWORK.
 */
export interface Stack {
  url: string;
  apiKey: string;
  teamId: string;
  db: DbHandle;
  api: AppProcess;
  worker: AppProcess;
  namespace: string;
  env: Record<string, string>;
  /** Starts one more worker process on the same queues (fleet and failure tests). */
  addWorker(env?: Record<string, string>): Promise<AppProcess>;
  /** Starts one more API process on the same database and namespace (fleet and shutdown tests); its `url` is its own. */
  addApi(env?: Record<string, string>): Promise<AppProcess>;
  /** A fresh team with its own key (for cross-team and permission tests). */
  newTeam(opts?: { flags?: TeamFlags; scopes?: string[] }): Promise<{ teamId: string; apiKey: string }>;
  stop(): Promise<void>;
}

export function namespaceFor(testFileUrl: string, variant = ''): string {
  const base = basename(fileURLToPath(testFileUrl)).replace(/\.test\.ts$/, '').replace(/[^a-z0-9-]/gi, '-');
  return variant ? `${base}-${variant}` : base;
}

export function testInfra(): { databaseUrl: string; temporalAddress: string } {
  const databaseUrl = process.env.WDS_TEST_DATABASE_URL;
  const temporalAddress = process.env.WDS_TEST_TEMPORAL_ADDRESS;
  if (!databaseUrl || !temporalAddress) {
    throw new Error('End-to-end tests need the infrastructure started by `npm test` (scripts/test.mjs); run them through it.');
  }
  return { databaseUrl, temporalAddress };
}

let teamSeq = 0;

/**
 * Each stack gets its own database on the shared Postgres: stacks differ in settings (a
 * webhook secret, private-network access), and workers of one stack must never pick up
 * another's shared work (webhook deliveries, leases).
 */
export async function stackDatabase(adminUrl: string, namespace: string): Promise<string> {
  const name = `wds_${namespace.replace(/[^a-z0-9]/gi, '_').toLowerCase()}`.slice(0, 63);
  const admin = connectDb(adminUrl, { max: 1 });
  try {
    await admin.pool.query(`CREATE DATABASE "${name}"`).catch((e: { code?: string }) => {
      if (e.code !== '42P04') throw e; // already exists (a second stack of the same file)
    });
  } finally {
    await admin.close();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Mismatches between the API's answers and its OpenAPI document, recorded by every API process
 * of a stack (apps/api/src/response-check.ts) into one file: non-empty fails `stop()`.
 */
export function responseCheckFile(): { file: string; read(): string[]; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'wds-response-check-'));
  const file = join(dir, 'mismatches.jsonl');
  return {
    file,
    read: () => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export class ResponseMismatchError extends Error {
  constructor(readonly mismatches: string[]) {
    super(
      `${mismatches.length} response(s) did not match GET /v2/openapi.json (fix the controller or the schema in packages/contracts):\n` +
        mismatches.slice(0, 20).join('\n'),
    );
    this.name = 'ResponseMismatchError';
  }
}

/**
 * Monitors on a test's clock: schedules seconds apart (WDS_MONITOR_MIN_INTERVAL_SECONDS lowers the
 * 5-minute floor), a tick every second, no jitter.
 */
export const FAST_MONITOR_ENV = { WDS_MONITOR_MIN_INTERVAL_SECONDS: '1', WDS_MONITOR_TICK_MS: '1000', WDS_MONITOR_JITTER_MS: '0' } as const;

export async function startStack(opts: { namespace: string; env?: Record<string, string>; /** default true */ responseCheck?: boolean }): Promise<Stack> {
  const infra = testInfra();
  const check = opts.responseCheck === false ? null : responseCheckFile();
  const temporalAddress = infra.temporalAddress;
  const databaseUrl = await stackDatabase(infra.databaseUrl, opts.namespace);
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: opts.namespace,
    PORT: '0',
    HOST: '127.0.0.1',
    WDS_ALLOW_PRIVATE_NETWORK: 'true',
    LOG_LEVEL: 'warn',
    // Workers of parallel test files share the machine: free metrics ports, no Temporal exporter.
    WDS_METRICS_PORT: '0',
    WDS_METRICS_HOST: '127.0.0.1',
    WDS_TEMPORAL_METRICS_PORT: '0',
    ...(check ? { WDS_RESPONSE_CHECK_FILE: check.file } : {}),
    ...opts.env,
  };
  const db = connectDb(databaseUrl, { max: 4 });
  const started = await Promise.allSettled([spawnApp('worker', env), spawnApp('api', env)]);
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) {
    // Leave nothing running behind a failed start, or the test process never exits.
    await Promise.all(started.map((r) => (r.status === 'fulfilled' ? stopChild(r.value.child) : undefined)));
    await db.close();
    check?.remove();
    throw (failed as PromiseRejectedResult).reason;
  }
  const [worker, api] = started.map((r) => (r as PromiseFulfilledResult<AppProcess>).value) as [AppProcess, AppProcess];
  const newTeam: Stack['newTeam'] = async (o = {}) => {
    const teamId = await ensureTeam(db.db, `${opts.namespace}-${process.pid}-${++teamSeq}`, o.flags);
    const { key } = await createKey(db.db, teamId, { scopes: o.scopes ?? null });
    return { teamId, apiKey: key };
  };
  const main = await newTeam();
  // Every process started later, so that stop() leaves none behind (stopChild skips exited ones);
  // starts still under way are awaited first, or a process that becomes ready after stop() would leak.
  const extra: AppProcess[] = [];
  const starting = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    starting.add(p);
    return p.finally(() => starting.delete(p));
  };
  return {
    url: api.url!.replace('localhost', '127.0.0.1'),
    apiKey: main.apiKey,
    teamId: main.teamId,
    db,
    api,
    worker,
    namespace: opts.namespace,
    env,
    newTeam,
    async addWorker(more = {}) {
      const w = await track(spawnApp('worker', { ...env, ...more }));
      extra.push(w);
      return w;
    },
    async addApi(more = {}) {
      const a = await track(spawnApp('api', { ...env, ...more }));
      a.url = a.url!.replace('localhost', '127.0.0.1');
      extra.push(a);
      return a;
    },
    async stop() {
      await Promise.allSettled([...starting]);
      await Promise.all([stopChild(api.child), stopChild(worker.child), ...extra.map((p) => stopChild(p.child))]);
      await db.close();
      const mismatches = check?.read() ?? [];
      check?.remove();
      if (mismatches.length) {
        // The throw skips whatever the test file's after() does next (closing its fixture sites, …),
        // which would keep this process, and with it the test run, alive for ever: the file fails
        // either way, so it must also end. (unref: a process that ends by itself is not cut short.)
        setTimeout(() => process.exit(1), 10_000).unref();
        throw new ResponseMismatchError(mismatches);
      }
    },
  };
}

/** Raw HTTP helper for error-case tests (the SDK hides status codes and bodies). */
export async function call(stack: Pick<Stack, 'url' | 'apiKey'>, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${stack.apiKey}`,
      ...(body !== undefined && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' || body instanceof FormData ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}
