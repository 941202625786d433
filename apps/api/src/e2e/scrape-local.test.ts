import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { call, historyEventTypes, html, namespaceFor, startFixtureSite, startStack, type FixtureSite, type Stack } from '@wds/test-utils';

// WDS_SCRAPE_FETCH=local: the scrape's fetch runs as a local activity of the control worker.
let stack: Stack;
let site: FixtureSite;
let fc: Firecrawl;

before(async () => {
  [stack, site] = await Promise.all([
    startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_SCRAPE_FETCH: 'local' } }),
    startFixtureSite({
      '/page': html('<html><head><title>Local</title></head><body><main><h1>Fetched locally</h1><p>Same document.</p></main></body></html>'),
      '/slow': (_req, res) => void setTimeout(() => res.end('<html><body>late</body></html>'), 4_000),
    }),
  ]);
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

test('the fetch is a local activity: same document, no activity task in the history', async () => {
  const doc = await fc.scrape(site.url('/page'), { formats: ['markdown', 'links'], maxAge: 0 });
  assert.match(doc.markdown!, /# Fetched locally/);
  assert.equal(doc.metadata?.title, 'Local');
  assert.equal(doc.metadata?.statusCode, 200);
  const id = doc.metadata!.scrapeId as string;
  const events = await historyEventTypes(stack.namespace, `scrape-${id}`);
  assert.ok(events.includes('EVENT_TYPE_MARKER_RECORDED'), events.join(' '));
  assert.ok(!events.includes('EVENT_TYPE_ACTIVITY_TASK_SCHEDULED'), events.join(' '));
  // GET /v2/scrape/{id} serves the stored result as for any scrape.
  const stored = await call(stack, 'GET', `/v2/scrape/${id}`);
  assert.equal(stored.status, 200);
  assert.match(stored.json.data.markdown, /Fetched locally/);
});

test('failures keep their status through the local activity', async () => {
  const late = await call(stack, 'POST', '/v2/scrape', { url: site.url('/slow'), timeout: 1_000, maxAge: 0 });
  assert.equal(late.status, 408, late.text);
  assert.equal(late.json.success, false);
  const missing = await call(stack, 'POST', '/v2/scrape', { url: site.url('/nothing-here'), maxAge: 0 });
  assert.equal(missing.status, 200, missing.text);
  assert.equal(missing.json.data.metadata.statusCode, 404);
});
