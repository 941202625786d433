/**
 * The environment of a program a worker starts (Chromium, pdftoppm, tesseract, ffmpeg, yt-dlp,
 * the Temporal CLI): those programs parse hostile input in C/C++, and an exploit gets what the
 * process has. So a child sees the few variables programs themselves read (paths, locale,
 * timezone, plus what its caller adds), never the worker's (DATABASE_URL, signing secrets, API
 * keys, SMTP URL). Every spawn in production code passes `env: childEnv(...)`; the one exception
 * is the launcher starting the API and the worker, which are this program reading its own config.
 */

/** Passed through when set; everything else of the source is dropped. */
const BASE = ['PATH', 'HOME', 'TMPDIR', 'TZ', 'LANG', 'LANGUAGE'] as const;

export interface ChildEnvOptions {
  /** More variable names to pass through when set (e.g. fontconfig's for Chromium, TESSDATA_PREFIX for tesseract). */
  pass?: readonly string[];
  /** Prefixes of variable names to pass through (LC_* always is). */
  passPrefixes?: readonly string[];
  /** Set (or override) these, whatever the source holds. */
  set?: Record<string, string>;
}

/** The allow-listed variables of `source` (default: this process's environment), plus `set`. */
export function childEnv(opts: ChildEnvOptions = {}, source: Record<string, string | undefined> = process.env): Record<string, string> {
  const names = new Set<string>([...BASE, ...(opts.pass ?? [])]);
  const prefixes = ['LC_', ...(opts.passPrefixes ?? [])];
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(source)) {
    if (v !== undefined && (names.has(k) || prefixes.some((p) => k.startsWith(p)))) env[k] = v;
  }
  return { ...env, ...opts.set };
}
