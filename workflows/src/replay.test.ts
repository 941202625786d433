import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';

// Histories of real runs (scripts/capture-histories.ts) must replay on today's workflow code
// without a nondeterminism error: workflows running during a deploy continue on the new code.
// A change that fails here needs patched() (DESIGN §4), not a fresh capture.
const require = createRequire(import.meta.url);
const dir = new URL('./histories/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

test('committed histories replay on the current workflow code', async () => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  assert.ok(files.length >= 5, `histories found: ${files.join(', ')}`);
  const histories = files.map((f) => ({ workflowId: f.replace(/\.json$/, ''), history: historyFromJSON(JSON.parse(readFileSync(new URL(f, dir), 'utf8'))) }));
  const failures: string[] = [];
  for await (const r of Worker.runReplayHistories({ workflowsPath: require.resolve('@wds/workflows') }, histories)) {
    if (r.error) failures.push(`${r.workflowId}: ${r.error.message}`);
  }
  assert.deepEqual(failures, []);
});
