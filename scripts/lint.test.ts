import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ESLint } from 'eslint';

// The boundary rules of eslint.config.js, each shown failing on a deliberately bad file (and
// passing on the matching good one), so a rule that silently stops matching is noticed.
const root = new URL('..', import.meta.url).pathname;
const eslint = new ESLint({ cwd: root });

async function rulesHit(filePath: string, code: string): Promise<string[]> {
  const [r] = await eslint.lintText(code, { filePath });
  return r!.messages.map((m) => `${m.line}:${m.ruleId}`);
}

test('workflow code may import only @temporalio/workflow and its own pure modules', async () => {
  const bad = "import { Pool } from 'pg';\nimport { readFileSync } from 'node:fs';\nimport { sleep } from '@temporalio/workflow';\nexport const x = [Pool, readFileSync, sleep];\n";
  assert.deepEqual(await rulesHit('workflows/src/crawl/bad.ts', bad), ['1:@typescript-eslint/no-restricted-imports', '2:@typescript-eslint/no-restricted-imports']);
  const good = "import type { Db } from '@wds/db';\nimport { sleep } from '@temporalio/workflow';\nimport { TaskQueues } from '../common';\nexport const x: [Db | null, unknown, unknown] = [null, sleep, TaskQueues];\n";
  assert.deepEqual(await rulesHit('workflows/src/crawl/good.ts', good), []);
});

test('workflow code may not use timers, process or fetch', async () => {
  assert.deepEqual(await rulesHit('workflows/src/crawl/bad.ts', 'setTimeout(() => {}, 1);\nexport const p = process.pid;\n'), ['1:no-restricted-globals', '2:no-restricted-globals']);
});

test('no package, activity or workflow imports an app', async () => {
  for (const file of ['packages/fetch/src/bad.ts', 'activities/src/bad.ts', 'packages/test-utils/src/bad.ts']) {
    assert.deepEqual(await rulesHit(file, "import { buildApp } from '@wds/api';\nexport const b = buildApp;\n"), ['1:@typescript-eslint/no-restricted-imports'], file);
  }
  assert.deepEqual(await rulesHit('packages/fetch/src/bad.ts', "import { x } from '../../../apps/api/src/app';\nexport const y = x;\n"), ['1:@typescript-eslint/no-restricted-imports']);
});

test('the API never loads the browser engine', async () => {
  assert.deepEqual(await rulesHit('apps/api/src/bad.ts', "import { BrowserPool } from '@wds/browser';\nexport const b = BrowserPool;\n"), ['1:@typescript-eslint/no-restricted-imports']);
  assert.deepEqual(await rulesHit('apps/api/src/bad.ts', "import { chromium } from 'playwright-core';\nexport const b = chromium;\n"), ['1:@typescript-eslint/no-restricted-imports']);
});

test("configuration is read only in an app's env.ts", async () => {
  const code = "export const a = process.env.DATABASE_URL;\nexport const b = process.env['X'];\nexport const path = process.env.PATH;\nexport const inherit = { ...process.env };\n";
  assert.deepEqual(await rulesHit('apps/worker/src/queues.ts', code), ['1:no-restricted-syntax', '2:no-restricted-syntax']);
  assert.deepEqual(await rulesHit('packages/browser/src/bad.ts', code), ['1:no-restricted-syntax', '2:no-restricted-syntax']);
  assert.deepEqual(await rulesHit('apps/worker/src/env.ts', code), []);
});

test('import cycles are reported', async () => {
  const unignored = new ESLint({ cwd: root, ignore: false });
  const results = await unignored.lintFiles(['scripts/lint-fixtures/cycle/a.ts', 'scripts/lint-fixtures/cycle/b.ts']);
  for (const r of results) assert.ok(r.messages.some((m) => m.ruleId === 'import-x/no-cycle'), `${r.filePath}: ${JSON.stringify(r.messages)}`);
});


test('the production code has no import cycles, type imports counted (scripts/import-cycles.ts)', async () => {
  const { cyclesOf, importGraph, projectCycles } = await import('./import-cycles');
  const fixture = ['a.ts', 'b.ts'].map((f) => `${root}scripts/lint-fixtures/type-cycle/${f}`);
  assert.deepEqual(cyclesOf(importGraph(fixture)), [fixture], 'a cycle of type imports only is found');
  assert.deepEqual(projectCycles(), []);
});
