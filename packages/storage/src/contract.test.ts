// The FileStore contract, run against every implementation: the local directory and an S3-compatible
// bucket on a real server (Versity's gateway, started here on 127.0.0.1). Retention sweeps and link
// expiry must behave the same whichever store a deployment picks.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { startS3TestServer, type S3TestServer } from '@wds/test-utils/s3-server';
import { isMediaKey, LocalFileStore, S3FileStore, verifyFileLink, type FileStore } from './index';

const SECRET = 'contract-secret-0123456789abcdef';
const PUBLIC = 'http://api.test';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'wds-contract-'));
  dirs.push(d);
  return d;
};

let s3: S3TestServer;
before(async () => {
  s3 = await startS3TestServer();
});
after(async () => {
  await s3?.stop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

let buckets = 0;
async function s3Store(extra: { prefix?: string; presigned?: boolean } = {}): Promise<S3FileStore> {
  const bucket = `contract-${++buckets}`;
  const store = new S3FileStore({
    bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, prefix: extra.prefix ?? '',
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    publicUrl: PUBLIC, secret: SECRET, defaultTtlSeconds: 100, presigned: extra.presigned ?? false,
  });
  await store.client.send(new CreateBucketCommand({ Bucket: bucket }));
  return store;
}

async function bytesOf(store: FileStore, key: string): Promise<Buffer | null> {
  const f = await store.open(key);
  if (!f) return null;
  const chunks: Buffer[] = [];
  for await (const c of f.stream as AsyncIterable<Buffer>) chunks.push(Buffer.from(c));
  const b = Buffer.concat(chunks);
  assert.equal(b.length, f.size, 'size matches the bytes');
  return b;
}

const implementations: Array<[string, () => Promise<FileStore>]> = [
  ['local directory', async () => new LocalFileStore({ dir: tmp(), publicUrl: PUBLIC, secret: SECRET, defaultTtlSeconds: 100 })],
  ['S3 bucket', () => s3Store()],
];

for (const [name, make] of implementations) {
  describe(`FileStore contract: ${name}`, () => {
    test('put, open, overwrite (a retried activity), missing and invalid keys', async () => {
      const store = await make();
      assert.deepEqual(await store.put('scrapes/j1/screenshot.png', Buffer.from('first')), { key: 'scrapes/j1/screenshot.png', contentType: 'image/png', size: 5 });
      assert.deepEqual(await store.put('scrapes/j1/screenshot.png', Buffer.from('second!')), { key: 'scrapes/j1/screenshot.png', contentType: 'image/png', size: 7 });
      assert.equal((await bytesOf(store, 'scrapes/j1/screenshot.png'))?.toString(), 'second!');
      assert.equal((await store.open('scrapes/j1/screenshot.png'))?.contentType, 'image/png');
      assert.equal(await store.open('scrapes/j1/missing.png'), null);
      assert.equal(await store.open('../etc/passwd.png'), null);
      await assert.rejects(store.put('../x.png', Buffer.from('x')), /invalid file key/);
      await assert.rejects(store.signedUrl('a/../b.png'), /invalid file key/);
    });

    test('putFile streams a local file in (media)', async () => {
      const store = await make();
      const src = join(tmp(), 'v.mp4');
      const big = Buffer.alloc(3 * 1024 * 1024 + 7, 0x61);
      writeFileSync(src, big);
      assert.deepEqual(await store.putFile('scrapes/j2/video.mp4', src), { key: 'scrapes/j2/video.mp4', contentType: 'video/mp4', size: big.length });
      assert.ok((await bytesOf(store, 'scrapes/j2/video.mp4'))!.equals(big));
    });

    test('links: the API-signed shape; valid until they expire, any edit refused', async () => {
      const store = await make();
      await store.put('scrapes/j3/screenshot.png', Buffer.from('png'));
      const url = new URL(await store.signedUrl('scrapes/j3/screenshot.png', 60));
      assert.equal(`${url.origin}${url.pathname}`, `${PUBLIC}/v2/files/scrapes/j3/screenshot.png`);
      const [e, sig] = [url.searchParams.get('expires')!, url.searchParams.get('sig')!];
      assert.ok(Math.abs(Number(e) - (Date.now() / 1000 + 60)) < 3, 'expires is now + ttl');
      assert.equal(verifyFileLink(SECRET, 'scrapes/j3/screenshot.png', e, sig), 'ok');
      assert.equal(verifyFileLink(SECRET, 'scrapes/j3/screenshot.png', e, sig, Date.now() + 61_000), 'expired');
      assert.equal(verifyFileLink(SECRET, 'scrapes/j3/other.png', e, sig), 'bad-signature');
      const def = new URL(await store.signedUrl('scrapes/j3/screenshot.png'));
      assert.ok(Math.abs(Number(def.searchParams.get('expires')) - (Date.now() / 1000 + 100)) < 3, 'default lifetime');
    });

    test('retention sweep: by age of the last write, optionally only some keys (media sooner); empty stores are fine', async () => {
      const store = await make();
      assert.equal(await store.sweep(0), 0);
      await store.put('scrapes/old/screenshot.png', Buffer.from('a'));
      await store.put('scrapes/old/audio.mp3', Buffer.from('b'));
      // S3 keeps LastModified to the second: the new file must be well over a second younger than the threshold's edge.
      await sleep(2_200);
      await store.put('scrapes/new/screenshot.png', Buffer.from('c'));
      assert.equal(await store.sweep(1_500, isMediaKey), 1, 'only the old media file');
      assert.equal(await store.open('scrapes/old/audio.mp3'), null);
      assert.ok(await bytesOf(store, 'scrapes/old/screenshot.png'), 'old screenshot kept by the media-only sweep');
      assert.equal(await store.sweep(1_500), 1, 'the old screenshot');
      assert.equal(await store.open('scrapes/old/screenshot.png'), null);
      assert.equal((await bytesOf(store, 'scrapes/new/screenshot.png'))?.toString(), 'c', 'the young file stays');
    });
  });
}

describe('S3 bucket only', () => {
  test('a prefix keeps the store to its part of a shared bucket: sweeps never touch other objects', async () => {
    const store = await s3Store({ prefix: 'wds/' });
    const bucket = `contract-${buckets}`;
    await store.client.send(new PutObjectCommand({ Bucket: bucket, Key: 'other-app/photo.png', Body: 'theirs' }));
    await store.put('scrapes/p/screenshot.png', Buffer.from('ours'));
    const raw = await store.client.send(new GetObjectCommand({ Bucket: bucket, Key: 'wds/scrapes/p/screenshot.png' }));
    assert.equal(await raw.Body!.transformToString(), 'ours', 'written under the prefix');
    await sleep(1_100);
    assert.equal(await store.sweep(0), 1);
    const theirs = await store.client.send(new GetObjectCommand({ Bucket: bucket, Key: 'other-app/photo.png' }));
    assert.equal(await theirs.Body!.transformToString(), 'theirs');
  });

  test('presigned links (WDS_FILES_S3_PRESIGNED): fetched from the bucket itself until they expire, then the bucket refuses', async () => {
    const store = await s3Store({ presigned: true });
    await store.put('scrapes/ps/screenshot.png', Buffer.from('png-bytes'));
    const url = await store.signedUrl('scrapes/ps/screenshot.png', 1);
    assert.ok(url.startsWith(`${s3.endpoint}/`), url);
    const ok = await fetch(url);
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), 'png-bytes');
    const tampered = await fetch(url.replace('screenshot.png', 'other.png'));
    assert.equal(tampered.status, 403, 'another key with the same signature');
    await sleep(2_100);
    const late = await fetch(url);
    assert.equal(late.status, 403, 'expired: S3 answers 403 (the API store answers 410)');
    await late.arrayBuffer();
  });

});
