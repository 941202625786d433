import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { scrapeUrlRequestSchema } from '@wds/contracts';
import { storeCachedPage } from '@wds/db';
import { scrapeCacheKey } from '@wds/fetch';
import { activityStarts, call, html, namespaceFor, runningActivities, startFixtureSite, startStack, until, type FixtureSite, type Handler, type Stack } from '@wds/test-utils';
import type { AppProcess } from '@wds/launch';

/** Every test's limit: a hang fails with a message instead of holding a test slot. */
const T = { timeout: 120_000 };

// The audio and video formats end to end: a worker serving wds-media (ffmpeg, yt-dlp) next to the
// stack's own, pages on a fixture site with media that ffmpeg makes here (a 1 s sine tone, a 1 s
// test-pattern clip), through the JS SDK (it types `audio` and `video`) and raw HTTP for errors.
const dataDir = mkdtempSync(join(tmpdir(), 'wds-media-e2e-'));
const ff = (...args: string[]) => execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args]);
let stack: Stack;
let site: FixtureSite;
let fc: Firecrawl;
let mediaWorker: AppProcess;
const media: Record<string, Buffer> = {};
let holdMedia: Promise<void> | null = null;

const page = (title: string, body: string, head = '') => `<!doctype html><html lang="en"><head><title>${title}</title>${head}</head><body><main><h1>${title}</h1>${body}</main></body></html>`;
const file = (name: string, type: string): Handler => async (_q, r) => {
  await holdMedia;
  r.writeHead(200, { 'content-type': type }).end(media[name]);
};

before(async () => {
  const d = mkdtempSync(join(dataDir, 'fixtures-'));
  ff('-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-c:a', 'libvorbis', join(d, 'tone.ogg'));
  ff('-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=10:duration=1', '-f', 'lavfi', '-i', 'sine=frequency=660:duration=1', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', join(d, 'clip.mp4'));
  for (const n of ['tone.ogg', 'clip.mp4']) media[n] = readFileSync(join(d, n));
  site = await startFixtureSite({
    '/media/tone.ogg': file('tone.ogg', 'audio/ogg'),
    '/media/clip.mp4': file('clip.mp4', 'video/mp4'),
    '/audio-page': html(page('Podcast', '<p>Listen.</p><audio controls src="/media/tone.ogg"></audio>')),
    '/video-page': html(page('Clip', '<p>Watch.</p><video controls><source src="/media/clip.mp4" type="video/mp4"></video>')),
    '/og-page': html(page('OG clip', '<p>Shared.</p>', '<meta property="og:video" content="/media/clip.mp4">')),
    '/plain': html(page('Plain', '<p>Nothing to hear or see.</p>')),
  });
  site.route('/ld-page', html(page('Embedded', '<p>A player.</p>', `<script type="application/ld+json">{"@context":"https://schema.org","@type":"VideoObject","name":"Clip","contentUrl":"${site.url('/media/clip.mp4')}","uploadDate":"2024-01-01"}</script>`)));
  stack = await startStack({ namespace: namespaceFor(import.meta.url), env: { WDS_DATA_DIR: dataDir } });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
}, { timeout: 180_000 });
after(async () => {
  await stack?.stop();
  await site?.close();
  rmSync(dataDir, { recursive: true, force: true });
}, { timeout: 180_000 });

const startMediaWorker = () => stack.addWorker({ WDS_WORKER_QUEUES: 'wds-media', WDS_PUBLIC_URL: stack.url });

/** A signed link: fetched without any API key; its lifetime from its `expires`. */
async function fetchLink(link: string) {
  const res = await fetch(link);
  const expires = Number(new URL(link).searchParams.get('expires'));
  return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()), lifetimeS: expires - Date.now() / 1000 };
}

const isMp3 = (b: Buffer) => b.subarray(0, 3).toString() === 'ID3' || (b[0] === 0xff && (b[1]! & 0xe0) === 0xe0);
const isMp4 = (b: Buffer) => b.subarray(4, 8).toString() === 'ftyp';

describe('audio and video formats', () => {
  test('no worker serves wds-media: 503 MEDIA_UNAVAILABLE naming the queue (nothing else fails)', T, async () => {
    const r = await call(stack, 'POST', '/v2/scrape', { url: site.url('/audio-page'), formats: ['audio'] });
    assert.equal(r.status, 503, r.text);
    assert.equal(r.json.code, 'MEDIA_UNAVAILABLE');
    assert.match(r.json.error, /wds-media/);
    assert.equal((await call(stack, 'POST', '/v2/scrape', { url: site.url('/audio-page') })).status, 200);
    mediaWorker = await startMediaWorker();
  });

  test('audio: the <audio> element as MP3 behind a signed link valid one hour; 1 + 4 credits (Firecrawl\'s price)', T, async () => {
    const doc = await until(async () => fc.scrape(site.url('/audio-page'), { formats: ['markdown', 'audio'] }).catch(() => null), 'a scrape once the media worker is seen', { timeoutMs: 30_000 });
    assert.match(doc.markdown!, /Listen\./);
    assert.ok(doc.audio, JSON.stringify(doc));
    const got = await fetchLink(doc.audio!);
    assert.equal(got.status, 200);
    assert.equal(got.type, 'audio/mpeg');
    assert.ok(isMp3(got.body), 'MP3 bytes');
    assert.ok(got.lifetimeS > 3500 && got.lifetimeS <= 3600, `the link lives an hour (${got.lifetimeS} s), not the screenshots' 24 hours`);
    assert.equal(doc.metadata?.creditsUsed, 5);
    assert.equal(doc.warning, undefined);
  });

  test('video: <video><source>, og:video and what yt-dlp finds (JSON-LD) as MP4; audio of a video-only page from its sound track', T, async () => {
    for (const p of ['/video-page', '/og-page', '/ld-page']) {
      const doc = await fc.scrape(site.url(p), { formats: ['video'] });
      assert.ok(doc.video, `${p}: ${JSON.stringify(doc)}`);
      const got = await fetchLink(doc.video!);
      assert.equal(got.type, 'video/mp4', p);
      assert.ok(isMp4(got.body), `${p}: MP4 bytes`);
      assert.equal(doc.metadata?.creditsUsed, 5, p);
    }
    const both = await fc.scrape(site.url('/video-page'), { formats: ['audio', 'video'] });
    assert.ok(isMp3((await fetchLink(both.audio!)).body), 'the clip\'s sound track as MP3');
    assert.ok(isMp4((await fetchLink(both.video!)).body));
    assert.equal(both.metadata?.creditsUsed, 9, '1 + 4 per format');
  });

  test('a page without media: audio and video null with a warning; no media credits', T, async () => {
    const r = await call(stack, 'POST', '/v2/scrape', { url: site.url('/plain'), formats: ['markdown', 'audio', 'video'] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.audio, null);
    assert.equal(r.json.data.video, null);
    assert.match(r.json.data.warning, /audio: no audio could be extracted: the page names no audio or video/);
    assert.match(r.json.data.warning, /video: no video could be extracted/);
    assert.equal(r.json.data.metadata.creditsUsed, 1);
  });

  test('crawl, batch scrape and parse refuse the media formats (400 naming them); zero data retention too', T, async () => {
    for (const [path, body] of [
      ['/v2/crawl', { url: site.url('/plain'), scrapeOptions: { formats: ['audio'] } }],
      ['/v2/batch/scrape', { urls: [site.url('/plain')], formats: ['video'] }],
    ] as const) {
      const r = await call(stack, 'POST', path, body);
      assert.equal(r.status, 400, `${path}: ${r.text}`);
      assert.match(r.json.error, /media is extracted per single scrape/);
    }
    const form = new FormData();
    form.append('options', JSON.stringify({ formats: ['audio'] }));
    form.append('file', new Blob(['<p>x</p>'], { type: 'text/html' }), 'x.html');
    const parsed = await call(stack, 'POST', '/v2/parse', form);
    assert.equal(parsed.status, 400, parsed.text);
    const zdr = await stack.newTeam({ flags: { zeroDataRetention: true } });
    const z = await call({ url: stack.url, apiKey: zdr.apiKey }, 'POST', '/v2/scrape', { url: site.url('/audio-page'), formats: ['audio'], zeroDataRetention: true });
    assert.equal(z.status, 400, z.text);
    assert.equal(z.json.code, 'SCRAPE_ZDR_VIOLATION_ERROR');
  });

  test('the media worker SIGKILLed mid-step: another worker redoes it; the scrape answers once, billed once', { timeout: 120_000 }, async () => {
    let release!: () => void;
    holdMedia = new Promise<void>((r) => (release = r));
    const before = site.hits('/media/tone.ogg');
    const pending = call(stack, 'POST', '/v2/scrape', { url: site.url('/audio-page?kill'), formats: ['audio'], timeout: 90_000 });
    await until(() => site.hits('/media/tone.ogg') > before, 'the media step to start downloading', { timeoutMs: 30_000 });
    const id = (await stack.db.pool.query(`SELECT id FROM scrape_jobs WHERE url = $1`, [site.url('/audio-page?kill')])).rows[0].id as string;
    const running = await until(async () => (await runningActivities(stack.namespace, `scrape-${id}`)).find((a) => a.type === 'extractScrapeMedia'), 'the media activity to run');
    assert.equal(running.pid, mediaWorker.child.pid);
    mediaWorker.child.kill('SIGKILL');
    mediaWorker = await startMediaWorker();
    release();
    holdMedia = null;
    const r = await pending;
    assert.equal(r.status, 200, r.text);
    assert.ok(isMp3((await fetchLink(r.json.data.audio)).body));
    // Temporal records the start of the attempt that ended the activity: the second, on the new worker.
    const starts = (await activityStarts(stack.namespace, `scrape-${id}`, { closed: true })).filter((a) => a.type === 'extractScrapeMedia');
    assert.deepEqual(starts, [{ type: 'extractScrapeMedia', attempt: 2, pid: mediaWorker.child.pid }]);
    const charges = await stack.db.pool.query(`SELECT amount FROM credit_ledger WHERE job_id = $1 AND entry = 'charge'`, [id]);
    assert.deepEqual(charges.rows, [{ amount: 5 }], 'one charge: the page and its audio');
  });
});

describe('SSRF guard, WDS_ALLOW_PRIVATE_NETWORK off', () => {
  let guarded: Stack;
  before(async () => {
    // media.example.test points at the fixture site's loopback address: forbidden without the allow flag.
    guarded = await startStack({
      namespace: namespaceFor(import.meta.url, 'b'),
      env: { WDS_DATA_DIR: dataDir, WDS_ALLOW_PRIVATE_NETWORK: 'false', WDS_HOST_OVERRIDES: 'media.example.test=127.0.0.1' },
    });
    await guarded.addWorker({ WDS_WORKER_QUEUES: 'wds-media', WDS_PUBLIC_URL: guarded.url });
  });
  after(async () => {
    await guarded?.stop();
  });

  /** A page the stack has in its cache (no fetch needed), naming `body`'s media. */
  async function cachedPage(path: string, body: string, formats: string[]) {
    const url = `http://media.example.test${path}`;
    const o = scrapeUrlRequestSchema.parse({ url, formats });
    await storeCachedPage(guarded.db.db, scrapeCacheKey(o), { url, finalUrl: url, statusCode: 200, contentType: 'text/html', charset: 'utf-8', body: Buffer.from(page('Cached', body)), engine: 'http' });
    return url;
  }

  test('a media URL on a private address is refused, never requested; the field is null with the reason', T, async () => {
    const url = await cachedPage('/cached-audio', `<audio src="${site.url('/media/tone.ogg')}"></audio>`, ['audio']);
    const before = site.hits('/media/tone.ogg');
    const r = await until(async () => {
      const x = await call(guarded, 'POST', '/v2/scrape', { url, formats: ['audio'] });
      return x.status === 503 ? null : x;
    }, 'the media worker to be seen', { timeoutMs: 30_000 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.metadata.cacheState, 'hit', 'the page came from the cache: no fetch was needed');
    assert.equal(r.json.data.audio, null);
    assert.match(r.json.data.warning, /127\.0\.0\.1 .*private, loopback or reserved address/);
    assert.equal(site.hits('/media/tone.ogg'), before, 'the media URL was never requested');
  });

  test('lockdown: served from the cache, media null with a warning (no outbound request)', T, async () => {
    const url = await cachedPage('/cached-lockdown', `<audio src="http://media.example.test/tone.ogg"></audio>`, ['audio']);
    const r = await call(guarded, 'POST', '/v2/scrape', { url, formats: ['audio'], lockdown: true });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.audio, null);
    assert.match(r.json.data.warning, /lockdown makes no outbound request/);
    assert.equal(r.json.data.metadata.creditsUsed, 5, "lockdown's price on a hit, no media credits");
  });

  test('yt-dlp cannot go around the guard: its requests go through the guarded proxy, which refuses the private address', T, async () => {
    // The fixture's port: were the proxy to let it through, the fixture would count the request.
    const url = await cachedPage(`:${new URL(site.origin).port}/ld-page`, '<p>A player, no media named in HTML.</p>', ['video']);
    const before = site.hits('/ld-page');
    const r = await call(guarded, 'POST', '/v2/scrape', { url, formats: ['video'] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.video, null);
    assert.match(r.json.data.warning, /yt-dlp: .*403/);
    assert.equal(site.hits('/ld-page'), before, 'yt-dlp reached nothing on the private address');
  });
});
