import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { Validator } from '@seriousme/openapi-schema-validator';
import { API_ROUTES, buildOpenApiDocument, V1_ROUTES, type ApiRoute } from '@wds/contracts';
import { installResponseCheck, ResponseChecker, type Mismatch } from './response-check';

const doc = buildOpenApiDocument();
const checker = new ResponseChecker(doc);
const json = (v: unknown) => JSON.stringify(v);
const ERR = 'application/json; charset=utf-8';

test('the generated document is valid OpenAPI 3.1', async () => {
  const v = new Validator();
  const r = await v.validate(structuredClone(doc));
  assert.equal(r.valid, true, JSON.stringify(r.errors, null, 1)?.slice(0, 4000));
  assert.equal(v.version, '3.1');
});

test('every route of the table is in the document, with its statuses and the error body', () => {
  for (const r of [...API_ROUTES, ...V1_ROUTES]) {
    const path = r.path.replace(/:([A-Za-z]+)/g, '{$1}').replace(/\*$/, '{path}');
    const op = doc.paths[path]?.[r.method.toLowerCase()] as { responses: Record<string, { content: Record<string, { schema: { $ref?: string } }> }> };
    assert.ok(op, `${r.method} ${path}`);
    for (const [status, res] of Object.entries(op.responses)) {
      if (Number(status) >= 400 && path !== '/ready') assert.equal(res.content['application/json']!.schema.$ref, '#/components/schemas/ErrorBody', `${path} ${status}`);
    }
  }
  assert.ok((doc.paths['/v2/crawl/{id}']!.get as Record<string, unknown>)['x-websocket'], 'the WebSocket is documented');
});

test('a matching answer passes; a wrong body, status, media type or route is reported', () => {
  const started = { success: true, id: '2b6d8a4e-2d1f-4e0a-9a53-2f1c3b9d7e11', url: 'http://x/v2/crawl/2b6d8a4e-2d1f-4e0a-9a53-2f1c3b9d7e11' };
  const base = { method: 'POST', route: '/v2/crawl', status: 200, contentType: ERR };
  assert.equal(checker.check({ ...base, body: json(started) }), null);
  // An undocumented extra field (the envelopes are strict), a missing one, a wrong type.
  assert.match(checker.check({ ...base, body: json({ ...started, extra: 1 }) })!.problem, /does not match/);
  assert.match(checker.check({ ...base, body: json({ success: true, id: started.id }) })!.errors!.join(), /url/);
  assert.match(checker.check({ ...base, body: json({ ...started, id: 'not-a-uuid' }) })!.errors!.join(), /uuid/);
  // Errors must carry the error body.
  assert.equal(checker.check({ ...base, status: 400, body: json({ success: false, error: 'Bad Request', details: [] }) }), null);
  assert.ok(checker.check({ ...base, status: 400, body: json({ error: 'Bad Request' }) }));
  assert.match(checker.check({ ...base, status: 418, body: json({ success: false, error: 'x' }) })!.problem, /status 418 is not documented/);
  assert.match(checker.check({ ...base, contentType: 'text/html', body: '<p>' })!.problem, /media type text\/html/);
  assert.match(checker.check({ ...base, route: '/v2/nope', body: '{}' })!.problem, /not in the OpenAPI document/);
  // No route: only the not-found error body.
  assert.equal(checker.check({ method: 'GET', route: undefined, status: 404, contentType: ERR, body: json({ success: false, error: 'Not Found' }) }), null);
  assert.ok(checker.check({ method: 'GET', route: undefined, status: 500, contentType: ERR, body: json({ success: false, error: 'x' }) }));
  // Other media types are checked by type only.
  assert.equal(checker.check({ method: 'GET', route: '/metrics', status: 200, contentType: 'text/plain; version=0.0.4; charset=utf-8', body: '# HELP' }), null);
  assert.equal(checker.check({ method: 'GET', route: '/v2/files/*', status: 200, contentType: 'image/png', body: undefined }), null);
});

test('registered routes must equal the documented ones', () => {
  const all = [...API_ROUTES, ...V1_ROUTES].map((r) => ({ method: r.method, url: r.path }));
  assert.deepEqual(checker.checkRoutes(all), []);
  const problems = checker.checkRoutes([...all.filter((r) => r.url !== '/v2/map'), { method: 'GET', url: '/v2/secret' }, { method: 'HEAD', url: '/health' }]);
  assert.deepEqual(problems.sort(), [
    'route GET /v2/secret is registered but not in the OpenAPI document',
    'route POST /v2/map is in the OpenAPI document but not registered',
  ]);
});

test('WebSocket messages are checked against JobStreamMessage', () => {
  const snapshot = { status: 'completed', total: 1, completed: 1, creditsUsed: 1, expiresAt: '2030-01-01T00:00:00.000Z', createdAt: '2030-01-01T00:00:00.000Z', duration: 0.5, data: [] };
  assert.deepEqual(checker.validateComponent('JobStreamMessage', { type: 'done', data: snapshot }), []);
  assert.notDeepEqual(checker.validateComponent('JobStreamMessage', { type: 'done', data: { ...snapshot, status: 'finished' } }), []);
  assert.notDeepEqual(checker.validateComponent('JobStreamMessage', { type: 'page', data: {} }), []);
});

test('installed in an app, a response that breaks a deliberately wrong schema is recorded', async () => {
  // The document says POST /v2/map answers a health body: the real map body must be reported.
  const wrong: ApiRoute[] = API_ROUTES.map((r) => (r.path === '/v2/map' ? { ...r, responses: { ...r.responses, 200: { json: 'HealthResponse', description: 'wrong on purpose' } } } : r));
  const recorded: Mismatch[] = [];
  const app = Fastify();
  const checkMessage = installResponseCheck(app, buildOpenApiDocument(wrong), (m) => recorded.push(m));
  app.post('/v2/map', async () => ({ success: true, id: '2b6d8a4e-2d1f-4e0a-9a53-2f1c3b9d7e11', links: [{ url: 'http://a.test/' }] }));
  app.get('/health', async () => ({ status: 'ok' }));
  await app.ready();
  // Only two routes are registered: every other documented one is reported missing at start.
  assert.ok(recorded.some((m) => m.problem === 'route POST /v2/scrape is in the OpenAPI document but not registered'));
  recorded.length = 0;

  assert.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
  assert.deepEqual(recorded, []);
  const res = await app.inject({ method: 'POST', url: '/v2/map', payload: { url: 'http://a.test' } });
  assert.equal(res.statusCode, 200);
  assert.equal(recorded.length, 1);
  const first = recorded[0] as Mismatch;
  assert.equal(first.url, '/v2/map');
  assert.match(first.problem, /does not match its schema/);
  checkMessage({ type: 'nope' });
  assert.equal(recorded.length, 2);
  await app.close();
});
