import { runTool, type MediaTools } from './tools';

/**
 * ffprobe and ffmpeg on files the media step downloaded, never on URLs. Both run with
 * `-protocol_whitelist file` and only on inputs whose container is on the list below: a
 * "media" file may be an HLS playlist or an ffconcat script naming other URLs or local files,
 * which ffmpeg would otherwise fetch (around the SSRF guard) or read (any file of the worker).
 */
const CONTAINERS = new Set([
  'mov,mp4,m4a,3gp,3g2,mj2', 'matroska,webm', 'mp3', 'ogg', 'wav', 'flac', 'aac', 'mpeg', 'mpegts', 'flv', 'avi', 'asf',
]);
const NO_NETWORK = ['-protocol_whitelist', 'file'];

export interface Probe {
  format: string;
  durationS: number | null;
  video: string[];
  audio: string[];
}

export async function probe(tools: MediaTools, file: string, o: { timeoutMs: number; signal?: AbortSignal }): Promise<Probe | null> {
  let out: string;
  try {
    out = (await runTool(tools.ffprobe, ['-v', 'error', ...NO_NETWORK, '-print_format', 'json', '-show_format', '-show_streams', file], o)).stdout;
  } catch (e) {
    if ((e as { code?: string }).code === 'SCRAPE_TIMEOUT') throw e;
    return null; // not media ffprobe can read
  }
  const j = JSON.parse(out) as { format?: { format_name?: string; duration?: string }; streams?: { codec_type?: string; codec_name?: string }[] };
  const format = j.format?.format_name ?? '';
  if (!CONTAINERS.has(format)) return null;
  const codecs = (type: string) => (j.streams ?? []).filter((s) => s.codec_type === type).map((s) => s.codec_name ?? '');
  const d = Number(j.format?.duration);
  return { format, durationS: Number.isFinite(d) ? d : null, video: codecs('video'), audio: codecs('audio') };
}

/** The audio of a file as MP3 (LAME VBR ~165 kb/s), whatever its codec. */
export async function toMp3(tools: MediaTools, input: string, output: string, o: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
  await runTool(tools.ffmpeg, ['-nostdin', '-hide_banner', '-loglevel', 'error', ...NO_NETWORK, '-i', input, '-map', '0:a:0', '-vn', '-c:a', 'libmp3lame', '-q:a', '4', '-y', output], o);
}

const MP4_VIDEO = new Set(['h264', 'hevc', 'av1', 'mpeg4']);
const MP4_AUDIO = new Set(['aac', 'mp3', 'opus', 'alac', 'flac']);
const WEBM_VIDEO = new Set(['vp8', 'vp9', 'av1']);
const WEBM_AUDIO = new Set(['opus', 'vorbis']);

/**
 * The video as a file a browser plays: MP4 or WebM by stream copy when its codecs allow (no
 * re-encoding: fast, lossless), else H.264/AAC MP4 (re-encoded: CPU-heavy, bounded by the
 * step's deadline). Extra inputs (a separate audio stream from yt-dlp) are muxed in.
 */
export async function toVideo(
  tools: MediaTools,
  inputs: { file: string; probe: Probe }[],
  outputBase: string,
  o: { timeoutMs: number; signal?: AbortSignal },
): Promise<{ file: string; contentType: 'video/mp4' | 'video/webm' }> {
  const v = inputs.flatMap((i) => i.probe.video);
  const a = inputs.flatMap((i) => i.probe.audio);
  const all = (codecs: string[], set: Set<string>) => codecs.every((c) => set.has(c));
  const target = all(v, MP4_VIDEO) && all(a, MP4_AUDIO) ? 'mp4' : all(v, WEBM_VIDEO) && all(a, WEBM_AUDIO) ? 'webm' : null;
  const args = ['-nostdin', '-hide_banner', '-loglevel', 'error', ...NO_NETWORK];
  for (const i of inputs) args.push('-i', i.file);
  // First video stream of the first input that has one; first audio of the first that has audio.
  const vi = inputs.findIndex((i) => i.probe.video.length);
  const ai = inputs.findIndex((i) => i.probe.audio.length);
  if (vi >= 0) args.push('-map', `${vi}:v:0`);
  if (ai >= 0) args.push('-map', `${ai}:a:0`);
  const file = `${outputBase}.${target ?? 'mp4'}`;
  if (target) args.push('-c', 'copy');
  else args.push('-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k');
  if (target !== 'webm') args.push('-movflags', '+faststart');
  args.push('-y', file);
  await runTool(tools.ffmpeg, args, o);
  return { file, contentType: target === 'webm' ? 'video/webm' : 'video/mp4' };
}
