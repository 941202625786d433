import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fork } from 'node:child_process';
import { isMediaKey, isValidKey, LocalFileStore, resolveSigningSecret, scrapeFileKey, signFileUrl, verifyFileLink } from './index';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'wds-storage-'));
  dirs.push(d);
  return d;
};
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

test('keys: safe relative paths with a known extension only', () => {
  assert.equal(isValidKey('scrapes/0b3f/screenshot.png'), true);
  assert.equal(isValidKey(scrapeFileKey('job-1', 'action-pdf-0', 'application/pdf')), true);
  for (const bad of ['../x.png', 'a/../b.png', '/abs.png', 'a//b.png', '.hidden.png', 'a/.x/b.png', 'x.exe', 'x', 'a b.png', 'a/b.png?x', '']) {
    assert.equal(isValidKey(bad), false, bad);
  }
});

test('links: valid until expiry; signature checked before expiry; any edit is refused', () => {
  const now = 1_700_000_000_000;
  const url = new URL(signFileUrl({ publicUrl: 'http://h:1/', routePrefix: '/v2/files', secret: 's3cret', key: 'a/b.png', ttlSeconds: 60, nowMs: now }));
  assert.equal(url.pathname, '/v2/files/a/b.png');
  const e = url.searchParams.get('expires')!;
  const sig = url.searchParams.get('sig')!;
  assert.equal(verifyFileLink('s3cret', 'a/b.png', e, sig, now), 'ok');
  assert.equal(verifyFileLink('s3cret', 'a/b.png', e, sig, now + 61_000), 'expired');
  assert.equal(verifyFileLink('s3cret', 'a/c.png', e, sig, now), 'bad-signature');
  assert.equal(verifyFileLink('s3cret', 'a/b.png', String(Number(e) + 1000), sig, now + 61_000), 'bad-signature', 'extended expiry');
  assert.equal(verifyFileLink('other', 'a/b.png', e, sig, now), 'bad-signature');
  assert.equal(verifyFileLink('s3cret', 'a/b.png', e, undefined, now), 'bad-signature');
  assert.equal(verifyFileLink('s3cret', 'a/b.png', 'soon', sig, now), 'bad-signature');
});

test('local store: put, open, signed URL, sweep', async () => {
  const dir = tmp();
  const store = new LocalFileStore({ dir, publicUrl: 'http://api.test', secret: () => 'k'.repeat(32), defaultTtlSeconds: 100 });
  const f = await store.put('scrapes/j1/screenshot.png', Buffer.from('png-bytes'));
  assert.deepEqual(f, { key: 'scrapes/j1/screenshot.png', contentType: 'image/png', size: 9 });
  assert.equal(readFileSync(join(dir, 'scrapes/j1/screenshot.png'), 'utf8'), 'png-bytes');
  const body = await store.open('scrapes/j1/screenshot.png');
  assert.equal(body?.contentType, 'image/png');
  assert.equal(body?.size, 9);
  (body!.stream as NodeJS.ReadableStream & { destroy(): void }).destroy();
  assert.equal(await store.open('scrapes/j1/missing.png'), null);
  assert.equal(await store.open('../etc/passwd.png'), null);
  await assert.rejects(store.put('../x.png', Buffer.from('x')));
  assert.match(await store.signedUrl('scrapes/j1/screenshot.png'), /^http:\/\/api\.test\/v2\/files\/scrapes\/j1\/screenshot\.png\?expires=\d+&sig=[\w-]+$/);

  await store.put('scrapes/j2/action-pdf-0.pdf', Buffer.from('%PDF'));
  const old = new Date(Date.now() - 3600_000);
  utimesSync(join(dir, 'scrapes/j1/screenshot.png'), old, old);
  assert.equal(await store.sweep(60_000), 1);
  assert.equal(await store.open('scrapes/j1/screenshot.png'), null);
  assert.ok(await store.open('scrapes/j2/action-pdf-0.pdf'));
});

test('media files: mp3/mp4/webm keys, copied in from a local file, swept on their own (shorter) schedule', async () => {
  const dir = tmp();
  const store = new LocalFileStore({ dir, publicUrl: 'http://api.test', secret: 'k'.repeat(32), defaultTtlSeconds: 86_400 });
  assert.deepEqual(['audio/mpeg', 'video/mp4', 'video/webm'].map((t) => scrapeFileKey('j', 'x', t as never)), ['scrapes/j/x.mp3', 'scrapes/j/x.mp4', 'scrapes/j/x.webm']);
  const src = join(tmp(), 'audio.mp3');
  writeFileSync(src, 'mp3-bytes');
  assert.deepEqual(await store.putFile('scrapes/j/audio.mp3', src), { key: 'scrapes/j/audio.mp3', contentType: 'audio/mpeg', size: 9 });
  assert.equal(readFileSync(join(dir, 'scrapes/j/audio.mp3'), 'utf8'), 'mp3-bytes');
  await store.put('scrapes/j/screenshot.png', Buffer.from('png'));
  const old = new Date(Date.now() - 3 * 3600_000);
  for (const f of ['scrapes/j/audio.mp3', 'scrapes/j/screenshot.png']) utimesSync(join(dir, f), old, old);
  assert.equal(await store.sweep(2 * 3600_000, isMediaKey), 1, 'only the media file');
  assert.equal(await store.open('scrapes/j/audio.mp3'), null);
  assert.ok(await store.open('scrapes/j/screenshot.png'));
});

test('secret: configured wins; else generated once and shared by concurrent processes', async () => {
  assert.equal(resolveSigningSecret('from-env-value-123', tmp()), 'from-env-value-123');
  const dir = tmp();
  const script = join(tmp(), 'child.mjs');
  writeFileSync(script, `import { resolveSigningSecret } from ${JSON.stringify(new URL('./secret.ts', import.meta.url).pathname)};\nprocess.send(resolveSigningSecret(undefined, ${JSON.stringify(dir)}), () => process.exit(0));\n`);
  const secrets = await Promise.all(
    Array.from({ length: 6 }, () => new Promise<string>((resolve, reject) => {
      const c = fork(script, { execArgv: ['--import', 'tsx'] });
      c.once('message', (m) => resolve(String(m)));
      c.once('error', reject);
    })),
  );
  assert.equal(new Set(secrets).size, 1, 'every process got the same secret');
  assert.match(secrets[0]!, /^[0-9a-f]{64}$/);
  assert.equal(resolveSigningSecret(undefined, dir), secrets[0]);
});
