import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { findTemporalCli, freePort, spawnUntilReady } from '@wds/launch';
import { exitOf } from '@wds/test-utils';

// `npm start` on a machine that lacks a tool must say, in one line, what is missing and how to
// get it — not print a stack trace, and not leave anything running.
const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const NOWHERE = '/nonexistent/wds-fresh-machine';
let dataDir: string;

before(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'wds-fresh-'));
  chmodSync(dataDir, 0o755);
});
after(() => rmSync(dataDir, { recursive: true, force: true }));

function baseEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    ...process.env, WDS_DATA_DIR: dataDir, CHROMIUM_PATH: `${NOWHERE}/chromium`, FFMPEG_PATH: `${NOWHERE}/ffmpeg`, YTDLP_PATH: `${NOWHERE}/yt-dlp`,
  };
  for (const k of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_CLI_PATH', 'WDS_API_KEY']) delete env[k];
  return env;
}

/** Runs the launcher to its exit; returns its code and everything it printed. */
async function runToExit(env: Record<string, string | undefined>): Promise<{ code: number | null; out: string; ms: number }> {
  const t0 = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const exit = await exitOf(child);
  clearTimeout(timer);
  return { code: exit.code, out, ms: Date.now() - t0 };
}

function assertOneLine(out: string, pattern: RegExp) {
  const lines = out.trim().split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `exactly one line, got:\n${out}`);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(out, /^\s+at /m, 'no stack trace');
}

test('no Temporal CLI anywhere (PATH, HOME, no download): one line naming it and how to install it, exit 1', async () => {
  // PATH holds only node's own directory; HOME has no ~/go/bin/temporal.
  const r = await runToExit({ ...baseEnv(), PATH: dirname(process.execPath), HOME: dataDir, WDS_TEMPORAL_DOWNLOAD: 'false' });
  assert.equal(r.code, 1, r.out);
  assertOneLine(r.out, /^wds: cannot start: the Temporal CLI is missing .*go install github\.com\/temporalio\/cli\/cmd\/temporal@v1\.5\.1/);
  assert.ok(r.ms < 30_000, `it fails before starting anything (${r.ms} ms)`);
});

test('TEMPORAL_CLI_PATH pointing nowhere: one line naming the variable and how to install the CLI, exit 1', async () => {
  const r = await runToExit({ ...baseEnv(), PATH: dirname(process.execPath), TEMPORAL_CLI_PATH: `${NOWHERE}/temporal` });
  assert.equal(r.code, 1, r.out);
  assertOneLine(r.out, /^wds: cannot start: the Temporal CLI is missing: TEMPORAL_CLI_PATH=\/nonexistent\/wds-fresh-machine\/temporal does not exist; install it with `go install /);
});

test('no Chromium, no ffmpeg, no yt-dlp: the service starts, and the worker says in one line each that browser and media work are off and how to get them', async () => {
  const cli = findTemporalCli(process.env.TEMPORAL_CLI_PATH);
  assert.ok(cli, 'this test needs the Temporal CLI that npm test itself needs');
  const env = {
    ...baseEnv(),
    TEMPORAL_CLI_PATH: cli,
    PORT: String(await freePort()),
    WDS_EMBEDDED_PG_PORT: String(await freePort()),
    WDS_EMBEDDED_TEMPORAL_PORT: String(await freePort()),
    WDS_EMBEDDED_TEMPORAL_UI_PORT: '0',
    WDS_METRICS_PORT: '0',
    WDS_TEMPORAL_METRICS_PORT: '0',
  };
  const { child, output } = await spawnUntilReady('npm start', [MAIN], env, /wds: ready: (\S+)/, { timeoutMs: 180_000 });
  try {
    // The worker's line comes as it starts its queues, around the launcher's ready line.
    const deadline = Date.now() + 30_000;
    while (!(/not serving wds-browser/.test(output()) && /not serving wds-media/.test(output())) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const lines = output().split('\n').filter((l) => /chromium/i.test(l));
    assert.equal(lines.length, 1, output());
    // The worker's log line (JSON, h2's @wds/log): what is off, what is missing and how to get it.
    assert.match(lines[0]!, /not serving wds-browser .*CHROMIUM_PATH.*apt-get install chromium-headless-shell/);
    const media = output().split('\n').filter((l) => /ffmpeg|yt-dlp/i.test(l));
    assert.equal(media.length, 1, output());
    assert.match(media[0]!, /not serving wds-media .*FFMPEG_PATH.*apt-get install ffmpeg.*YTDLP_PATH/);
    assert.doesNotMatch(output(), /^\s+at /m, 'no stack trace');
  } finally {
    child.kill('SIGTERM');
    const exit = await exitOf(child);
    assert.equal(exit.code, 0, output());
  }
});
