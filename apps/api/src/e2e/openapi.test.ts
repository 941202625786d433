import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { chromium, type Browser } from 'playwright-core';
import { resolveChromiumExecutable } from '@wds/browser';
import { call, html, namespaceFor, ResponseMismatchError, startFixtureSite, startStack, type FixtureSite, type Stack } from '@wds/test-utils';

let stack: Stack;
let site: FixtureSite;
let stopped = false;

before(async () => {
  [stack, site] = await Promise.all([startStack({ namespace: namespaceFor(import.meta.url) }), startFixtureSite({ '/a': html('<html><body><p>a</p></body></html>') })]);
});
after(async () => {
  await site?.close();
  if (!stopped) await stack?.stop();
});

test('GET /v2/openapi.json: no auth, a valid OpenAPI 3.1 document of every route', async () => {
  const res = await fetch(`${stack.url}/v2/openapi.json`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
  assert.equal(doc.openapi, '3.1.0');
  const v = new Validator();
  const r = await v.validate(doc as never);
  assert.equal(r.valid, true, JSON.stringify(r.errors)?.slice(0, 2000));
  for (const p of ['/v2/scrape', '/v2/scrape/{id}', '/v2/crawl', '/v2/crawl/{id}', '/v2/crawl/{id}/errors', '/v2/crawl/active', '/v2/batch/scrape', '/v2/map', '/v2/parse', '/v2/files/{path}', '/health', '/ready', '/metrics', '/v2/openapi.json', '/docs', '/docs/{asset}']) {
    assert.ok(doc.paths[p], p);
  }
  // The route check at the API's start compared these paths with the routes it registered; a
  // difference would be in the mismatch file and fail stop() below.
});

test('GET /docs: the reference rendered from the document in Chromium, every file from the API itself, no auth', async () => {
  const doc = (await (await fetch(`${stack.url}/v2/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const operations = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
  const raw = await fetch(`${stack.url}/docs`);
  assert.equal(raw.status, 200);
  assert.match(raw.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(raw.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  const missing = await call(stack, 'GET', '/docs/swagger-ui.js');
  assert.equal(missing.status, 404, missing.text);
  assert.equal(missing.json.success, false);

  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({ executablePath: resolveChromiumExecutable(), args: ['--no-sandbox'] });
    const page = await browser.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(String(e)));
    await page.goto(`${stack.url}/docs`, { timeout: 60_000 });
    const op = (method: string, path: string) => page.locator(`.opblock-${method} .opblock-summary-path[data-path="${path}"]`);
    await op('post', '/v2/scrape').waitFor({ timeout: 60_000 });
    assert.equal(await op('post', '/v2/crawl').count(), 1);
    assert.equal(await op('get', '/v2/crawl/{id}').count(), 1);
    assert.equal(await op('post', '/v2/agent').count(), 1);
    // Every operation of the document has its block, and opening one shows its request body's schema.
    assert.equal(await page.locator('.opblock').count(), operations);
    await op('post', '/v2/scrape').click();
    await page.locator('.opblock-post.is-open .opblock-section-request-body').waitFor({ timeout: 30_000 });
    assert.match(await page.locator('.opblock-post.is-open').first().innerText(), /formats/);
    const origin = new URL(stack.url).origin;
    assert.deepEqual(requests.filter((u) => !u.startsWith('data:') && new URL(u).origin !== origin), [], 'nothing is loaded from elsewhere');
    assert.ok(requests.some((u) => u.endsWith('/v2/openapi.json')), 'the page read the API\'s own document');
    assert.deepEqual(problems, [], 'no script error or content-security-policy refusal');
  } finally {
    await browser?.close();
  }
});

test('skip takes digits only, as the document says (schemathesis: negative data must be refused)', async () => {
  const batch = await call(stack, 'POST', '/v2/batch/scrape', { urls: [site.url('/a')] });
  assert.equal(batch.status, 200, batch.text);
  for (const skip of ['', '%205', '0x10', '1e3', '-1']) {
    const r = await call(stack, 'GET', `/v2/batch/scrape/${batch.json.id}?skip=${skip}`);
    assert.equal(r.status, 400, `skip=${skip}: ${r.text}`);
    assert.equal(r.json.success, false);
  }
  assert.equal((await call(stack, 'GET', `/v2/batch/scrape/${batch.json.id}?skip=0`)).status, 200);
});

test('schemathesis findings stay fixed', async () => {
  // A malformed x-request-id is refused in URL mode too, not ignored.
  const bad = await call(stack, 'POST', '/v2/scrape', { url: site.url('/a') }, { 'x-request-id': 'cKjEr!-g' });
  assert.equal(bad.status, 400, bad.text);
  assert.deepEqual(bad.json.details[0].path, ['x-request-id']);
  // A method no route answers is 404, even one whose body Fastify checks before routing.
  const query = await fetch(`${stack.url}/health`, { method: 'QUERY' });
  assert.equal(query.status, 404);
  assert.equal(((await query.json()) as { success: boolean }).success, false);
});

test('a response that does not match the document fails the test file when the stack stops', async () => {
  // What the API process appends when an answer breaks its schema (apps/api/src/response-check.ts).
  const health = await fetch(`${stack.url}/health`);
  assert.equal(health.status, 200);
  const file = stack.env.WDS_RESPONSE_CHECK_FILE!;
  assert.equal(existsSync(file) ? readFileSync(file, 'utf8') : '', '', 'the real answers so far all matched');
  appendFileSync(file, `${JSON.stringify({ method: 'GET', url: '/health', status: 200, problem: 'the body does not match its schema' })}\n`);
  stopped = true;
  await assert.rejects(stack.stop(), (e) => e instanceof ResponseMismatchError && /GET \/health|"\/health"/.test(e.message));
});
