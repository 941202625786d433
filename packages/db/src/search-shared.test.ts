import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { insertCrawlJob } from './crawl-jobs';
import { finishPage } from './crawl-pages';
import { finishPages } from './crawl-pages-batch';
import { insertExtractJob } from './extracts';
import { ensureTeam } from './index';
import { completeScrapeJob, insertCompletedScrape, insertScrapeJob } from './scrapes';
import { searchIndex, searchSitePages } from './search';
import { backfillSearchIndex } from './search-backfill';
import { setSearchIndexing, sharedIndexAllows } from './search-index';

// A shared index (WDS_SEARCH_SHARED_INDEX) never shows another team a page fetched with that
// team's headers, browser profile or actions, whichever statement stored it; the team itself
// still finds it. Real Postgres, every writer of search_pages.
let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 10 });
  await migrateDb(h);
});
after(() => h?.close());

const doc = (url: string, word: string) => ({ markdown: `# Page\n\nThe ${word} paragraph.`, metadata: { url, sourceURL: url, title: `About ${word}`, statusCode: 200, language: 'en' } });
const HEADERS = { headers: { cookie: 'session=team-a-secret' } };
const ACTIONS = { actions: [{ type: 'click', selector: '#login' }] };
const PROFILE = { profile: { name: 'team-a', saveChanges: false } };

const found = async (teamId: string, word: string, shared: boolean) => (await searchIndex(h.db, { query: word, teamId, shared, limit: 10, kind: 'web' })).map((x) => x.url);
const shareable = async (teamId: string, url: string) =>
  (await h.db.execute<{ shareable: boolean }>(sql`SELECT shareable FROM search_pages WHERE team_id = ${teamId} AND url = ${url}`)).rows[0]?.shareable;

async function scrape(teamId: string, url: string, word: string, options: object) {
  const id = randomUUID();
  await insertScrapeJob(h.db, { id, teamId, url, options: { url, ...options } });
  await completeScrapeJob(h.db, id, doc(url, word), 1);
}

async function crawlPage(teamId: string, kind: 'crawl' | 'batch', url: string, word: string, options: object, grouped: boolean) {
  const jobId = randomUUID();
  await insertCrawlJob(h.db, { id: jobId, teamId, kind, url: kind === 'crawl' ? url : null, options, pageLimit: 10, zeroDataRetention: false });
  const key = url.replace(/^https?:\/\//, '');
  if (grouped) await finishPages(h.db, jobId, [{ key, links: [], document: { body: doc(url, word), credits: 1 } }]);
  else await finishPage(h.db, jobId, key, { links: [], document: { body: doc(url, word), credits: 1 } });
}

test('the rule: headers (any, even empty), a profile or any action make a page personal, at the top or under scrapeOptions', async () => {
  const cases: [unknown, boolean][] = [
    [{}, true], [null, true], [{ headers: null, actions: [], profile: null }, true], [{ formats: ['markdown'], waitFor: 0 }, true],
    [HEADERS, false], [{ headers: {} }, false], [ACTIONS, false], [{ actions: [{ type: 'wait', milliseconds: 10 }] }, false], [PROFILE, false],
    [{ scrapeOptions: HEADERS }, false], [{ scrapeOptions: ACTIONS }, false], [{ scrapeOptions: PROFILE }, false], [{ scrapeOptions: { formats: ['markdown'] }, limit: 5 }, true],
  ];
  for (const [options, allowed] of cases) {
    const r = await h.db.execute<{ ok: boolean }>(sql`SELECT ${sharedIndexAllows(sql`${JSON.stringify(options)}::jsonb`)} AS ok`);
    assert.equal(r.rows[0]!.ok, allowed, JSON.stringify(options));
  }
});

test('every writer: personal pages stay in their team, plain pages are shared; an unshared index shows another team nothing', { timeout: 60_000 }, async () => {
  const [a, b] = await Promise.all([ensureTeam(h.db, `shared-a-${randomUUID()}`), ensureTeam(h.db, `shared-b-${randomUUID()}`)]);
  const run = randomUUID().slice(0, 8);
  const url = (name: string) => `https://shared-${run}.test/${name}`;
  // [word, url, personal]: one page per writer and kind of personalisation.
  const pages: [string, string, boolean][] = [];
  const add = (word: string, personal: boolean) => (pages.push([word, url(word), personal]), url(word));

  await scrape(a, add('aardvark', true), 'aardvark', HEADERS);
  await scrape(a, add('badger', true), 'badger', ACTIONS);
  await scrape(a, add('capybara', false), 'capybara', { formats: ['markdown'] });
  const hit = add('dingo', true);
  await insertCompletedScrape(h.db, { id: randomUUID(), teamId: a, url: hit, options: { url: hit, ...HEADERS }, document: doc(hit, 'dingo'), creditsUsed: 1 });
  const plainHit = add('echidna', false);
  await insertCompletedScrape(h.db, { id: randomUUID(), teamId: a, url: plainHit, options: { url: plainHit }, document: doc(plainHit, 'echidna'), creditsUsed: 1 });
  await crawlPage(a, 'crawl', add('ferret', true), 'ferret', { scrapeOptions: PROFILE }, false);
  await crawlPage(a, 'crawl', add('gecko', true), 'gecko', { scrapeOptions: HEADERS }, true);
  await crawlPage(a, 'crawl', add('hyrax', false), 'hyrax', { scrapeOptions: {} }, true);
  await crawlPage(a, 'batch', add('ibex', true), 'ibex', { ...ACTIONS, webhook: null }, true);
  await crawlPage(a, 'batch', add('jackal', false), 'jackal', { webhook: null }, false);
  // Extract: its page options go to the frontier row, where the page statement reads them.
  const extractId = randomUUID();
  await insertExtractJob(h.db, { id: extractId, teamId: a, options: { pageOptions: HEADERS }, pageOptions: HEADERS, pageLimit: 5, seeds: [] });
  const kiwi = add('kiwi', true);
  await finishPage(h.db, extractId, kiwi.replace('https://', ''), { links: [], document: { body: doc(kiwi, 'kiwi'), credits: 0 } });

  for (const [word, u, personal] of pages) {
    assert.equal(await shareable(a, u), !personal, `${word}: shareable`);
    assert.deepEqual(await found(a, word, false), [u], `${word}: in its team's own index`);
    assert.deepEqual(await found(a, word, true), [u], `${word}: in its team's view of a shared index`);
    assert.deepEqual(await found(b, word, true), personal ? [] : [u], `${word}: another team, shared index`);
    assert.deepEqual(await found(b, word, false), [], `${word}: another team, own index`);
  }
  // Map's `search` reads through the same filter.
  const site = (await searchSitePages(h.db, { teamId: b, shared: true, hosts: [`shared-${run}.test`], query: 'paragraph', limit: 50 })).map((x) => x.url).sort();
  assert.deepEqual(site, pages.filter(([, , p]) => !p).map(([, u]) => u).sort());
});

test('the copy the row holds decides: a fresher personal copy hides it, a fresher plain copy shares it again', async () => {
  const [a, b] = await Promise.all([ensureTeam(h.db, `fresh-a-${randomUUID()}`), ensureTeam(h.db, `fresh-b-${randomUUID()}`)]);
  const u = `https://fresh-${randomUUID().slice(0, 8)}.test/account`;
  await scrape(a, u, 'mongoose', {});
  assert.deepEqual(await found(b, 'mongoose', true), [u]);
  await scrape(a, u, 'mongoose', HEADERS); // same text, fetched with the cookie: only plain columns move, and shareable
  assert.deepEqual(await found(b, 'mongoose', true), []);
  await scrape(a, u, 'narwhal', HEADERS); // the logged-in text
  assert.deepEqual(await found(b, 'narwhal', true), []);
  assert.deepEqual(await found(a, 'narwhal', true), [u]);
  await scrape(a, u, 'ocelot', {});
  assert.deepEqual(await found(b, 'ocelot', true), [u]);
  assert.deepEqual(await found(b, 'narwhal', true), [], 'the logged-in text is gone from the row');
});

test('the backfill reads the rule from the stored jobs', async () => {
  const [a, b] = await Promise.all([ensureTeam(h.db, `backfill-a-${randomUUID()}`), ensureTeam(h.db, `backfill-b-${randomUUID()}`)]);
  const run = randomUUID().slice(0, 8);
  setSearchIndexing(false);
  try {
    await scrape(a, `https://bf-${run}.test/p`, 'pangolin', PROFILE);
    await scrape(a, `https://bf-${run}.test/q`, 'quokka', {});
    await crawlPage(a, 'crawl', `https://bf-${run}.test/r`, 'raccoon', { scrapeOptions: ACTIONS }, false);
    await crawlPage(a, 'batch', `https://bf-${run}.test/s`, 'serval', { webhook: null }, false);
  } finally {
    setSearchIndexing(true);
  }
  assert.deepEqual(await found(a, 'pangolin', false), [], 'not indexed while indexing was off');
  await backfillSearchIndex(h.db);
  for (const [word, personal] of [['pangolin', true], ['quokka', false], ['raccoon', true], ['serval', false]] as const) {
    assert.equal((await found(a, word, false)).length, 1, `${word}: backfilled`);
    assert.equal((await found(b, word, true)).length, personal ? 0 : 1, `${word}: another team, shared index`);
  }
});
