import { runTool, type MediaTools } from './tools';

/**
 * yt-dlp, used only to find where a page's media is (`-J`: its JSON, nothing downloaded, no
 * post-processing, no config or cache files) for sites that do not name it in their HTML. Every
 * request it makes goes through the guarded proxy (`--proxy`, guard-proxy.ts); the files it names
 * are then downloaded by our own guarded fetch, never by yt-dlp, and streaming manifests (HLS,
 * DASH), which would need yt-dlp or ffmpeg to fetch their segments, are not used.
 */
export interface Stream {
  url: string;
  headers: Record<string, string>;
}

/** What to download for a format: one file, or a video and an audio stream to mux. */
export type Pick = { kind: 'single'; stream: Stream } | { kind: 'pair'; video: Stream; audio: Stream };

interface YtFormat {
  url?: string;
  protocol?: string;
  vcodec?: string | null;
  acodec?: string | null;
  height?: number | null;
  abr?: number | null;
  tbr?: number | null;
  filesize?: number | null;
  filesize_approx?: number | null;
  http_headers?: Record<string, string>;
}

interface YtInfo extends YtFormat {
  formats?: YtFormat[];
  entries?: YtInfo[];
}

export interface ResolveOptions {
  proxyUrl: string;
  timeoutMs: number;
  signal?: AbortSignal;
  skipTlsVerification: boolean;
  workDir: string;
}

/** Runs yt-dlp on the page URL; null when it finds nothing (an unsupported page is not an error). */
export async function resolveWithYtDlp(tools: MediaTools, pageUrl: string, o: ResolveOptions): Promise<{ formats: YtFormat[] } | { error: string }> {
  if (!tools.ytDlp) return { error: 'yt-dlp is not installed on the media worker' };
  const args = [
    '--ignore-config', '--no-cache-dir', '--no-playlist', '--no-warnings', '--skip-download', '-J',
    '--proxy', o.proxyUrl,
    '--socket-timeout', String(Math.max(1, Math.min(30, Math.floor(o.timeoutMs / 2000)))),
    ...(o.skipTlsVerification ? ['--no-check-certificates'] : []),
    '--', pageUrl,
  ];
  let out: string;
  try {
    out = (await runTool(tools.ytDlp, args, { timeoutMs: o.timeoutMs, signal: o.signal, cwd: o.workDir, maxOutputBytes: 32 * 1024 * 1024 })).stdout;
  } catch (e) {
    if ((e as { code?: string }).code === 'SCRAPE_TIMEOUT') throw e;
    return { error: lastLine((e as { stderr?: string }).stderr ?? (e as Error).message) };
  }
  let info: YtInfo;
  try {
    info = JSON.parse(out) as YtInfo;
  } catch {
    return { error: 'yt-dlp gave no readable answer' };
  }
  const first = info.entries?.[0] ?? info;
  const formats = first.formats?.length ? first.formats : first.url ? [first] : [];
  return { formats: formats.filter((f) => typeof f.url === 'string' && /^https?$/.test(f.protocol ?? 'https') && /^https?:\/\//.test(f.url)) };
}

function lastLine(s: string): string {
  return (s.trim().split('\n').filter((l) => /ERROR|error/.test(l)).pop() ?? s.trim().split('\n').pop() ?? '').replace(/^ERROR:\s*/, '').slice(0, 300);
}

const size = (f: YtFormat) => f.filesize ?? f.filesize_approx ?? null;
const fits = (f: YtFormat, maxBytes: number) => (size(f) ?? 0) <= maxBytes;
const stream = (f: YtFormat): Stream => ({ url: f.url!, headers: f.http_headers ?? {} });
// yt-dlp lists formats worst first; codec "none" means the stream is absent, null/undefined unknown.
const hasVideo = (f: YtFormat) => f.vcodec !== 'none';
const hasAudio = (f: YtFormat) => f.acodec !== 'none';

/**
 * The format to fetch: for `video` the best progressive (video and audio in one file) that fits
 * the size cap, else the best video-only plus the best audio-only stream; for `audio` the best
 * audio-only stream, else the smallest file that has sound.
 */
export function pickFormat(kind: 'audio' | 'video', formats: YtFormat[], maxBytes: number): Pick | null {
  const ok = formats.filter((f) => fits(f, maxBytes));
  const best = (fs: YtFormat[]) => fs[fs.length - 1];
  if (kind === 'audio') {
    const only = best(ok.filter((f) => !hasVideo(f) && hasAudio(f)));
    const any = ok.find((f) => hasAudio(f));
    const f = only ?? any;
    return f ? { kind: 'single', stream: stream(f) } : null;
  }
  const progressive = best(ok.filter((f) => hasVideo(f) && hasAudio(f)).sort((a, b) => (a.height ?? 0) - (b.height ?? 0)));
  if (progressive) return { kind: 'single', stream: stream(progressive) };
  const v = best(ok.filter((f) => hasVideo(f) && !hasAudio(f)).sort((a, b) => (a.height ?? 0) - (b.height ?? 0)));
  const a = best(ok.filter((f) => !hasVideo(f) && hasAudio(f)));
  if (v && a) return { kind: 'pair', video: stream(v), audio: stream(a) };
  return v ? { kind: 'single', stream: stream(v) } : null;
}
