import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Firecrawl from '@mendable/firecrawl-js';
import { exitOf, html, startFixtureSite, until, type FixtureSite } from '@wds/test-utils';
import { freePort, spawnUntilReady } from '@wds/launch';

// Monitors across a restart of `npm start` (embedded Postgres and the Temporal dev server on
// their files): the monitor's schedule keeps firing after the stack comes back. Schedules seconds
// apart (WDS_MONITOR_MIN_INTERVAL_SECONDS lowers the 5-minute floor for tests).
const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
let dataDir: string;
let site: FixtureSite;
let ports: { api: number; pg: number; temporal: number };

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'wds-embedded-monitor-'));
  chmodSync(dataDir, 0o755);
  site = await startFixtureSite({ '/watched': html('<html><head><title>Watched</title></head><body><main><p>Watched page.</p></main></body></html>') });
  ports = { api: await freePort(), pg: await freePort(), temporal: await freePort() };
});
after(async () => {
  await site?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startEmbedded(): Promise<{ child: ChildProcess; url: string; key: string; output(): string }> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    WDS_DATA_DIR: dataDir,
    PORT: String(ports.api),
    WDS_EMBEDDED_PG_PORT: String(ports.pg),
    WDS_EMBEDDED_TEMPORAL_PORT: String(ports.temporal),
    WDS_EMBEDDED_TEMPORAL_UI_PORT: '0',
    WDS_ALLOW_PRIVATE_NETWORK: 'true',
    WDS_METRICS_PORT: '0',
    WDS_TEMPORAL_METRICS_PORT: '0',
    WDS_WORKER_QUEUES: 'wds-control,wds-fetch',
    WDS_MONITOR_MIN_INTERVAL_SECONDS: '1',
    WDS_MONITOR_TICK_MS: '1000',
    WDS_MONITOR_JITTER_MS: '0',
    WDS_STRANDED_JOB_SWEEP_MS: '500',
  };
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  delete env.WDS_API_KEY;
  const { child, ready, output } = await spawnUntilReady('npm start', [MAIN], env, /wds: ready: (\S+)\s+\(API key: (\S+)\)/, { timeoutMs: 120_000 });
  return { child, url: ready[1]!, key: ready[2]!, output };
}

async function stop(app: { child: ChildProcess; output(): string }) {
  app.child.kill('SIGTERM');
  assert.equal((await exitOf(app.child)).code, 0, app.output());
}

test('a restart of the embedded stack keeps a monitor\'s schedule firing', { timeout: 300_000 }, async () => {
  const first = await startEmbedded();
  let monitorId: string;
  let before: number;
  try {
    const fc = new Firecrawl({ apiKey: first.key, apiUrl: first.url });
    monitorId = (await fc.createMonitor({ name: 'across restarts', schedule: { text: 'every 2 seconds' }, targets: [{ type: 'scrape', urls: [site.url('/watched')] }] })).id;
    const done = () => fc.listMonitorChecks(monitorId, { limit: 100 }).then((cs) => cs.filter((c) => c.trigger === 'scheduled' && c.status === 'completed'));
    before = (await until(async () => ((await done()).length >= 2 ? await done() : null), 'two scheduled checks', { timeoutMs: 90_000, everyMs: 500 })).length;
  } finally {
    await stop(first);
  }
  const second = await startEmbedded();
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
