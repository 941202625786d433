import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { connectDb, ensureTeam, knownSitePages, migrateDb, pageHistories, prunePageVersions, recordPageVersions, type DbHandle } from '@wds/db';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { conditionalHeaders, sameBody } from './conditional';
import { hashBody } from './normalize';
import { prepareTracking, trackPages, type PageObservation, type TrackOptions } from './track';

let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 10 });
  await migrateDb(h);
});
after(() => h?.close());

const team = () => ensureTeam(h.db, `changes-${randomUUID()}`);
const URL_ = 'https://shop.test/pricing';
const page = (markdown: string, sourceKey: string = randomUUID(), statusCode = 200, extra: Partial<PageObservation> = {}): PageObservation =>
  ({ kind: 'page', url: URL_, sourceKey, statusCode, markdown, ...extra }) as PageObservation;
const one = async (o: TrackOptions, p: PageObservation) => (await trackPages(h.db, o, [p]))[0]!;
const versions = async (teamId: string) =>
  (await h.db.execute<{ status: string; tag: string; content_hash: string | null; url: string | null; json: unknown }>(sql`SELECT status, tag, content_hash, url, json FROM page_versions WHERE team_id = ${teamId} ORDER BY id`)).rows;
const contents = async (teamId: string) => Number((await h.db.execute<{ n: string }>(sql`SELECT count(*) AS n FROM page_contents WHERE team_id = ${teamId}`)).rows[0]!.n);

test('new → same → changed (with the diff) → removed → still removed is same → back is new; an unchanged page stores no copy', async () => {
  const o: TrackOptions = { teamId: await team(), modes: ['git-diff'], keepContent: true };
  const first = await one(o, page('# Pricing\n\nStarter: $9/mo'));
  assert.equal(first.changeTracking?.changeStatus, 'new');
  assert.equal(first.changeTracking?.previousScrapeAt, null);
  assert.equal(first.changeTracking?.visibility, 'visible');

  const second = await one(o, page('# Pricing\n\nStarter: $9/mo   \n\n'));
  assert.equal(second.changeTracking?.changeStatus, 'same', 'whitespace is no change');
  assert.ok(second.changeTracking?.previousScrapeAt);
  assert.equal(second.changeTracking?.diff, undefined);
  assert.equal((await versions(o.teamId)).length, 1, 'a same page writes no version');

  const third = await one(o, page('# Pricing\n\nStarter: $12/mo'));
  assert.equal(third.changeTracking?.changeStatus, 'changed');
  assert.match(third.changeTracking!.diff!.text, /^-Starter: \$9\/mo$/m);
  assert.match(third.changeTracking!.diff!.text, /^\+Starter: \$12\/mo$/m);
  // previousScrapeAt is the last sighting of the version compared with (the second scrape).
  assert.ok(Date.parse(third.changeTracking!.previousScrapeAt!) >= Date.parse(second.changeTracking!.previousScrapeAt!));

  assert.equal((await one(o, page('Not found', undefined, 404))).changeTracking?.changeStatus, 'removed');
  assert.equal((await one(o, page('Not found', undefined, 410))).changeTracking?.changeStatus, 'same');
  assert.equal((await one(o, page('# Pricing\n\nStarter: $12/mo'))).changeTracking?.changeStatus, 'new', 'a page that comes back is new again');
  // Versions: new, changed, removed, back. Contents: two distinct texts, the second referenced twice.
  assert.deepEqual((await versions(o.teamId)).map((v) => v.status), ['ok', 'ok', 'removed', 'ok']);
  assert.equal(await contents(o.teamId), 2);
});

test('a failed fetch (5xx, block page, error) never removes or changes a page, and is not the next baseline', async () => {
  const o: TrackOptions = { teamId: await team(), modes: ['git-diff'], keepContent: true };
  await one(o, page('# Stock\n\nIn stock'));
  for (const p of [page('Internal error', undefined, 500), page('Just a moment...', undefined, 200, { title: 'Just a moment...' }), page('', undefined, 200)]) {
    const r = await one(o, p);
    assert.equal(r.outcome, 'failed');
    assert.equal(r.changeTracking, null);
    assert.ok(r.failure);
  }
  const r = await one(o, { kind: 'failed', url: URL_, sourceKey: randomUUID(), error: 'timeout' });
  assert.equal(r.outcome, 'failed');
  const [v] = (await h.db.execute<{ check_status: string; last_error: string }>(sql`SELECT check_status, last_error FROM page_versions WHERE team_id = ${o.teamId}`)).rows;
  assert.deepEqual([v!.check_status, v!.last_error], ['failed', 'timeout']);
  // The page is compared with its last good version: unchanged.
  assert.equal((await one(o, page('# Stock\n\nIn stock'))).changeTracking?.changeStatus, 'same');
  assert.equal((await versions(o.teamId)).length, 1);
  // A first fetch that fails records nothing.
  const fresh: TrackOptions = { ...o, teamId: await team() };
  assert.equal((await one(fresh, page('oops', undefined, 503))).write, null);
  assert.equal((await versions(fresh.teamId)).length, 0);
});

test('tags are separate histories; another team\'s history is invisible', async () => {
  const a: TrackOptions = { teamId: await team(), keepContent: true };
  await one(a, page('v1'));
  assert.equal((await one({ ...a, tag: 'hourly' }, page('v2'))).changeTracking?.changeStatus, 'new');
  assert.equal((await one({ ...a, tag: 'hourly' }, page('v2'))).changeTracking?.changeStatus, 'same');
  assert.equal((await one(a, page('v1'))).changeTracking?.changeStatus, 'same', 'the untagged history still holds v1');
  assert.equal((await one({ ...a, tag: 'daily' }, page('v1'))).changeTracking?.changeStatus, 'new');
  const b: TrackOptions = { teamId: await team(), keepContent: true };
  assert.equal((await one(b, page('v1'))).changeTracking?.changeStatus, 'new', 'team b sees nothing of team a');
});

test('idempotent: a retried observation records its version once and its sighting once, and answers as its first attempt did', async () => {
  const o: TrackOptions = { teamId: await team(), modes: ['git-diff'], keepContent: true };
  await one(o, page('before'));
  await one(o, page('before'));
  // A changed page whose activity is retried (also concurrently): one version.
  const key = `page:${randomUUID()}:shop.test/pricing`;
  const attempts = await Promise.all([1, 2, 3].map(() => one(o, page('after', key))));
  for (const a of attempts) assert.equal(a.changeTracking?.changeStatus, 'changed');
  const late = await one(o, page('after', key));
  assert.equal(late.changeTracking?.changeStatus, 'changed', 'a retry compares with the version before its own');
  assert.equal((await versions(o.teamId)).length, 2);
  assert.equal(await contents(o.teamId), 2);

  // A same page retried: its sighting moves once; the retry reports the same previousScrapeAt.
  const seenKey = randomUUID();
  const s1 = await one(o, page('after', seenKey));
  const s2 = await one(o, page('after', seenKey));
  assert.equal(s1.changeTracking?.changeStatus, 'same');
  assert.equal(s2.changeTracking?.previousScrapeAt, s1.changeTracking?.previousScrapeAt);
  const [row] = (await h.db.execute<{ last_source: string; last_seen_at: Date }>(sql`SELECT last_source, last_seen_at FROM page_versions WHERE team_id = ${o.teamId} ORDER BY id DESC LIMIT 1`)).rows;
  assert.equal(row!.last_source, seenKey);
  const again = await one(o, page('after', seenKey));
  const [row2] = (await h.db.execute<{ last_seen_at: Date }>(sql`SELECT last_seen_at FROM page_versions WHERE team_id = ${o.teamId} ORDER BY id DESC LIMIT 1`)).rows;
  assert.equal(new Date(row2!.last_seen_at).getTime(), new Date(row!.last_seen_at).getTime());
  assert.equal(again.changeTracking?.previousScrapeAt, s1.changeTracking?.previousScrapeAt);
});

test('zero data retention keeps hashes only: changes are still found, without a diff and without the URL', async () => {
  const o: TrackOptions = { teamId: await team(), modes: ['git-diff'], keepContent: false };
  assert.equal((await one(o, page('secret v1'))).changeTracking?.changeStatus, 'new');
  assert.equal((await one(o, page('secret v1'))).changeTracking?.changeStatus, 'same');
  const r = await one(o, page('secret v2'));
  assert.equal(r.changeTracking?.changeStatus, 'changed');
  assert.equal(r.changeTracking?.diff, undefined);
  assert.match(r.warnings.join(' '), /not kept/);
  assert.equal(await contents(o.teamId), 0);
  for (const v of await versions(o.teamId)) assert.deepEqual([v.content_hash, v.url, v.json], [null, null, null]);
});

test('json mode: values extracted once per version, previous values reused, re-extracted when the schema changes', async () => {
  const calls: string[] = [];
  const extract = async (md: string) => (calls.push(md), { price: /\$(\d+)/.exec(md)?.[1] ?? null, name: 'Widget' });
  const schema = { type: 'object', properties: { price: { type: 'string' }, name: { type: 'string' } } };
  const o: TrackOptions = { teamId: await team(), modes: ['json'], keepContent: true, json: { schema, extract } };
  const first = await one(o, page('Widget costs $19'));
  assert.equal(first.changeTracking?.json, undefined, 'json only when changed');
  assert.equal(first.modelCalls, 1);
  const same = await one(o, page('Widget costs $19'));
  assert.equal(same.modelCalls, 0, 'an unchanged page runs no model');
  const changed = await one(o, page('Widget costs $24'));
  assert.deepEqual(changed.changeTracking?.json, { price: { previous: '19', current: '24' }, name: { previous: 'Widget', current: 'Widget' } });
  assert.equal(changed.modelCalls, 1, 'the previous values come from the stored extraction');
  const other: TrackOptions = { ...o, json: { schema, prompt: 'prices in euros', extract } };
  const reread = await one(other, page('Widget costs $30'));
  assert.equal(reread.modelCalls, 2, 'another prompt: the previous version is extracted again');
  assert.deepEqual(reread.changeTracking?.json?.price, { previous: '24', current: '30' });
  assert.deepEqual(calls, ['Widget costs $19', 'Widget costs $24', 'Widget costs $30', 'Widget costs $24']);
});

test('the cheap paths: conditional headers from the latest version, identical body bytes, and the unchanged observation', async () => {
  const o: TrackOptions = { teamId: await team(), keepContent: true };
  const body = '<html><body><h1>Hi</h1></body></html>';
  await one(o, page('# Hi', undefined, 200, { bodyHash: hashBody(body), etag: '"v1"', lastModified: 'Wed, 21 Oct 2015 07:28:00 GMT' }));
  const [latest] = [...(await pageHistories(h.db, { teamId: o.teamId, tag: '', pages: [{ urlKey: 'shop.test/pricing', sourceKey: 'x' }] })).values()];
  assert.deepEqual(conditionalHeaders(latest!.baseline), { 'If-None-Match': '"v1"', 'If-Modified-Since': 'Wed, 21 Oct 2015 07:28:00 GMT' });
  assert.ok(sameBody(latest!.baseline, hashBody(body)));
  assert.ok(!sameBody(latest!.baseline, hashBody(`${body} `)));
  const r = await one(o, { kind: 'unchanged', url: URL_, sourceKey: randomUUID(), statusCode: 304 });
  assert.equal(r.changeTracking?.changeStatus, 'same');
  assert.ok(r.changeTracking?.previousScrapeAt);
  // With no earlier version an "unchanged" answer proves nothing.
  assert.equal((await one({ ...o, teamId: await team() }, { kind: 'unchanged', url: URL_, sourceKey: randomUUID(), statusCode: 304 })).outcome, 'failed');
});

test('a batch of pages is read in one query and written in one statement; a crawl finds its site\'s known pages', async () => {
  const o: TrackOptions = { teamId: await team(), tag: 'site', keepContent: true };
  const urls = ['https://www.docs.test/', 'https://docs.test/a', 'https://docs.test/b?x=1', 'https://other.test/c'];
  const first = await trackPages(h.db, o, urls.map((url, i) => ({ kind: 'page', url, sourceKey: `1:${i}`, statusCode: 200, markdown: `page ${i}` })));
  assert.deepEqual(first.map((r) => r.outcome), ['new', 'new', 'new', 'new']);
  const second = await prepareTracking(h.db, o, urls.map((url, i) => ({ kind: 'page', url, sourceKey: `2:${i}`, statusCode: i === 1 ? 404 : 200, markdown: `page ${i}` })));
  assert.deepEqual(second.map((r) => r.outcome), ['same', 'removed', 'same', 'same']);
  assert.equal((await versions(o.teamId)).length, 4, 'prepareTracking writes nothing');
  await recordPageVersions(h.db, second.map((r) => r.write!));
  assert.deepEqual(await knownSitePages(h.db, { teamId: o.teamId, tag: 'site', site: 'docs.test', limit: 10 }), [
    { urlKey: 'docs.test/', url: 'https://www.docs.test/' },
    { urlKey: 'docs.test/b?x=1', url: 'https://docs.test/b?x=1' },
  ]);
});

test('pruning: superseded versions past retention and their unreferenced markdown go; the latest version stays', async () => {
  const o: TrackOptions = { teamId: await team(), keepContent: true };
  await one(o, page('old text'));
  await one(o, page('new text'));
  await h.db.execute(sql`UPDATE page_versions SET first_seen_at = now() - interval '40 days' WHERE team_id = ${o.teamId}`);
  await h.db.execute(sql`UPDATE page_contents SET created_at = now() - interval '40 days' WHERE team_id = ${o.teamId}`);
  await prunePageVersions(h.db, { retentionMs: 30 * 86_400_000, forgetMs: 365 * 86_400_000 });
  assert.equal((await versions(o.teamId)).length, 1);
  assert.equal(await contents(o.teamId), 1);
  assert.equal((await one(o, page('new text'))).changeTracking?.changeStatus, 'same');
  // A page nobody has looked at for the forget period is forgotten entirely.
  await h.db.execute(sql`UPDATE page_versions SET last_seen_at = now() - interval '400 days' WHERE team_id = ${o.teamId}`);
  await prunePageVersions(h.db, { retentionMs: 30 * 86_400_000, forgetMs: 365 * 86_400_000 });
  assert.equal((await versions(o.teamId)).length, 0);
  assert.equal(await contents(o.teamId), 0);
});
