import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { Client, Connection } from '@temporalio/client';
import { namespaceFor, testInfra, startCrawlSite, startStack, type CrawlSite, type Stack } from '@wds/test-utils';

// A crawl long enough to continue as new several times (one batch per workflow run here, 1,000
// by default): every run hands over to the next, and the job ends completed with every page once.
const PAGES = 100;
let stack: Stack;
let site: CrawlSite;

before(async () => {
  site = await startCrawlSite({ genPages: PAGES });
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_HOST_OVERRIDES: site.hostOverrides, WDS_CRAWL_BATCHES_PER_RUN: '1' } });
});
after(async () => {
  await stack?.stop();
  await site?.close();
});

test('a crawl that continues as new completes with every page exactly once', { timeout: 180_000 }, async () => {
  const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  // maxConcurrency 1: batches of 25 pages (crawl-plan.ts), one at a time, so 100 pages take at least four runs.
  const r = await fc.crawl(site.url('/gen/0'), { limit: PAGES, sitemap: 'skip', crawlEntireDomain: true, includePaths: ['^/gen/'], maxConcurrency: 1, pollInterval: 1 } as never);
  assert.equal(r.status, 'completed');
  const urls = r.data.map((d) => new URL(d.metadata!.sourceURL!).pathname).sort();
  assert.equal(urls.length, PAGES);
  assert.equal(new Set(urls).size, PAGES, 'no page twice');

  const connection = await Connection.connect({ address: testInfra().temporalAddress });
  try {
    const client = new Client({ connection, namespace: stack.namespace });
    const runs = [];
    for await (const w of client.workflow.list({ query: `WorkflowId = 'crawl-${r.id}'` })) runs.push(w.status.name);
    assert.ok(runs.length >= 4, `expected at least 4 runs, got ${runs.length}`);
    assert.equal(runs.filter((s) => s === 'CONTINUED_AS_NEW').length, runs.length - 1);
    assert.equal(runs.filter((s) => s === 'COMPLETED').length, 1);
  } finally {
    await connection.close();
  }
});
