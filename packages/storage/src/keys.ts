import type { FileContentType } from './types';

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

const BY_EXTENSION: Record<string, FileContentType> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', pdf: 'application/pdf', mp3: 'audio/mpeg', mp4: 'video/mp4', webm: 'video/webm',
};
const EXTENSION: Record<FileContentType, string> = {
  'image/png': 'png', 'image/jpeg': 'jpg', 'application/pdf': 'pdf', 'audio/mpeg': 'mp3', 'video/mp4': 'mp4', 'video/webm': 'webm',
};

/** Media files (the audio and video formats): their links live an hour (spec), so they are swept sooner. */
export const isMediaKey = (key: string) => /\.(mp3|mp4|webm)$/i.test(key);

/**
 * A key is 1–8 `/`-separated segments of letters, digits, `.`, `_`, `-` (no segment starting
 * with a dot, so no `..` and no hidden files), ending in a known extension. Checked on every
 * read and write: a key can never name a path outside the store.
 */
export function isValidKey(key: string): boolean {
  const parts = key.split('/');
  return parts.length >= 1 && parts.length <= 8 && parts.every((p) => SEGMENT.test(p)) && contentTypeOf(key) !== null;
}

export function invalidKey(key: string): Error {
  return new Error(`invalid file key: ${JSON.stringify(key)}`);
}

export function contentTypeOf(key: string): FileContentType | null {
  const ext = /\.([a-z0-9]+)$/i.exec(key)?.[1]?.toLowerCase();
  return (ext && BY_EXTENSION[ext]) || null;
}

export function extensionFor(contentType: FileContentType): string {
  return EXTENSION[contentType];
}

/** The key of a file produced by a scrape job: `scrapes/<jobId>/<name>.<ext>` (deterministic, so retries overwrite). */
export function scrapeFileKey(jobId: string, name: string, contentType: FileContentType): string {
  return `scrapes/${jobId}/${name}.${extensionFor(contentType)}`;
}
