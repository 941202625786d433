import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Firecrawl from '@mendable/firecrawl-js';
import { Client, Connection } from '@temporalio/client';
import { exitOf, FAST_MONITOR_ENV, html, startFixtureSite, until, type FixtureSite } from '@wds/test-utils';
import { freePort, spawnUntilReady } from '@wds/launch';

// `npm start` as a new user runs it: embedded Postgres, the Temporal dev server on a SQLite
// file, the API and one worker, all from one command with nothing set but a data directory.
// Stopped and started again on the same directory, it must still know the earlier work.
const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
let dataDir: string;
let site: FixtureSite;
let ports: { api: number; pg: number; temporal: number };

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'wds-embedded-'));
  chmodSync(dataDir, 0o755); // as root, embedded Postgres runs as another user
  site = await startFixtureSite({ '/hello': html('<html><head><title>Hello</title></head><body><main><h1>Hello, embedded</h1><p>From one command.</p></main></body></html>') });
  ports = { api: await freePort(), pg: await freePort(), temporal: await freePort() };
});
after(async () => {
  await site?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startEmbedded(extra: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string; key: string; output(): string }> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    WDS_DATA_DIR: dataDir,
    PORT: String(ports.api),
    WDS_EMBEDDED_PG_PORT: String(ports.pg),
    WDS_EMBEDDED_TEMPORAL_PORT: String(ports.temporal),
    WDS_EMBEDDED_TEMPORAL_UI_PORT: '0',
    // The fixture site is on 127.0.0.1; metrics ports picked freely beside the other test files.
    WDS_ALLOW_PRIVATE_NETWORK: 'true',
    WDS_METRICS_PORT: '0',
    WDS_TEMPORAL_METRICS_PORT: '0',
    // Chromium is not what this test is about; the embedded worker would start it otherwise.
    WDS_WORKER_QUEUES: 'wds-control,wds-fetch',
    ...extra,
  };
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  delete env.WDS_API_KEY;
  const { child, ready, output } = await spawnUntilReady('npm start', [MAIN], env, /wds: ready: (\S+)\s+\(API key: (\S+)\)/, { timeoutMs: 120_000 });
  return { child, url: ready[1]!, key: ready[2]!, output };
}

async function stop(app: { child: ChildProcess; output(): string }) {
  app.child.kill('SIGTERM');
  const exit = await exitOf(app.child);
  assert.equal(exit.code, 0, `a clean stop on SIGTERM:\n${app.output()}`);
}

test('one command starts everything; a restart on the same data directory keeps jobs, results and the key', async () => {
  // The scrape runs as a workflow (not dispatched directly, the default), so Temporal has a job to keep.
  const first = await startEmbedded({ WDS_SCRAPE_FETCH: 'queue' });
  let scrapeId: string;
  try {
    const fc = new Firecrawl({ apiKey: first.key, apiUrl: first.url });
    const doc = await fc.scrape(site.url('/hello'), { formats: ['markdown'] });
    assert.match(doc.markdown!, /# Hello, embedded/);
    assert.equal(doc.metadata?.title, 'Hello');
    scrapeId = doc.metadata!.scrapeId as string;
    assert.ok(scrapeId);
    // Temporal keeps its state in a SQLite file in the data dir, journalled with WAL.
    assert.ok(existsSync(join(dataDir, 'temporal.sqlite')));
    assert.ok(existsSync(join(dataDir, 'temporal.sqlite-wal')), 'the SQLite file runs in WAL mode');
  } finally {
    await stop(first);
  }

  const second = await startEmbedded();
  try {
    assert.equal(second.key, first.key, 'the bootstrap key is kept in the data dir');
    // Postgres kept the result...
    const r = await fetch(`${second.url}/v2/scrape/${scrapeId}`, { headers: { authorization: `Bearer ${second.key}` } });
    assert.equal(r.status, 200);
    const body = (await r.json()) as { data: { markdown: string } };
    assert.match(body.data.markdown, /Hello, embedded/);
    // ...and Temporal the workflow that produced it.
    const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}` });
    try {
      const d = await new Client({ connection }).workflow.getHandle(`scrape-${scrapeId}`).describe();
      assert.equal(d.status.name, 'COMPLETED');
    } finally {
      await connection.close();
    }
  } finally {
    await stop(second);
  }
});

test('npm start supervises: a SIGKILLed worker is restarted and scrapes work again within 30 s; SIGTERM stops everything', async (t) => {
  const app = await startEmbedded();
  // The launcher's child running apps/<name>/src/main.ts, from the process table.
  const pidOf = (name: 'api' | 'worker') => {
    const rows = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(app.child.pid)], { encoding: 'utf8' }).split('\n');
    return Number(rows.find((r) => r.includes(`/${name}/src/main.ts`))?.trim().split(/\s+/)[0] ?? NaN);
  };
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  let stopped = false;
  try {
    const fc = new Firecrawl({ apiKey: app.key, apiUrl: app.url });
    const apiPid = pidOf('api');
    const killed = pidOf('worker');
    assert.ok(apiPid > 0 && killed > 0, app.output());
    process.kill(killed, 'SIGKILL');
    const t0 = Date.now();
    // Scrapes until one succeeds: the first ones may wait for a worker to come back.
    const doc = await until(() => fc.scrape(site.url('/hello'), { formats: ['markdown'], maxAge: 0, timeout: 15_000 } as never).catch(() => null), 'a scrape to succeed', {
      timeoutMs: 30_000,
      everyMs: 250,
    });
    const took = Date.now() - t0;
    t.diagnostic(`a scrape succeeded ${took} ms after the worker was killed`);
    assert.match(doc.markdown!, /# Hello, embedded/);
    assert.ok(took < 30_000, `scrapes work again ${took} ms after the kill`);
    assert.match(app.output(), /"name":"server".*"msg":"worker was killed by SIGKILL; restarting it in \d+ ms/);
    const restarted = await until(() => pidOf('worker') || null, 'the new worker in the process table');
    assert.ok(restarted !== killed && alive(restarted), 'a new worker process');
    assert.ok(alive(apiPid), 'the API was left alone');

    stopped = true;
    await stop(app);
    assert.ok(!alive(restarted) && !alive(apiPid), 'SIGTERM stopped the children');
  } finally {
    // After a failure: stopped without asserting, so the failure itself is what is reported.
    if (!stopped) {
      app.child.kill('SIGTERM');
      await exitOf(app.child);
    }
  }
});

// Monitors across a restart: schedules seconds apart, ticking every second.
const MONITOR_ENV = { ...FAST_MONITOR_ENV, WDS_STRANDED_JOB_SWEEP_MS: '500' };

test('a restart of the embedded stack keeps a monitor\'s schedule firing', { timeout: 300_000 }, async () => {
  const first = await startEmbedded(MONITOR_ENV);
  let monitorId: string;
  let before: number;
  try {
    const fc = new Firecrawl({ apiKey: first.key, apiUrl: first.url });
    monitorId = (await fc.createMonitor({ name: 'across restarts', schedule: { text: 'every 2 seconds' }, targets: [{ type: 'scrape', urls: [site.url('/hello')] }] })).id;
    const done = () => fc.listMonitorChecks(monitorId, { limit: 100 }).then((cs) => cs.filter((c) => c.trigger === 'scheduled' && c.status === 'completed'));
    before = (await until(async () => ((await done()).length >= 2 ? await done() : null), 'two scheduled checks', { timeoutMs: 90_000, everyMs: 500 })).length;
  } finally {
    await stop(first);
  }
  const second = await startEmbedded(MONITOR_ENV);
  try {
    const fc = new Firecrawl({ apiKey: second.key, apiUrl: second.url });
    const restartedAt = Date.now();
    const after = await until(async () => {
      const cs = (await fc.listMonitorChecks(monitorId, { limit: 100 })).filter((c) => c.trigger === 'scheduled' && c.status === 'completed' && Date.parse(c.startedAt!) > restartedAt);
      return cs.length >= 2 ? cs : null;
    }, 'scheduled checks after the restart', { timeoutMs: 90_000, everyMs: 500 });
    assert.ok(after.length >= 2 && before >= 2);
    assert.ok(after.every((c) => c.summary.same === 1), 'the checks compare with the version from before the restart');
  } finally {
    await stop(second);
  }
});
