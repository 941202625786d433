import { join } from 'node:path';
import { WdsError } from '@wds/errors';
import { fetchPage, type FetchedPage, type FetchRequest } from '@wds/fetch';
import { probe, toMp3, toVideo, type Probe } from './convert';
import type { GuardedProxy } from './guard-proxy';
import { candidatesFor, type MediaSources } from './sources';
import type { MediaTools } from './tools';
import { pickFormat, resolveWithYtDlp, type Pick, type Stream } from './ytdlp';

export type MediaKind = 'audio' | 'video';
export type MediaFile = { file: string; contentType: 'audio/mpeg' | 'video/mp4' | 'video/webm' };

export interface ExtractRequest {
  pageUrl: string;
  sources: MediaSources;
  want: MediaKind[];
  /** A fresh directory for downloads and outputs; the caller removes it. */
  workDir: string;
  tools: MediaTools;
  allowPrivateNetwork: boolean;
  skipTlsVerification: boolean;
  /** Largest download (each file) and output, in bytes (WDS_MEDIA_MAX_BYTES). */
  maxBytes: number;
  /** Epoch ms the whole step must end by. */
  deadlineMs: number;
  signal?: AbortSignal;
  /** The guarded proxy for yt-dlp (one per process, started on first use). */
  proxy: () => Promise<GuardedProxy>;
  /** The guarded fetch (tests swap in another address policy). */
  fetch?: (req: FetchRequest) => Promise<FetchedPage>;
}

export interface ExtractedMedia {
  /** Per wanted kind: the converted file, or null (then `warnings` says why). */
  files: Partial<Record<MediaKind, MediaFile | null>>;
  warnings: string[];
}

interface Downloaded {
  file: string;
  probe: Probe;
}

/**
 * The page's primary audio and/or video, as files: the media the page names (sources.ts) are
 * tried first, in order; a kind the page names nothing for is looked up with yt-dlp. Every
 * download is our guarded fetch (the SSRF guard on every redirect, the size cap), into
 * `workDir`; ffprobe then says whether it is media at all, and ffmpeg makes the MP3 (audio) or
 * the MP4/WebM (video). A kind that cannot be had is null with a warning; only the deadline,
 * a cancellation and a broken tool fail the step.
 */
export async function extractMedia(r: ExtractRequest): Promise<ExtractedMedia> {
  const out: ExtractedMedia = { files: {}, warnings: [] };
  const downloads = new Map<string, Promise<Downloaded | string>>();
  let yt: Promise<Awaited<ReturnType<typeof resolveWithYtDlp>>> | undefined;
  const left = () => {
    const ms = r.deadlineMs - Date.now();
    if (ms < 50) throw new WdsError('REQUEST_TIMEOUT', { code: 'SCRAPE_TIMEOUT', retryable: false, message: 'Request Timeout: no time was left of the scrape\'s timeout for its media' });
    return ms;
  };
  let n = 0;
  /** One guarded download per URL (audio may reuse the video's file), probed; a string says why not. */
  const download = (s: Stream): Promise<Downloaded | string> => {
    let p = downloads.get(s.url);
    if (!p) {
      p = fetchMedia(r, s, join(r.workDir, `in-${n++}`), left());
      downloads.set(s.url, p);
    }
    return p;
  };

  for (const kind of r.want) {
    const named = candidatesFor(kind, r.sources);
    const reasons: string[] = [];
    let made: MediaFile | null = null;
    for (const url of named.slice(0, 3)) {
      const d = await download({ url, headers: { Referer: r.pageUrl } });
      if (typeof d === 'string') reasons.push(d);
      else if (!(kind === 'video' ? d.probe.video : d.probe.audio).length) reasons.push(`${url} has no ${kind} stream`);
      else {
        made = await convert(r, kind, [d], left());
        break;
      }
    }
    if (!made && !named.length) {
      yt ??= resolveWithYtDlp(r.tools, r.pageUrl, { proxyUrl: (await r.proxy()).url, timeoutMs: Math.min(left(), 60_000), signal: r.signal, skipTlsVerification: r.skipTlsVerification, workDir: r.workDir });
      const found = await yt;
      const pick = 'formats' in found ? pickFormat(kind, found.formats, r.maxBytes) : null;
      if (pick) made = await fromPick(r, kind, pick, download, left);
      else reasons.push('formats' in found ? `yt-dlp found no ${kind} for the page` : `yt-dlp: ${found.error}`);
    }
    out.files[kind] = made;
    if (!made) {
      const why = named.length ? reasons.join('; ') : `the page names no ${kind === 'audio' ? 'audio or video' : 'video'} (no <${kind}> element or og:${kind} tag)${reasons.length ? `, and ${reasons.join('; ')}` : ''}`;
      out.warnings.push(`${kind}: no ${kind} could be extracted: ${why}.`);
    }
  }
  return out;
}

async function fromPick(r: ExtractRequest, kind: MediaKind, pick: Pick, download: (s: Stream) => Promise<Downloaded | string>, left: () => number): Promise<MediaFile | null> {
  const parts = pick.kind === 'single' ? [pick.stream] : [pick.video, pick.audio];
  const got: Downloaded[] = [];
  for (const s of parts) {
    const d = await download(s);
    if (typeof d === 'string') return null;
    got.push(d);
  }
  return convert(r, kind, got, left());
}

async function convert(r: ExtractRequest, kind: MediaKind, inputs: Downloaded[], timeoutMs: number): Promise<MediaFile> {
  const o = { timeoutMs, signal: r.signal };
  if (kind === 'audio') {
    const file = join(r.workDir, 'audio.mp3');
    await toMp3(r.tools, inputs.find((i) => i.probe.audio.length)!.file, file, o);
    return { file, contentType: 'audio/mpeg' };
  }
  return toVideo(r.tools, inputs, join(r.workDir, 'video'), o);
}

/** Downloads one stream through the guard into `file` and probes it; a string says why it is not usable. */
async function fetchMedia(r: ExtractRequest, s: Stream, file: string, timeoutMs: number): Promise<Downloaded | string> {
  const fetch = r.fetch ?? fetchPage;
  try {
    const res = await fetch({
      url: s.url,
      headers: { Accept: '*/*', ...s.headers },
      timeoutMs,
      skipTlsVerification: r.skipTlsVerification,
      allowPrivateNetwork: r.allowPrivateNetwork,
      maxBodyBytes: r.maxBytes,
      signal: r.signal,
      saveTo: file,
    });
    if (res.statusCode >= 400) return `${s.url} answered HTTP ${res.statusCode}`;
  } catch (e) {
    if (e instanceof WdsError && (e.kind === 'REQUEST_TIMEOUT' || r.signal?.aborted)) throw e;
    const err = e instanceof WdsError ? e : null;
    if (err?.code === 'SCRAPE_BODY_TOO_LARGE' || /maximum body size/.test(err?.message ?? '')) return `${s.url} is larger than ${r.maxBytes} bytes (WDS_MEDIA_MAX_BYTES)`;
    return `${s.url} could not be downloaded (${(e as Error).message})`;
  }
  const p = await probe(r.tools, file, { timeoutMs: Math.max(1, r.deadlineMs - Date.now()), signal: r.signal });
  return p ? { file, probe: p } : `${s.url} is not an audio or video file ffmpeg reads`;
}
