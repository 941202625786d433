import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { childEnv } from '@wds/config/child-env';
import { isExecutable, onPath } from '@wds/config/executables';
import { WdsError } from '@wds/errors';

/**
 * The programs media work runs: Debian's `ffmpeg`/`ffprobe` (required: no media worker without
 * them) and `yt-dlp` (optional: without it only pages that name their media are served).
 */
export interface MediaTools {
  ffmpeg: string;
  ffprobe: string;
  /** Absent: yt-dlp is not installed; pages whose media only yt-dlp finds get null with a warning. */
  ytDlp?: string;
}

const notFound = (message: string) => new WdsError('SERVICE_UNAVAILABLE', { code: 'MEDIA_TOOLS_NOT_FOUND', retryable: false, message });

/**
 * Finds the tools: an explicit path (FFMPEG_PATH / YTDLP_PATH) must exist; else PATH. ffprobe is
 * taken from beside ffmpeg. Throws, saying what to install, when ffmpeg is missing.
 */
export function findMediaTools(explicit: { ffmpeg?: string; ytDlp?: string } = {}): { tools: MediaTools; missing: string[] } {
  const ytDlp = explicit.ytDlp ? (isExecutable(explicit.ytDlp) ? explicit.ytDlp : undefined) : onPath('yt-dlp');
  const missing = ytDlp ? [] : [explicit.ytDlp ? `yt-dlp not found or not executable: ${explicit.ytDlp} (YTDLP_PATH)` : 'yt-dlp is not installed (apt-get install yt-dlp)'];
  const also = missing.length ? ` (and ${missing[0]})` : '';
  const ffmpeg = explicit.ffmpeg ?? onPath('ffmpeg');
  if (!ffmpeg || !isExecutable(ffmpeg)) {
    throw notFound(
      explicit.ffmpeg
        ? `ffmpeg not found or not executable: ${explicit.ffmpeg} (FFMPEG_PATH). Install Debian's ffmpeg (apt-get install ffmpeg) or point FFMPEG_PATH at an ffmpeg binary${also}.`
        : `No ffmpeg found. Install Debian's ffmpeg (apt-get install ffmpeg) or set FFMPEG_PATH to an ffmpeg binary${also}.`,
    );
  }
  const beside = join(ffmpeg, '..', 'ffprobe');
  const ffprobe = isExecutable(beside) ? beside : onPath('ffprobe');
  if (!ffprobe) throw notFound(`No ffprobe found beside ${ffmpeg} or on PATH. Install Debian's ffmpeg (apt-get install ffmpeg), which has both${also}.`);
  return { tools: { ffmpeg, ffprobe, ytDlp }, missing };
}

export interface RunOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Output kept (stdout, then stderr for the error message); more is dropped. */
  maxOutputBytes?: number;
  cwd?: string;
}

/**
 * Runs a program without a shell, with the allow-listed environment of `childEnv` (never the
 * worker's variables: secrets stay out; HOME is the job's directory, so yt-dlp reads no user
 * config), killed at the deadline or on abort.
 */
export function runTool(cmd: string, args: string[], o: RunOptions): Promise<{ stdout: string; stderr: string }> {
  const max = o.maxOutputBytes ?? 4 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: o.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnv({ set: { HOME: o.cwd ?? '/tmp', LANG: 'C.UTF-8' } }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => void (stdout.length < max && (stdout += d.toString())));
    child.stderr.on('data', (d: Buffer) => void (stderr.length < max && (stderr += d.toString())));
    let why: WdsError | undefined;
    const kill = (e: WdsError) => {
      why ??= e;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => kill(new WdsError('REQUEST_TIMEOUT', { code: 'SCRAPE_TIMEOUT', retryable: false, message: `Request Timeout: ${cmd.split('/').pop()} did not finish within ${o.timeoutMs} ms` })), Math.max(1, o.timeoutMs));
    const onAbort = () => kill(new WdsError('REQUEST_TIMEOUT', { code: 'SCRAPE_TIMEOUT', retryable: false, message: 'Request Timeout: the media step was cancelled' }));
    o.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (why) return reject(why);
      if (code !== 0) return reject(Object.assign(new Error(`${cmd.split('/').pop()} exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 500)}`), { stderr }));
      resolve({ stdout, stderr });
    });
  });
}
