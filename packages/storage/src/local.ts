import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import { contentTypeOf, invalidKey, isValidKey } from './keys';
import { signFileUrl } from './signing';
import type { FileBody, FileStore, StoredFile } from './types';

export interface LocalFileStoreOptions {
  /** Root directory (WDS_FILES_DIR, default `<WDS_DATA_DIR>/files`). */
  dir: string;
  /** Base URL of the API that serves `routePrefix` from this same directory. */
  publicUrl: string;
  /** The signing secret, or a function resolving it on first use. */
  secret: string | (() => string);
  /** Lifetime of links from signedUrl() without an explicit ttl. */
  defaultTtlSeconds: number;
  routePrefix?: string;
}

export const FILES_ROUTE = '/v2/files';

/**
 * Files in a local directory, served by the API's GET /v2/files/<key>. Writer (worker) and
 * reader (API) must see the same directory: true on one machine (embedded setup); a fleet needs
 * a shared volume mounted at the same path, or the S3-compatible store (s3.ts).
 */
export class LocalFileStore implements FileStore {
  private readonly routePrefix: string;

  constructor(private readonly opts: LocalFileStoreOptions) {
    this.routePrefix = opts.routePrefix ?? FILES_ROUTE;
  }

  private path(key: string): string {
    if (!isValidKey(key)) throw invalidKey(key);
    return join(this.opts.dir, ...key.split('/'));
  }

  secret(): string {
    return typeof this.opts.secret === 'function' ? this.opts.secret() : this.opts.secret;
  }

  put(key: string, bytes: Buffer): Promise<StoredFile> {
    return this.place(key, (tmp) => writeFile(tmp, bytes));
  }

  /** A copy, not a rename: the source may be on another filesystem (a temp directory). */
  putFile(key: string, source: string): Promise<StoredFile> {
    return this.place(key, (tmp) => copyFile(source, tmp));
  }

  /** Readers never see a half-written file: written aside, then renamed into place. */
  private async place(key: string, write: (tmp: string) => Promise<void>): Promise<StoredFile> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
    await write(tmp);
    await rename(tmp, path);
    return { key, contentType: contentTypeOf(key)!, size: (await stat(path)).size };
  }

  async open(key: string): Promise<FileBody | null> {
    if (!isValidKey(key)) return null;
    const path = this.path(key);
    try {
      const s = await stat(path);
      if (!s.isFile()) return null;
      return { contentType: contentTypeOf(key)!, size: s.size, stream: createReadStream(path) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async signedUrl(key: string, ttlSeconds = this.opts.defaultTtlSeconds): Promise<string> {
    if (!isValidKey(key)) throw invalidKey(key);
    return signFileUrl({ publicUrl: this.opts.publicUrl, routePrefix: this.routePrefix, secret: this.secret(), key, ttlSeconds });
  }

  async sweep(olderThanMs: number, only?: (key: string) => boolean): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    const walk = async (dir: string, isRoot: boolean): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw e;
      }
      for (const ent of entries) {
        const p = join(dir, ent.name);
        if (ent.isDirectory()) await walk(p, false);
        else if (ent.isFile()) {
          const s = await stat(p).catch(() => null);
          if (s && s.mtimeMs < cutoff && (!only || only(relative(this.opts.dir, p).split(sep).join('/')))) {
            await unlink(p).catch(() => {});
            removed++;
          }
        }
      }
      // Empty job directories go too (rmdir refuses non-empty ones).
      if (!isRoot) await rmdir(dir).catch(() => {});
    };
    await walk(this.opts.dir, true);
    return removed;
  }
}
