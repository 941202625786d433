#!/usr/bin/env node
// `npm test`: starts the shared infrastructure once (a fresh embedded Postgres and a Temporal
// dev server with one namespace per test file), then runs every *.test.ts with node's test
// runner. End-to-end files start their own API and worker processes on that infrastructure.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { findTemporalCli, freePort, startEmbeddedPostgres, startTemporalDevServer } from '../packages/launch/src/infra.ts';

const root = new URL('..', import.meta.url).pathname;
const only = process.argv.slice(2);
const SKIP = new Set(['node_modules', '.git', '.wds', 'bench', '.venv-py']);
function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, p));
  }
  return out;
}
const files = find(root).filter((f) => !only.length || only.some((o) => f.includes(o))).sort();

if (!findTemporalCli(process.env.TEMPORAL_CLI_PATH)) {
  console.error('npm test: no Temporal CLI found (TEMPORAL_CLI_PATH, `temporal` on PATH, ~/go/bin/temporal).\n' +
    'Install it with: go install github.com/temporalio/cli/cmd/temporal@v1.5.1   (or run .ci/run, which does)');
  process.exit(1);
}

// The whole suite starts with the boundary rules (eslint.config.js); a filtered run skips them
// (scripts/lint.test.ts checks the rules themselves and runs when asked for).
if (!only.length) {
  const lint = spawn(process.execPath, [join(root, 'node_modules/eslint/bin/eslint.js'), '--max-warnings=0', '.'], { cwd: root, stdio: 'inherit' });
  const lintCode = await new Promise((r) => lint.on('exit', (c, s) => r(c ?? (s ? 1 : 0))));
  if (lintCode !== 0) {
    console.error('npm test: eslint found boundary violations (see above); fix them first.');
    process.exit(1);
  }
  console.log('# eslint: the boundary rules hold');
}

const dataDir = mkdtempSync(join(tmpdir(), 'wds-test-'));
// Postgres runs as its own user when we are root; it must be able to enter the directory.
chmodSync(dataDir, 0o755);
const namespaces = files.flatMap((f) => {
  const base = basename(f).replace(/\.test\.ts$/, '').replace(/[^a-z0-9-]/gi, '-');
  return [base, `${base}-b`];
});
const t0 = Date.now();
const pg = await startEmbeddedPostgres({ dataDir, port: await freePort() });
const temporal = await startTemporalDevServer({
  dataDir,
  port: await freePort(),
  persistent: false,
  cliPath: process.env.TEMPORAL_CLI_PATH,
  extraNamespaces: namespaces,
});
console.log(`# infrastructure ready in ${Date.now() - t0} ms (postgres ${pg.url.replace(/:[^:@/]+@/, ':***@')}, temporal ${temporal.address})`);

// --test-force-exit: a file whose tests have all ended exits even if a handle stayed open (a browser pool
// a failed assertion never closed kept a file alive at 0% CPU for 12 minutes, and CI for its whole budget).
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-force-exit', '--test-reporter=spec', `--test-concurrency=${process.env.WDS_TEST_CONCURRENCY ?? 2}`, ...files],
  { stdio: 'inherit', env: { ...process.env, WDS_TEST_DATABASE_URL: pg.url, WDS_TEST_TEMPORAL_ADDRESS: temporal.address } },
);
const code = await new Promise((r) => child.on('exit', (c, s) => r(c ?? (s ? 1 : 0))));
await temporal.stop().catch(() => {});
await pg.stop().catch(() => {});
rmSync(dataDir, { recursive: true, force: true });
process.exit(code);
