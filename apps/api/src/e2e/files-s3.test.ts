import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { html, namespaceFor, startFixtureSite, startS3TestServer, startStack, type FixtureSite, type S3TestServer, type Stack } from '@wds/test-utils';

// A fleet's file path with no shared disk: the API and a browser worker configured only through the
// environment to keep files in a bucket of a real S3-compatible server. The JS SDK user gets the same
// API-signed link as with the local directory; the API streams it from the bucket; nothing lands on disk.
const TTL_S = 6;
const BUCKET = 'wds-files';
const dataDir = mkdtempSync(join(tmpdir(), 'wds-files-s3-'));
let s3: S3TestServer;
let bucket: S3Client;
let stack: Stack;
let site: FixtureSite;
let fc: Firecrawl;

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

before(async () => {
  s3 = await startS3TestServer();
  bucket = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
  await bucket.send(new CreateBucketCommand({ Bucket: BUCKET }));
  const filesEnv = {
    WDS_DATA_DIR: dataDir,
    WDS_FILE_SIGNING_SECRET: 'files-s3-e2e-signing-secret',
    WDS_FILE_URL_TTL_SECONDS: String(TTL_S),
    WDS_FILES_S3_BUCKET: BUCKET,
    WDS_FILES_S3_ENDPOINT: s3.endpoint,
    WDS_FILES_S3_PREFIX: 'fleet',
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
  };
  [stack, site] = await Promise.all([
    startStack({ namespace: namespaceFor(import.meta.url), env: filesEnv }),
    startFixtureSite({ '/shot': html('<!doctype html><html><head><title>Shot</title></head><body><h1>Bucket bound</h1></body></html>') }),
  ]);
  await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-browser', WDS_PUBLIC_URL: stack.url });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});

after(async () => {
  await stack?.stop();
  await site?.close();
  bucket?.destroy();
  await s3?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('a screenshot lands in the bucket, its API link streams it to the SDK user, and no file is written locally', async () => {
  const d = await fc.scrape(site.url('/shot'), { formats: ['markdown', 'screenshot'] });
  assert.match(d.markdown!, /Bucket bound/);
  const link = new URL(d.screenshot!);
  assert.match(link.pathname, /^\/v2\/files\/scrapes\/[0-9a-f-]+\/screenshot\.png$/, 'the same link shape as the local store');
  assert.equal(link.origin, stack.url);

  const res = await fetch(link);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'image/png');
  const body = Buffer.from(await res.arrayBuffer());
  assert.ok(PNG.every((m, i) => body[i] === m), 'a PNG');
  assert.equal(Number(res.headers.get('content-length')), body.length);

  const obj = await bucket.send(new GetObjectCommand({ Bucket: BUCKET, Key: `fleet${link.pathname.slice('/v2/files'.length)}` }));
  assert.ok(Buffer.from(await obj.Body!.transformToByteArray()).equals(body), 'the bucket holds the same bytes under the prefix');

  const pngs = filesUnder(dataDir).filter((f) => /\.(png|jpg|pdf|mp3|mp4|webm|tmp)$/.test(f));
  assert.deepEqual(pngs, [], 'no file in the data directory');

  const tampered = new URL(link);
  tampered.searchParams.set('expires', String(Number(link.searchParams.get('expires')) + 60));
  assert.equal((await fetch(tampered)).status, 403);

  // The link's lifetime is the API's: past it, 410 with the error body (as with the local store).
  await new Promise((r) => setTimeout(r, Math.max(0, Number(link.searchParams.get('expires')) * 1000 - Date.now()) + 1_200));
  const late = await fetch(link);
  assert.equal(late.status, 410);
  assert.deepEqual(await late.json(), { success: false, error: 'Gone: this file link has expired. Scrape the page again for a fresh link.', code: 'FILE_LINK_EXPIRED' });
});

test('a file gone from the bucket is a 404 with the error body, not a crash', async () => {
  const d = await fc.scrape(site.url('/shot'), { formats: ['screenshot'], maxAge: 0 });
  const link = new URL(d.screenshot!);
  const key = `fleet${link.pathname.slice('/v2/files'.length)}`;
  await bucket.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
  const r = await fetch(link);
  assert.equal(r.status, 404);
  const b = (await r.json()) as { success: boolean; code: string };
  assert.equal(b.success, false);
  assert.equal(b.code, 'FILE_NOT_FOUND');
});
