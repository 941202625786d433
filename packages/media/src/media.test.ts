import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createFetcher, isForbiddenAddress } from '@wds/fetch';
import { extractMedia, findMediaTools, mediaSources, probe, startGuardedProxy, type ExtractRequest, type GuardedProxy } from './index';

/** Every test's limit: a hang fails with a message instead of holding a test slot. */
const T = { timeout: 60_000 };

// The media engine against real ffmpeg, ffprobe and yt-dlp (Debian's), with fixture media made
// by ffmpeg here (a 1 s sine tone, a 1 s test-pattern clip) and served on loopback.
const run = promisify(execFile);
const { tools } = findMediaTools();
const dir = mkdtempSync(join(tmpdir(), 'wds-media-test-'));
const ff = (...args: string[]) => execFileSync(tools.ffmpeg, ['-hide_banner', '-loglevel', 'error', '-y', ...args]);
let files: Record<string, Buffer>;
let server: Server;
let origin: string;
const hits = new Map<string, number>();
const pages: Record<string, string> = {};
const proxies: GuardedProxy[] = [];

before(async () => {
  ff('-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-c:a', 'libvorbis', join(dir, 'tone.ogg'));
  ff('-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=10:duration=1', '-f', 'lavfi', '-i', 'sine=frequency=660:duration=1', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', join(dir, 'clip.mp4'));
  ff('-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=10:duration=1', '-c:v', 'mpeg2video', join(dir, 'silent.mpg'));
  files = Object.fromEntries(['tone.ogg', 'clip.mp4', 'silent.mpg'].map((f) => [f, readFileSync(join(dir, f))]));
  // An HLS playlist naming a local file: ffmpeg would read it (and any URL) if it were let.
  files['list.m3u8'] = Buffer.from('#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n');
  server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/to-other') return void res.writeHead(302, { location: `http://127.0.0.2:${(server.address() as AddressInfo).port}/clip.mp4` }).end();
    const name = path.slice(1);
    if (files[name]) return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(files[name]);
    if (pages[path]) return void res.writeHead(200, { 'content-type': 'text/html' }).end(pages[path]);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '0.0.0.0', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  pages['/ld'] = `<html><head><title>ld</title><script type="application/ld+json">{"@context":"https://schema.org","@type":"VideoObject","name":"Clip","contentUrl":"${origin}/clip.mp4","uploadDate":"2024-01-01"}</script></head><body><p>text</p></body></html>`;
}, { timeout: 120_000 });
after(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  server?.closeAllConnections();
  server?.close();
  rmSync(dir, { recursive: true, force: true });
}, { timeout: 120_000 });

function request(over: Partial<ExtractRequest> & Pick<ExtractRequest, 'sources' | 'want'>): ExtractRequest {
  const workDir = mkdtempSync(join(dir, 'work-'));
  const allowPrivateNetwork = over.allowPrivateNetwork ?? true;
  return {
    pageUrl: `${origin}/page`,
    workDir,
    tools,
    allowPrivateNetwork,
    skipTlsVerification: true,
    maxBytes: 10 * 1024 * 1024,
    deadlineMs: Date.now() + 60_000,
    proxy: async () => {
      const p = await startGuardedProxy({ allowPrivateNetwork });
      proxies.push(p);
      return p;
    },
    ...over,
  };
}

const codecs = async (file: string) => probe(tools, file, { timeoutMs: 10_000 });

describe('mediaSources', () => {
  test('video and audio elements with their sources, og tags, base href; http(s) only, each once', T, () => {
    const html = `<html><head><base href="https://cdn.example/m/"><meta property="og:video:secure_url" content="https://v.example/og.mp4">
      <meta property="og:audio" content="/a/og.mp3"><meta name="og:title" content="x"></head><body>
      <video src="main.mp4"><source src="alt.webm" type="video/webm"><source src="data:video/mp4;base64,AAAA"></video>
      <audio><source src="song.ogg"></audio><source src="stray.mp4"><video src="main.mp4"></video><img src="x.png"></body></html>`;
    assert.deepEqual(mediaSources(html, 'https://page.example/p'), {
      video: ['https://v.example/og.mp4', 'https://cdn.example/m/main.mp4', 'https://cdn.example/m/alt.webm'],
      audio: ['https://cdn.example/a/og.mp3', 'https://cdn.example/m/song.ogg'],
    });
    assert.deepEqual(mediaSources('<p>no media</p>', 'https://page.example/'), { video: [], audio: [] });
  });
});

describe('extractMedia', () => {
  test('audio element → MP3; video element → MP4 by stream copy; audio of a video-only page → its sound track as MP3', T, async () => {
    const r = request({ sources: { audio: [`${origin}/tone.ogg`], video: [`${origin}/clip.mp4`] }, want: ['audio', 'video'] });
    const out = await extractMedia(r);
    assert.deepEqual(out.warnings, []);
    assert.equal(out.files.audio?.contentType, 'audio/mpeg');
    const a = await codecs(out.files.audio!.file);
    assert.deepEqual([a?.format, a?.audio, a?.video], ['mp3', ['mp3'], []]);
    assert.ok(a!.durationS! > 0.9 && a!.durationS! < 1.2, `the tone's second (${a?.durationS})`);
    assert.equal(out.files.video?.contentType, 'video/mp4');
    const v = await codecs(out.files.video!.file);
    assert.deepEqual([v?.video, v?.audio], [['h264'], ['aac']], 'stream copy keeps the codecs');

    const fromVideo = await extractMedia(request({ sources: { audio: [], video: [`${origin}/clip.mp4`] }, want: ['audio'] }));
    assert.deepEqual((await codecs(fromVideo.files.audio!.file))?.audio, ['mp3']);
  });

  test('a page without media: null with a warning naming what was looked for (yt-dlp found nothing either)', T, async () => {
    pages['/plain'] = '<html><body><p>no media here</p></body></html>';
    const out = await extractMedia(request({ pageUrl: `${origin}/plain`, sources: { audio: [], video: [] }, want: ['audio', 'video'] }));
    assert.deepEqual(out.files, { audio: null, video: null });
    assert.match(out.warnings[0]!, /^audio: no audio could be extracted: the page names no audio or video .*yt-dlp/);
    assert.match(out.warnings[1]!, /^video: no video could be extracted/);
  });

  test('not media, or no stream of the kind: skipped with the reason; the next candidate is used', T, async () => {
    const out = await extractMedia(request({ sources: { audio: [], video: [`${origin}/missing.mp4`, `${origin}/list.m3u8`, `${origin}/silent.mpg`] }, want: ['audio', 'video'] }));
    assert.equal(out.files.video?.contentType, 'video/mp4', 'MPEG-2 re-encoded to H.264 MP4');
    assert.deepEqual((await codecs(out.files.video!.file))?.video, ['h264']);
    assert.equal(out.files.audio, null);
    assert.match(out.warnings.join(' '), /missing\.mp4 answered HTTP 404; .*list\.m3u8 is not an audio or video file ffmpeg reads; .*silent\.mpg has no audio stream/);
  });

  test('size cap: a file larger than WDS_MEDIA_MAX_BYTES is not downloaded past it', T, async () => {
    const out = await extractMedia(request({ sources: { audio: [`${origin}/tone.ogg`], video: [] }, want: ['audio'], maxBytes: 1000 }));
    assert.equal(out.files.audio, null);
    assert.match(out.warnings[0]!, /larger than 1000 bytes \(WDS_MEDIA_MAX_BYTES\)/);
  });

  test('SSRF guard, allow flag off: a media URL on a private address is refused and never requested', T, async () => {
    const before = hits.get('/tone.ogg') ?? 0;
    const out = await extractMedia(request({ allowPrivateNetwork: false, sources: { audio: [`${origin}/tone.ogg`], video: [] }, want: ['audio'] }));
    assert.equal(out.files.audio, null);
    assert.match(out.warnings[0]!, /resolves to a private, loopback or reserved address/);
    assert.equal(hits.get('/tone.ogg') ?? 0, before, 'no request reached it');
  });

  test('SSRF guard on every redirect: an allowed media URL redirecting to a forbidden address is refused there', T, async () => {
    // 127.0.0.1 allowed, 127.0.0.2 (loopback as well) forbidden: the redirect is what is judged.
    const fetch = createFetcher({ isForbidden: (ip) => ip === '127.0.0.2' || (ip !== '127.0.0.1' && isForbiddenAddress(ip)) });
    const before = hits.get('/clip.mp4') ?? 0;
    const out = await extractMedia(request({ allowPrivateNetwork: false, fetch, sources: { audio: [], video: [`${origin}/to-other`] }, want: ['video'] }));
    await fetch.close();
    assert.equal(hits.get('/to-other'), 1);
    assert.equal(out.files.video, null);
    assert.match(out.warnings[0]!, /127\.0\.0\.2/);
    assert.equal(hits.get('/clip.mp4') ?? 0, before, 'the redirect target was never requested');
  });

  test('yt-dlp resolves media the page does not name in HTML (JSON-LD VideoObject), through the guarded proxy; the download is ours', T, async () => {
    const out = await extractMedia(request({ pageUrl: `${origin}/ld`, sources: { audio: [], video: [] }, want: ['video'] }));
    assert.deepEqual(out.warnings, []);
    assert.equal(out.files.video?.contentType, 'video/mp4');
    assert.ok(statSync(out.files.video!.file).size > 1000);
  });

  test('yt-dlp cannot go around the guard: with the allow flag off its requests to a private address are refused by the proxy', T, async () => {
    const before = hits.get('/ld') ?? 0;
    const out = await extractMedia(request({ allowPrivateNetwork: false, pageUrl: `${origin}/ld`, sources: { audio: [], video: [] }, want: ['video'] }));
    assert.equal(out.files.video, null);
    assert.match(out.warnings[0]!, /yt-dlp: .*403/);
    assert.equal(hits.get('/ld') ?? 0, before, 'yt-dlp reached nothing');
    assert.ok(proxies.at(-1)!.refused.includes('127.0.0.1'), 'the proxy refused it');
  });
});

describe('guarded proxy', () => {
  /** curl through the proxy (asynchronously: the proxy runs in this process); its HTTP status, or 0 when refused at CONNECT. */
  const curl = async (proxy: string, url: string, tunnel = false) => {
    const r = await run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '10', ...(tunnel ? ['--proxytunnel'] : []), '--proxy', proxy, url]).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
    return r.stdout.trim();
  };

  test('CONNECT and plain requests: private targets refused when not allowed; ports outside a given list always', T, async () => {
    const p = await startGuardedProxy({ allowPrivateNetwork: false });
    proxies.push(p);
    const before = hits.get('/tone.ogg') ?? 0;
    assert.equal(await curl(p.url, `${origin}/tone.ogg`), '403');
    assert.notEqual(await curl(p.url, `${origin}/tone.ogg`, true), '200', 'CONNECT refused too');
    assert.equal(hits.get('/tone.ogg') ?? 0, before, 'nothing reached the private address');
    const open = await startGuardedProxy({ allowPrivateNetwork: true });
    proxies.push(open);
    assert.equal(await curl(open.url, `${origin}/tone.ogg`), '200');
    assert.equal(await curl(open.url, `${origin}/tone.ogg`, true), '200', 'through a CONNECT tunnel');
    const onlyWeb = await startGuardedProxy({ allowPrivateNetwork: true, ports: [80, 443] });
    proxies.push(onlyWeb);
    assert.equal(await curl(onlyWeb.url, `${origin}/tone.ogg`), '403', 'a port outside the list');
  });
});
