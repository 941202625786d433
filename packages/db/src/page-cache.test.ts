import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { namespaceFor, scanTables, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { findCachedPage, storeCachedPage } from './scrapes';

// page_cache bodies are compressed by the writer (brotli, body_encoding 'br') from 1 kB up, and
// every read hands back the bytes as fetched, whatever the row's encoding (migration 0028).
let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 3 });
  await migrateDb(h);
});
after(() => h?.close());

const page = (body: Buffer) => ({ url: 'https://cache.test/', finalUrl: 'https://cache.test/', statusCode: 200, contentType: 'text/html', charset: 'utf-8', body, engine: 'http' });
const stored = async (key: string) =>
  (await h.db.execute<{ encoding: string | null; bytes: number }>(sql`SELECT body_encoding AS encoding, octet_length(body) AS bytes FROM page_cache WHERE cache_key = ${key}`)).rows[0]!;

test('a page body is stored compressed and read back byte for byte, with or without stored outputs', async () => {
  // Text that compresses, with a random (incompressible) stretch and bytes that are not UTF-8.
  const body = Buffer.concat([Buffer.from('<p>' + 'repeated prose. '.repeat(4_000)), randomBytes(2_000), Buffer.from([0xff, 0xfe, 0x00, 0x80])]);
  const key = `k-${randomUUID()}`;
  await storeCachedPage(h.db, key, { ...page(body), outputs: { variant: 'v1', formats: { markdown: 'repeated prose.' } } });
  const row = await stored(key);
  assert.equal(row.encoding, 'br');
  assert.ok(row.bytes < body.length / 4, `stored ${row.bytes} bytes for ${body.length}`);

  const plain = await findCachedPage(h.db, key, {});
  assert.ok(plain && Buffer.compare(plain.body, body) === 0, 'read without outputs: the bytes as fetched');
  const wanted = await findCachedPage(h.db, key, {}, { variant: 'v1', formats: ['markdown', 'html'] });
  assert.ok(wanted?.body && Buffer.compare(wanted.body, body) === 0, 'outputs lack a format: the body comes along, decoded');
  const served = await findCachedPage(h.db, key, {}, { variant: 'v1', formats: ['markdown'] });
  assert.equal(served?.body, null, 'outputs serve the request: no body read');
  assert.deepEqual(served?.outputs, { markdown: 'repeated prose.' });
});

test('small bodies are kept as fetched; a new copy replaces body and encoding together', async () => {
  const key = `k-${randomUUID()}`;
  await storeCachedPage(h.db, key, page(Buffer.from('<p>tiny</p>')));
  assert.equal((await stored(key)).encoding, null);
  assert.equal((await findCachedPage(h.db, key, {}))?.body.toString(), '<p>tiny</p>');

  const big = Buffer.from('<p>grown</p>'.repeat(500));
  await storeCachedPage(h.db, key, page(big));
  assert.equal((await stored(key)).encoding, 'br');
  assert.ok(Buffer.compare((await findCachedPage(h.db, key, {}))!.body, big) === 0);
  await storeCachedPage(h.db, key, page(Buffer.from('<p>small again</p>')));
  assert.equal((await stored(key)).encoding, null);
  assert.equal((await findCachedPage(h.db, key, {}))?.body.toString(), '<p>small again</p>');
});

test('rows written before migration 0028 (raw body, no encoding) read as they are', async () => {
  const key = `k-${randomUUID()}`;
  const body = Buffer.from('<p>legacy</p>'.repeat(300));
  await h.db.execute(sql`INSERT INTO page_cache (cache_key, url, final_url, status_code, content_type, body, engine)
    VALUES (${key}, 'https://cache.test/', 'https://cache.test/', 200, 'text/html', ${body}, 'http')`);
  assert.ok(Buffer.compare((await findCachedPage(h.db, key, {}))!.body, body) === 0);
  const wanted = await findCachedPage(h.db, key, {}, { variant: 'v1', formats: ['markdown'] });
  assert.ok(wanted?.body && Buffer.compare(wanted.body, body) === 0);
});

test('the retention scan (zero-data-retention tests) finds a marker inside a compressed body', async () => {
  const marker = `zdrmark${randomUUID().replaceAll('-', '')}`;
  const key = `k-${randomUUID()}`;
  await storeCachedPage(h.db, key, page(Buffer.from(`<p>${'padding prose. '.repeat(500)}${marker}</p>`)));
  assert.equal((await stored(key)).encoding, 'br');
  const raw = await h.db.execute(sql`SELECT 1 FROM page_cache WHERE position(convert_to(${marker}, 'UTF8') in body) > 0`);
  assert.equal(raw.rows.length, 0, 'the stored bytes do not hold it as such');
  assert.ok((await scanTables(h, marker)).some((x) => x.where === 'page_cache.body'));
});
