import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { ensureTeam } from './keys';
import { listenForScrapeDone, type ScrapeDoneListener } from './scrape-done';
import { completeScrapeJob, insertScrapeJob, loadScrapeJob } from './scrapes';

let h: DbHandle;
let url: string;
let listener: ScrapeDoneListener;
before(async () => {
  url = await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url));
  h = connectDb(url, { max: 4 });
  await migrateDb(h);
  listener = listenForScrapeDone(url);
});
after(async () => {
  await listener?.close();
  await h?.close();
});

const settles = (p: Promise<void>, ms: number) => Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

async function newScrape() {
  const teamId = await ensureTeam(h.db, `scrape-done-${randomUUID()}`);
  const id = randomUUID();
  await insertScrapeJob(h.db, { id, teamId, url: 'http://a.test/', options: {} });
  return id;
}

/** The listener connects in the background: wait until a completion is heard. */
async function untilListening() {
  for (let i = 0; i < 100; i++) {
    const id = await newScrape();
    const w = listener.wait(id);
    await completeScrapeJob(h.db, id, { markdown: 'x' }, 1);
    if (await settles(w.stored, 100)) return;
  }
  assert.fail('the listener never heard a completion');
}

test('a wait resolves when the document is stored, and the row is readable then', async () => {
  await untilListening();
  const id = await newScrape();
  const other = await newScrape();
  const w = listener.wait(id);
  const o = listener.wait(other);
  await completeScrapeJob(h.db, id, { markdown: '# done' }, 3);
  assert.equal(await settles(w.stored, 2_000), true);
  const row = await loadScrapeJob(h.db, id);
  assert.equal(row!.status, 'completed');
  assert.deepEqual(row!.document, { markdown: '# done' });
  assert.equal(row!.creditsUsed, 3);
  assert.equal(await settles(o.stored, 200), false, 'another scrape completing is not this one');
  o.cancel();
});

test('a cancelled wait is forgotten; completing an unknown id announces nothing', async () => {
  await untilListening();
  const id = await newScrape();
  const w = listener.wait(id);
  w.cancel();
  await completeScrapeJob(h.db, id, { markdown: 'x' }, 1);
  assert.equal(await settles(w.stored, 300), false);
  const ghost = randomUUID();
  const g = listener.wait(ghost);
  await completeScrapeJob(h.db, ghost, { markdown: 'x' }, 1); // no row: no NOTIFY
  assert.equal(await settles(g.stored, 300), false);
  g.cancel();
});

test('the listener reconnects after its connection is killed', async () => {
  await untilListening();
  const killed = await h.pool.query(
    `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN wds_scrape_done' AND pid <> pg_backend_pid()`,
  );
  assert.deepEqual(killed.rows, [{ ok: true }]);
  // Until it is back, completions go unheard (callers then rely on the workflow result).
  await untilListening();
  const id = await newScrape();
  const w = listener.wait(id);
  await completeScrapeJob(h.db, id, { markdown: 'again' }, 1);
  assert.equal(await settles(w.stored, 2_000), true);
});
