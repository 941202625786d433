import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { call, namespaceFor, startStack, type Stack } from '@wds/test-utils';

// Firecrawl's wire answers where client code branches (issue 35): the validation envelope on every
// JSON route, malformed JSON before authentication, one job-id sentence, /crawl/ongoing. Raw HTTP
// for the bodies, firecrawl-js for what its users see.
let stack: Stack;

before(async () => {
  stack = await startStack({ namespace: namespaceFor(import.meta.url) });
});
after(async () => {
  await stack?.stop();
});

const UNRECOGNIZED = 'Unrecognized key in body -- please review the v2 API documentation for request body changes';
const INVALID_JOB_ID = 'Invalid job ID format. Job ID must be a valid UUID.';
const url = 'https://example.com/';

describe('the validation envelope on every route that takes a JSON body', () => {
  const routes: [string, Record<string, unknown>][] = [
    ['/v2/scrape', { url }],
    ['/v2/crawl', { url }],
    ['/v2/batch/scrape', { urls: [url] }],
    ['/v2/map', { url }],
    ['/v2/search', { query: 'q' }],
    ['/v2/extract', { urls: [url], prompt: 'p' }],
    ['/v2/agent', { prompt: 'p' }],
    ['/v2/crawl/params-preview', { url, prompt: 'p' }],
  ];
  for (const [path, valid] of routes) {
    test(`${path}: an unknown key → 400 BAD_REQUEST with Firecrawl's sentence and details; malformed JSON → BAD_REQUEST_INVALID_JSON even with a wrong key`, async () => {
      const r = await call(stack, 'POST', path, { ...valid, bogusKey: 1 });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.success, false);
      assert.equal(r.json.code, 'BAD_REQUEST');
      assert.equal(r.json.error, UNRECOGNIZED);
      assert.ok(Array.isArray(r.json.details) && r.json.details.some((d: { code: string }) => d.code === 'unrecognized_keys'), r.text);
      const bad = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { authorization: 'Bearer not-a-key-0000', 'content-type': 'application/json' }, body: '{"url": "x",' });
      assert.equal(bad.status, 400);
      const body = (await bad.json()) as { success: boolean; code: string; error: string };
      assert.deepEqual({ success: body.success, code: body.code, error: body.error }, { success: false, code: 'BAD_REQUEST_INVALID_JSON', error: 'Bad request, malformed JSON' });
    });
  }

  test('a custom rule\'s message is the error the SDK raises (waitFor over half of timeout)', async () => {
    const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
    await assert.rejects(fc.scrape(url, { waitFor: 6000, timeout: 10000 }), (e: Error & { status?: number; code?: string }) => {
      assert.equal(e.message, 'waitFor must not exceed half of timeout');
      assert.equal(e.status, 400);
      return true;
    });
    const raw = await call(stack, 'POST', '/v2/crawl', { url, scrapeOptions: { waitFor: 6000, timeout: 10000 } });
    assert.equal(raw.status, 400, raw.text);
    assert.deepEqual([raw.json.code, raw.json.error], ['BAD_REQUEST', 'waitFor must not exceed half of timeout']);
    assert.deepEqual(raw.json.details[0].path, ['scrapeOptions', 'waitFor']);
  });

  test('a well-formed body with a wrong key is still 401 (authentication runs after parsing, before validation)', async () => {
    const r = await call({ url: stack.url, apiKey: 'not-a-key-0000' }, 'POST', '/v2/scrape', { url, bogusKey: 1 });
    assert.equal(r.status, 401, r.text);
  });
});

describe('job ids', () => {
  const routes: [string, string, unknown?][] = [
    ['GET', '/v2/scrape/not-a-uuid'],
    ['POST', '/v2/scrape/not-a-uuid/interact', { code: 'console.log(1)' }],
    ['DELETE', '/v2/scrape/not-a-uuid/interact'],
    ['GET', '/v2/crawl/not-a-uuid'],
    ['DELETE', '/v2/crawl/not-a-uuid'],
    ['GET', '/v2/crawl/not-a-uuid/errors'],
    ['GET', '/v2/batch/scrape/not-a-uuid'],
    ['DELETE', '/v2/batch/scrape/not-a-uuid'],
    ['GET', '/v2/batch/scrape/not-a-uuid/errors'],
    ['GET', '/v2/extract/not-a-uuid'],
    ['GET', '/v2/agent/not-a-uuid'],
    ['DELETE', '/v2/agent/not-a-uuid'],
  ];
  for (const [method, path, body] of routes) {
    test(`${method} ${path} → 400 with Firecrawl's sentence`, async () => {
      const r = await call(stack, method, path, body);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.success, false);
      assert.equal(r.json.error, INVALID_JOB_ID);
    });
  }

  test('the SDK raises the sentence', async () => {
    const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
    await assert.rejects(fc.getCrawlStatus('not-a-uuid'), (e: Error) => e.message.includes(INVALID_JOB_ID));
  });
});

test('GET /v2/crawl/ongoing answers as /v2/crawl/active', async () => {
  const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  const active = await fc.getActiveCrawls();
  const ongoing = await call(stack, 'GET', '/v2/crawl/ongoing');
  assert.equal(ongoing.status, 200, ongoing.text);
  assert.equal(ongoing.json.success, true);
  assert.deepEqual(ongoing.json.crawls, active.crawls);
  assert.equal((await call({ url: stack.url, apiKey: 'not-a-key-0000' }, 'GET', '/v2/crawl/ongoing')).status, 401);
});
