import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { ensureTeam } from './index';
import { insertCompletedScrape } from './scrapes';

// Cache hits index their page for the team that asked, once per copy: a later hit of the same
// copy writes nothing to the index, a fresher copy replaces the row, another team gets its own.
let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 5 });
  await migrateDb(h);
});
after(() => h?.close());

const hitDoc = (url: string, cachedAt: string, word: string) => ({
  markdown: `# Heading\n\nThe ${word} paragraph.`,
  metadata: { url, sourceURL: url, statusCode: 200, title: 'Cached page', cacheState: 'hit', cachedAt, scrapeId: randomUUID() },
});
const row = async (teamId: string) =>
  (await h.db.execute<{ stored_at: Date; body: string; xmin: string }>(sql`SELECT stored_at, body, xmin::text FROM search_pages WHERE team_id = ${teamId}`)).rows;
const hit = (teamId: string, doc: ReturnType<typeof hitDoc>) =>
  insertCompletedScrape(h.db, { id: randomUUID(), teamId, url: doc.metadata.url, options: {}, document: doc, creditsUsed: 1 });

test('a hit indexes its copy once per team; only a fresher copy is written again', async () => {
  const [a, b] = await Promise.all([ensureTeam(h.db, `hits-a-${randomUUID()}`), ensureTeam(h.db, `hits-b-${randomUUID()}`)]);
  const url = `https://hits.test/${randomUUID()}`;
  const t1 = '2026-01-01T00:00:00.000Z';
  await hit(a, hitDoc(url, t1, 'first'));
  const [first] = await row(a);
  assert.match(first!.body, /first paragraph/);
  assert.equal(new Date(first!.stored_at).toISOString(), t1, 'stored at the copy\'s fetch time');

  // The same copy again (this process knows it is indexed; another process would be stopped by the SQL guard).
  await hit(a, hitDoc(url, t1, 'again'));
  assert.deepEqual(await row(a), [first], 'the row was not written again');

  // Another team: its own row.
  await hit(b, hitDoc(url, t1, 'other team'));
  assert.match((await row(b))[0]!.body, /other team paragraph/);

  // A fresher copy replaces the row; an older one never comes back.
  await hit(a, hitDoc(url, '2026-02-01T00:00:00.000Z', 'fresher'));
  assert.match((await row(a))[0]!.body, /fresher paragraph/);
  await hit(a, hitDoc(url, t1, 'stale'));
  assert.match((await row(a))[0]!.body, /fresher paragraph/);
});

test('the SQL guard alone keeps a known copy from being written again (another API process)', async () => {
  const a = await ensureTeam(h.db, `hits-guard-${randomUUID()}`);
  const url = `https://hits.test/${randomUUID()}`;
  const t = '2026-03-01T00:00:00.000Z';
  // Indexed by someone else: this process has never seen the row.
  await h.db.execute(sql`INSERT INTO search_pages (team_id, url_key, url, host, title, description, headings, body, language, config, stored_at, tsv, tsv_rank)
    VALUES (${a}::uuid, ${url.replace('https://', '')}, ${url}, 'hits.test', 't', '', '', 'indexed elsewhere', NULL, 'simple'::regconfig, ${t}::timestamptz,
      to_tsvector('simple', 't indexed elsewhere'), to_tsvector('simple', 't indexed elsewhere'))`);
  const [before] = await row(a);
  await hit(a, hitDoc(url, t, 'same copy'));
  assert.deepEqual(await row(a), [before]);
});
