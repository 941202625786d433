import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { namespaceFor, startStack, type FixtureSite, type Stack } from '@wds/test-utils';
import { startEcosystemSite } from './fixture-site';
import { requireVenv, runTool } from './venv';

/**
 * firecrawl-py (tests/python/, pinned in requirements.txt) against the real stack: this file
 * starts the stack and the fixture site, runs pytest in .venv-py, and passes when pytest does.
 * Every response pytest receives is checked against the OpenAPI document like any other.
 */
let stack: Stack;
let site: FixtureSite;

before(async () => {
  [stack, site] = await Promise.all([startStack({ namespace: namespaceFor(import.meta.url) }), startEcosystemSite()]);
});
after(async () => {
  await site?.close();
  await stack?.stop();
});

test('the firecrawl-py suite passes against WDS', async () => {
  const pytest = requireVenv('pytest');
  const r = await runTool(pytest, ['tests/python', '-q', '-p', 'no:cacheprovider', '--color=no'], {
    WDS_API_URL: stack.url,
    WDS_API_KEY: stack.apiKey,
    WDS_SITE_URL: site.origin,
  }, 10 * 60_000);
  console.log(r.output.trim().split('\n').slice(-40).join('\n'));
  assert.equal(r.code, 0, `pytest failed (exit ${r.code}):\n${r.output.slice(-6000)}`);
  assert.match(r.output, /\b[1-9]\d* passed\b/);
});
