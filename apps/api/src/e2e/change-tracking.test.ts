import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServerResponse } from 'node:http';
import Firecrawl from '@mendable/firecrawl-js';
import { call, namespaceFor, promptText, startFakeOpenAI, startFixtureSite, startStack, type FakeChatRequest, type FakeOpenAI, type FixtureSite, type Stack } from '@wds/test-utils';

// The changeTracking format (scrape, crawl, batch scrape) through the official JS SDK against the
// real stack, on fixture pages the tests change; json mode against the fake OpenAI-compatible server.
let stack: Stack;
let site: FixtureSite;
let model: FakeOpenAI;
let fc: Firecrawl;

/** Pages whose status and text the tests set. */
const pages = new Map<string, { status: number; body: string }>();
const page = (title: string, text: string) => `<html><head><title>${title}</title></head><body><main><h1>${title}</h1>${text}</main></body></html>`;
const serve = (path: string) => (_req: unknown, res: ServerResponse) => {
  const p = pages.get(path) ?? { status: 404, body: page('Gone', '<p>Not here</p>') };
  res.writeHead(p.status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(p.body);
};
const set = (path: string, status: number, body: string) => {
  pages.set(path, { status, body });
  site.route(path, serve(path));
};

/** The fake model reads the price off the page it is given (json mode extractions). */
function reply(r: FakeChatRequest) {
  const m = /Price: (\S+)/.exec(promptText(r));
  return { content: { price: m?.[1] ?? null, product: 'Kettle' } };
}

const GIT = ['markdown', { type: 'changeTracking', modes: ['git-diff'] }];
type Tracked = { changeTracking?: { changeStatus: string; previousScrapeAt: string | null; visibility: string; diff?: { text: string; json: { files: { chunks: { changes: { type: string; content: string }[] }[] }[] } }; json?: Record<string, { previous: unknown; current: unknown }> }; warning?: string; markdown?: string; metadata?: { creditsUsed?: number; statusCode?: number; sourceURL?: string; url?: string } };
const scrape = async (path: string, formats: unknown[] = GIT, client = fc, extra: Record<string, unknown> = {}) => (await client.scrape(site.url(path), { formats, ...extra } as never)) as Tracked;

before(async () => {
  model = await startFakeOpenAI({ handler: reply });
  site = await startFixtureSite({});
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: { ...model.env },
  });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
  await model?.close();
});

describe('scrape', () => {
  test('new → same → changed with the new text in the diff → a 500 is not a change → 404 removed; never from the cache', async () => {
    set('/pricing', 200, page('Pricing', '<p>Starter: $9/mo</p><p>Pro: $29/mo</p>'));
    const first = await scrape('/pricing');
    assert.deepEqual(first.changeTracking, { previousScrapeAt: null, changeStatus: 'new', visibility: 'visible' });
    assert.match(first.markdown!, /Starter: \$9\/mo/);

    const second = await scrape('/pricing');
    assert.equal(second.changeTracking?.changeStatus, 'same');
    assert.ok(second.changeTracking?.previousScrapeAt && Date.parse(second.changeTracking.previousScrapeAt) > 0);
    assert.equal(second.changeTracking?.diff, undefined);
    assert.equal(site.hits('/pricing'), 2, 'the second scrape fetched the page again: change tracking never reads the cache');

    set('/pricing', 200, page('Pricing', '<p>Starter: $12/mo</p><p>Pro: $29/mo</p>'));
    const changed = await scrape('/pricing');
    assert.equal(changed.changeTracking?.changeStatus, 'changed');
    const diff = changed.changeTracking!.diff!;
    assert.match(diff.text, /^-Starter: \$9\/mo$/m);
    assert.match(diff.text, /^\+Starter: \$12\/mo$/m);
    assert.match(diff.text, /^@@ -\d+,\d+ \+\d+,\d+ @@/);
    const changes = diff.json.files[0]!.chunks.flatMap((c) => c.changes);
    assert.ok(changes.some((c) => c.type === 'add' && c.content === 'Starter: $12/mo'));
    assert.ok(changes.some((c) => c.type === 'del' && c.content === 'Starter: $9/mo'));
    // previousScrapeAt: the last sighting of the version compared with (the second scrape's).
    assert.equal(changed.changeTracking?.previousScrapeAt, await lastSeen('/pricing', 1));

    // A server error is a failed fetch: no changeTracking, a warning, and not the next baseline.
    set('/pricing', 500, page('Error', '<p>Something broke</p>'));
    const broken = await scrape('/pricing');
    assert.equal(broken.metadata?.statusCode, 500);
    assert.equal(broken.changeTracking, undefined);
    assert.match(broken.warning ?? '', /changeTracking: nothing was compared because the page answered HTTP 500/);
    set('/pricing', 200, page('Pricing', '<p>Starter: $12/mo</p><p>Pro: $29/mo</p>'));
    assert.equal((await scrape('/pricing')).changeTracking?.changeStatus, 'same');

    set('/pricing', 404, page('Not found', '<p>This page does not exist</p>'));
    const removed = await scrape('/pricing');
    assert.equal(removed.metadata?.statusCode, 404);
    assert.equal(removed.changeTracking?.changeStatus, 'removed');
    assert.equal((await scrape('/pricing')).changeTracking?.changeStatus, 'same', 'still gone');
    set('/pricing', 200, page('Pricing', '<p>Back</p>'));
    assert.equal((await scrape('/pricing')).changeTracking?.changeStatus, 'new', 'back again');
  });

  test('tags are separate histories; another team never sees this team\'s history', async () => {
    set('/tagged', 200, page('Tagged', '<p>v1</p>'));
    const tagged = (tag: string) => ['markdown', { type: 'changeTracking', tag }];
    assert.equal((await scrape('/tagged', tagged('hourly'))).changeTracking?.changeStatus, 'new');
    set('/tagged', 200, page('Tagged', '<p>v2</p>'));
    assert.equal((await scrape('/tagged', tagged('daily'))).changeTracking?.changeStatus, 'new', 'the daily history has never seen it');
    assert.equal((await scrape('/tagged', tagged('hourly'))).changeTracking?.changeStatus, 'changed');
    assert.equal((await scrape('/tagged', ['markdown', 'changeTracking'])).changeTracking?.changeStatus, 'new', 'no tag is a history of its own');

    const other = await stack.newTeam();
    const otherFc = new Firecrawl({ apiKey: other.apiKey, apiUrl: stack.url });
    const theirs = await scrape('/tagged', tagged('hourly'), otherFc);
    assert.equal(theirs.changeTracking?.changeStatus, 'new');
    assert.equal(theirs.changeTracking?.previousScrapeAt, null);
  });

  test('json mode: the model reads both versions; previous and current per schema key; 5 credits when the model ran, 1 when same', async () => {
    set('/kettle', 200, page('Kettle', '<p>Price: 19.99</p><p>In stock</p>'));
    const formats = ['markdown', { type: 'changeTracking', modes: ['json'], schema: { type: 'object', properties: { price: { type: 'string' }, product: { type: 'string' } } } }];
    model.reset();
    const first = await scrape('/kettle', formats);
    assert.equal(first.changeTracking?.changeStatus, 'new');
    assert.equal(first.changeTracking?.json, undefined, 'json only when changed');
    assert.equal(first.metadata?.creditsUsed, 5);
    assert.equal(model.chatRequests().length, 1);

    const same = await scrape('/kettle', formats);
    assert.equal(same.changeTracking?.changeStatus, 'same');
    assert.equal(model.chatRequests().length, 1, 'an unchanged page runs no model');
    assert.equal(same.metadata?.creditsUsed, 1);

    set('/kettle', 200, page('Kettle', '<p>Price: 24.99</p><p>In stock</p>'));
    const changed = await scrape('/kettle', formats);
    assert.equal(changed.changeTracking?.changeStatus, 'changed');
    assert.deepEqual(changed.changeTracking?.json, { price: { previous: '19.99', current: '24.99' }, product: { previous: 'Kettle', current: 'Kettle' } });
    assert.equal(model.chatRequests().length, 2, 'the previous values were stored with their version, not extracted again');
    assert.match(promptText(model.chatRequests()[1]!), /Price: 24\.99/);
    assert.equal(changed.metadata?.creditsUsed, 5);
  });

  test('waitFor with change tracking waits at least 5 s', async () => {
    set('/slow', 200, page('Slow', '<p>x</p>'));
    const t0 = Date.now();
    const r = await scrape('/slow', ['markdown', 'changeTracking'], fc, { waitFor: 1000 });
    assert.equal(r.changeTracking?.changeStatus, 'new');
    assert.ok(Date.now() - t0 >= 5_000, `took ${Date.now() - t0} ms`);
  });
});

describe('crawl and batch scrape', () => {
  test('a crawl reports per page; a page no longer linked is hidden, and one that is gone is removed', async () => {
    const links = (paths: string[]) => paths.map((p) => `<a href="${p}">${p}</a>`).join(' ');
    set('/site', 200, page('Home', links(['/site/a', '/site/b', '/site/c'])));
    set('/site/a', 200, page('A', '<p>alpha</p>'));
    set('/site/b', 200, page('B', '<p>beta</p>'));
    set('/site/c', 200, page('C', '<p>gamma</p>'));
    const crawl = async () => {
      const job = await fc.crawl(site.url('/site'), { limit: 20, scrapeOptions: { formats: GIT } } as never);
      assert.equal(job.status, 'completed');
      return new Map((job.data as Tracked[]).map((d) => [new URL(d.metadata!.sourceURL!).pathname, d.changeTracking!]));
    };
    const first = await crawl();
    assert.deepEqual([...first.keys()].sort(), ['/site', '/site/a', '/site/b', '/site/c']);
    for (const ct of first.values()) assert.deepEqual([ct.changeStatus, ct.visibility], ['new', 'visible']);

    // b is no longer linked (still there), c is no longer linked and gone, a changed.
    set('/site', 200, page('Home', links(['/site/a'])));
    set('/site/a', 200, page('A', '<p>alpha two</p>'));
    pages.set('/site/c', { status: 404, body: page('Gone', '<p>no</p>') });
    const second = await crawl();
    assert.equal(second.get('/site')?.changeStatus, 'changed');
    assert.equal(second.get('/site/a')?.changeStatus, 'changed');
    assert.match(second.get('/site/a')!.diff!.text, /^\+alpha two$/m);
    assert.deepEqual([second.get('/site/b')?.changeStatus, second.get('/site/b')?.visibility], ['same', 'hidden']);
    assert.deepEqual([second.get('/site/c')?.changeStatus, second.get('/site/c')?.visibility], ['removed', 'hidden']);
    assert.equal(second.get('/site/a')?.visibility, 'visible');
  });

  test('batch scrape: per-page statuses, compared with single scrapes of the same team', async () => {
    set('/batch/1', 200, page('One', '<p>one</p>'));
    set('/batch/2', 200, page('Two', '<p>two</p>'));
    await scrape('/batch/1');
    set('/batch/1', 200, page('One', '<p>one, edited</p>'));
    const job = await fc.batchScrape([site.url('/batch/1'), site.url('/batch/2')], { options: { formats: GIT } } as never);
    const by = new Map((job.data as Tracked[]).map((d) => [new URL(d.metadata!.sourceURL!).pathname, d.changeTracking!]));
    assert.equal(by.get('/batch/1')?.changeStatus, 'changed');
    assert.match(by.get('/batch/1')!.diff!.text, /^\+one, edited$/m);
    assert.equal(by.get('/batch/2')?.changeStatus, 'new');
  });
});

describe('validation', () => {
  const bad = async (body: Record<string, unknown>, path = '/v2/scrape') => {
    const r = await call(stack, 'POST', path, body);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.success, false);
    return r.json as { error: string; details?: { path: unknown[]; message: string }[] };
  };
  test('bad shapes are 400 with details', async () => {
    const url = site.url('/pricing');
    const noMarkdown = await bad({ url, formats: ['changeTracking'] });
    assert.match(JSON.stringify(noMarkdown.details), /requires the markdown format/);
    await bad({ url, formats: ['markdown', { type: 'changeTracking', modes: ['word-diff'] }] });
    await bad({ url, formats: ['markdown', { type: 'changeTracking', tag: 'x'.repeat(300) }] });
    await bad({ url, formats: ['markdown', { type: 'changeTracking', extra: true }] });
    const noSchema = await bad({ url, formats: ['markdown', { type: 'changeTracking', modes: ['json'] }] });
    assert.match(JSON.stringify(noSchema.details), /json mode requires a 'schema'/);
    await bad({ url, formats: ['markdown', 'changeTracking', { type: 'changeTracking' }] });
    const lockdown = await bad({ url, formats: ['markdown', 'changeTracking'], lockdown: true });
    assert.match(JSON.stringify(lockdown.details), /never reads the cache/);
    await bad({ url: site.url('/site'), scrapeOptions: { formats: ['changeTracking'] } }, '/v2/crawl');
    await bad({ urls: [url], formats: ['changeTracking'] }, '/v2/batch/scrape');
    const schema = await call(stack, 'POST', '/v2/scrape', { url, formats: ['markdown', { type: 'changeTracking', modes: ['json'], schema: { type: 'nonsense' } }] });
    assert.equal(schema.status, 422, schema.text);
  });
});

/** When a page's version (`skip` back from the latest, untagged) was last seen. */
async function lastSeen(path: string, skip: number): Promise<string | null> {
  const r = await stack.db.pool.query(`SELECT last_seen_at FROM page_versions WHERE url = $1 AND tag = '' AND team_id = $3 ORDER BY id DESC OFFSET $2 LIMIT 1`, [site.url(path), skip, stack.teamId]);
  return r.rows[0] ? new Date(r.rows[0].last_seen_at).toISOString() : null;
}
