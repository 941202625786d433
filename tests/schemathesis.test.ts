import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { AppProcess } from '@wds/launch';
import { namespaceFor, startStack, type FixtureSite, type Stack } from '@wds/test-utils';
import { startEcosystemSite } from './fixture-site';
import { requireVenv, runTool } from './venv';

/**
 * Property-based fuzzing from the contract: schemathesis reads GET /v2/openapi.json and sends
 * generated valid and invalid requests to every operation (stateful links off), with a bounded
 * budget. It fails on any 5xx, any answer whose status, media type or body the document does
 * not allow, or a protected route answering without the key; the API's own response check
 * (stack.stop()) and the process checks below fail on the rest. tests/schemathesis_hooks/hooks.py keeps
 * every generated URL on the local fixture site.
 */
const MAX_EXAMPLES = process.env.WDS_SCHEMATHESIS_MAX_EXAMPLES ?? '25';
/** The checks that state a rule of this API; the others assume REST conventions it does not follow (e.g. 405 for other methods). */
const CHECKS = [
  'not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance',
  'response_headers_conformance', 'negative_data_rejection', 'ignored_auth', 'missing_required_header',
].join(',');

let stack: Stack;
let site: FixtureSite;
let browserWorker: AppProcess;

before(async () => {
  // No per-team rate limits: thousands of requests a minute must reach the handlers, not the 429 (limits.test.ts covers those).
  const unlimited = Object.fromEntries(['SCRAPE', 'CRAWL', 'BATCH', 'MAP', 'PARSE', 'STATUS', 'OTHER'].map((c) => [`WDS_RATE_LIMIT_${c}`, '0']));
  [stack, site] = await Promise.all([startStack({ namespace: namespaceFor(import.meta.url), env: unlimited }), startEcosystemSite()]);
  // A browser worker too: requests that need the browser (actions, screenshots) must be served, not answered 503.
  browserWorker = await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-browser', WDS_PUBLIC_URL: stack.url, WDS_BROWSER_PAGES: '2' });
});
after(async () => {
  await site?.close();
  await stack?.stop();
});

test('schemathesis finds no failure against the OpenAPI document', async () => {
  const st = requireVenv('schemathesis');
  const t0 = Date.now();
  const r = await runTool(st, [
    'run', `${stack.url}/v2/openapi.json`,
    '--url', stack.url,
    '-H', `Authorization: Bearer ${stack.apiKey}`,
    '--phases', 'examples,coverage,fuzzing',
    '--checks', CHECKS,
    '--max-examples', MAX_EXAMPLES,
    // One worker: Python 3.11.7's ast module is not thread-safe, and hypothesis parses lambdas with it (SystemError under --workers 2).
    '--workers', '1',
    '--seed', process.env.WDS_SCHEMATHESIS_SEED ?? '1',
    '--request-timeout', '90',
    '--suppress-health-check', 'all',
    '--no-color',
  ], {
    SCHEMATHESIS_HOOKS: 'tests.schemathesis_hooks.hooks',
    PYTHONPATH: '.',
    WDS_FUZZ_TARGET: site.url('/'),
  }, 20 * 60_000);
  console.log(r.output.trim().split('\n').slice(-60).join('\n'));
  console.log(`# schemathesis ran ${Math.round((Date.now() - t0) / 1000)} s`);
  assert.equal(r.code, 0, `schemathesis found failures (exit ${r.code}):\n${r.output.slice(-15_000)}`);

  // No process died under the fuzzing, and the stack still answers.
  assert.equal(stack.api.child.exitCode, null, 'the API process exited');
  assert.equal(stack.worker.child.exitCode, null, 'the worker process exited');
  assert.equal(browserWorker.child.exitCode, null, 'the browser worker process exited');
  const ready = await fetch(`${stack.url}/ready`);
  assert.equal(ready.status, 200);
});
