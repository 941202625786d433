import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { apiEnvShape } from '../apps/api/src/env';
import { keysEnvShape, serverEnvShape } from '../apps/server/src/env';
import { workerEnvShape } from '../apps/worker/src/env';
import { renderConfigDocs } from './config-docs/render';

// docs/configuration.md is generated from the env schemas; this keeps it so. A variable added
// without a comment, or a page not regenerated after a schema changed, fails here.
const root = new URL('..', import.meta.url).pathname;
const pagePath = join(root, 'docs/configuration.md');
const run = promisify(execFile);
const gen = (...args: string[]) => run(process.execPath, ['--import', 'tsx', join(root, 'scripts/gen-config-docs.ts'), ...args], { cwd: root });

test('docs/configuration.md is what the env schemas say (npm run docs:config rewrites it)', async () => {
  assert.equal(readFileSync(pagePath, 'utf8'), await renderConfigDocs(), 'docs/configuration.md is stale: run `npm run docs:config`');
});

test('every variable every process parses has its own entry with its real default', () => {
  const page = readFileSync(pagePath, 'utf8');
  const shapes = { api: apiEnvShape, worker: workerEnvShape, start: serverEnvShape, cli: keysEnvShape };
  for (const [proc, shape] of Object.entries(shapes)) {
    for (const name of Object.keys(shape)) {
      assert.equal(page.split('\n').filter((l) => l === `#### \`${name}\``).length, 1, `${proc}: ${name} has one entry`);
    }
  }
  // Spot checks against the schemas themselves, read independently of the generator.
  const entry = (name: string) => page.slice(page.indexOf(`#### \`${name}\``)).split('\n')[2]!;
  assert.match(entry('WDS_FETCH_CONCURRENCY'), new RegExp(`^Default: \`${workerEnvShape.WDS_FETCH_CONCURRENCY.parse(undefined)}\` · Values: integer 1–1000 · Parsed by: worker · Used by: worker$`));
  assert.match(entry('WDS_SCRAPE_FETCH'), /^Default: `direct` · Values: one of `direct`, `queue`, `local` · Parsed by: API /);
  assert.match(entry('TEMPORAL_ADDRESS'), /^Default: API, worker: `127\.0\.0\.1:7233`; `npm start`: unset /);
  assert.match(entry('DATABASE_URL'), /API, worker: required/);
});

test('--check passes on the committed page and fails on a stale one, naming the fix', async () => {
  const ok = await gen('--check');
  assert.match(ok.stdout, /matches the env schemas/);
  const dir = mkdtempSync(join(tmpdir(), 'wds-config-docs-'));
  try {
    const stale = join(dir, 'configuration.md');
    // What a helper adding a variable without regenerating leaves behind: the page lacks one entry.
    writeFileSync(stale, readFileSync(pagePath, 'utf8').replace(/\n#### `WDS_WS_STALL_MS`\n[\s\S]*?(?=\n#### )/, ''));
    await assert.rejects(gen('--check', '--page', stale), (e: { code?: number; stderr?: string }) => e.code === 1 && /out of step.*npm run docs:config/s.test(e.stderr ?? ''));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
