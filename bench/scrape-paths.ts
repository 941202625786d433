import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { freePort, startEmbeddedPostgres, startTemporalDevServer } from '@wds/launch';
import { cpuByPid, cpuUsedBetween, round, runConcurrent, summary, writeResult } from './stats';

/**
 * Issue 20 (5): the ways a single scrape can travel from the API to a fetch worker and back,
 * measured without the scrape's work (fetch, convert, store) on the embedded default's servers
 * (Temporal dev server with SQLite, embedded Postgres), one process playing API and worker:
 *
 * - `activity`: a workflow on wds-control runs the fetch as an activity on wds-fetch (WDS_SCRAPE_FETCH=queue)
 * - `local`: the fetch as a local activity of the workflow's worker (WDS_SCRAPE_FETCH=local)
 * - `eager-local`: the same, started with eager workflow start (the worker must live in the
 *   API process: the server hands the first workflow task back in the start call)
 * - `update-with-start`: the fetch in an update handler, the caller waits for the update only
 * - `postgres`: the row is inserted with a NOTIFY, a fetch worker LISTENing claims it (UPDATE …
 *   RETURNING), completes it with a NOTIFY, and the API reads it back (no Temporal)
 *
 * Each path: latency one at a time (until the work has run and the caller could answer), and
 * at concurrency 8 its rate and the CPU per scrape of Temporal, Postgres and this process.
 */
const N = Number(process.env.BENCH_PATHS_N ?? 300);

type Path = (id: string) => Promise<void>;

export async function runScrapePathsBench() {
  const dataDir = mkdtempSync(join(tmpdir(), 'wds-paths-'));
  chmodSync(dataDir, 0o755);
  const pgs = await startEmbeddedPostgres({ dataDir, port: await freePort() });
  const temporal = await startTemporalDevServer({ dataDir, port: await freePort(), persistent: process.env.BENCH_TEMPORAL_MEMORY !== '1' });
  const roles = { temporal: new RegExp(`temporal.*--port ${temporal.address.split(':').pop()}\\b`), postgres: new RegExp(`postgres.*${dataDir}`), node: process.pid };

  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // installed already
  }
  const done = new Map<string, () => void>();
  const work = async (id: string) => done.get(id)?.();
  const nc = await NativeConnection.connect({ address: temporal.address });
  const workflowsPath = fileURLToPath(new URL('./scrape-paths.workflow.ts', import.meta.url));
  const control = await Worker.create({ connection: nc, namespace: 'default', taskQueue: 'paths-control', workflowsPath, activities: { work }, maxCachedWorkflows: 1000 });
  const fetchWorker = await Worker.create({ connection: nc, namespace: 'default', taskQueue: 'paths-fetch', activities: { work } });
  const running = Promise.all([control.run(), fetchWorker.run()]);
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  // Eager start needs a client over the worker's own (native) connection.
  const eagerClient = new Client({ connection: nc as never });

  const db = new pg.Pool({ connectionString: pgs.url, max: 10 });
  await db.query(`CREATE TABLE paths_jobs (id text PRIMARY KEY, status text NOT NULL DEFAULT 'pending', options jsonb, owner text, lease_until timestamptz, document jsonb)`);
  const api = new pg.Client({ connectionString: pgs.url });
  const fetcher = new pg.Client({ connectionString: pgs.url });
  await Promise.all([api.connect(), fetcher.connect()]);
  await api.query('LISTEN paths_done');
  await fetcher.query('LISTEN paths_queue');
  const stored = new Map<string, () => void>();
  api.on('notification', (n) => stored.get(n.payload!)?.());
  fetcher.on('notification', (n) => {
    void (async () => {
      const r = await db.query(`UPDATE paths_jobs SET owner = 'w1', lease_until = now() + interval '10 s' WHERE id = $1 AND status = 'pending' AND owner IS NULL RETURNING options`, [n.payload]);
      if (!r.rowCount) return;
      await db.query(`WITH d AS (UPDATE paths_jobs SET status = 'completed', document = $2 WHERE id = $1 RETURNING id) SELECT pg_notify('paths_done', id) FROM d`, [n.payload, JSON.stringify({ markdown: 'x' })]);
    })();
  });

  const untilWorked = (id: string, start: () => Promise<unknown>) => {
    const reached = new Promise<void>((r) => done.set(id, r));
    return start().then(() => reached).finally(() => done.delete(id));
  };
  let seq = 0;
  const paths: Record<string, Path> = {
    activity: (id) => untilWorked(id, () => client.workflow.start('viaActivity', { taskQueue: 'paths-control', workflowId: id, args: [id] })),
    local: (id) => untilWorked(id, () => client.workflow.start('viaLocal', { taskQueue: 'paths-control', workflowId: id, args: [id] })),
    'eager-local': (id) => untilWorked(id, () => eagerClient.workflow.start('viaLocal', { taskQueue: 'paths-control', workflowId: id, args: [id], requestEagerStart: true })),
    'update-with-start': async (id) => {
      const op = new WithStartWorkflowOperation('viaUpdate', { taskQueue: 'paths-control', workflowId: id, workflowIdConflictPolicy: 'FAIL' });
      await client.workflow.executeUpdateWithStart('scrape', { args: [id], startWorkflowOperation: op });
    },
    postgres: async (id) => {
      const answered = new Promise<void>((r) => stored.set(id, r));
      await db.query(`WITH j AS (INSERT INTO paths_jobs (id, options) VALUES ($1, $2) RETURNING id) SELECT pg_notify('paths_queue', id) FROM j`, [id, JSON.stringify({ url: 'http://x/' })]);
      await answered;
      stored.delete(id);
      await db.query('SELECT status, document FROM paths_jobs WHERE id = $1', [id]);
    },
  };

  const results: Record<string, unknown> = {};
  try {
    for (const round_ of [1, 2]) {
      for (const [name, path] of Object.entries(paths)) {
        const run = (i: number) => path(`${name}-${round_}-${i}-${seq++}`);
        await runConcurrent(30, 1, run); // warm-up
        const one = summary(await runConcurrent(N, 1, run));
        const cpu0 = cpuByPid(roles);
        const t0 = performance.now();
        await runConcurrent(N, 8, run);
        const secs = (performance.now() - t0) / 1000;
        // Workflows finish their bookkeeping after the caller's answer: wait for it, so its CPU counts.
        await new Promise((r) => setTimeout(r, 1_500));
        const cpu = cpuUsedBetween(cpu0, cpuByPid(roles));
        const perScrape = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, round((v * 1000) / N, 2)]));
        const prev = results[name] as { rounds: unknown[] } | undefined;
        const entry = { latencyMs: one, concurrency8PerSec: round(N / secs, 1), cpuMsPerScrape: perScrape };
        results[name] = { rounds: [...(prev?.rounds ?? []), entry] };
        console.log(`${name} (round ${round_}): p50 ${one.p50} ms, ${entry.concurrency8PerSec}/s at 8, CPU ms/scrape ${JSON.stringify(perScrape)}`);
      }
    }
    const result = { bench: 'scrape-paths', temporalPersistence: process.env.BENCH_TEMPORAL_MEMORY === '1' ? 'memory' : 'sqlite', n: N, paths: results };
    console.log(JSON.stringify(result, null, 2));
    console.log(`written to ${writeResult('scrape-paths', result)}`);
    return result;
  } finally {
    control.shutdown();
    fetchWorker.shutdown();
    await running;
    await connection.close();
    await Promise.all([api.end(), fetcher.end(), db.end()]);
    await nc.close();
    await temporal.stop();
    await pgs.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
