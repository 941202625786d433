import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { contentTypeOf, invalidKey, isValidKey } from './keys';
import { FILES_ROUTE } from './local';
import { signFileUrl } from './signing';
import type { FileBody, FileStore, StoredFile } from './types';

/** S3's own cap on a presigned URL's lifetime (SigV4: 7 days). */
export const PRESIGNED_MAX_SECONDS = 7 * 86_400;

export interface S3FileStoreOptions {
  bucket: string;
  /** An S3-compatible server's address (unset: AWS). */
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
  /** Prefix of every object key ('' or ending in `/`); sweeps list only under it. */
  prefix: string;
  /** Explicit credentials (tests); unset: the SDK's default chain (env, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Base URL of the API that serves `/v2/files/<key>` from this bucket (API-signed links). */
  publicUrl: string;
  secret: string | (() => string);
  defaultTtlSeconds: number;
  /** Presigned GETs of the bucket instead of API-signed links (see WDS_FILES_S3_PRESIGNED). */
  presigned: boolean;
}

const notFound = (e: unknown) => e instanceof S3ServiceException && (e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404);

/**
 * Files in an S3-compatible bucket: every API replica and worker reads and writes the same objects, so a
 * fleet needs no shared disk. A PUT is atomic on S3 (readers see the old object or the new one, never part),
 * which is what the local store's write-aside-and-rename gives. Links are the API's signed links by default
 * (same shape, expiry and 403/410 answers as the local store), the API streaming the object; presigned GETs
 * when configured.
 */
export class S3FileStore implements FileStore {
  readonly client: S3Client;

  constructor(private readonly opts: S3FileStoreOptions) {
    this.client = new S3Client({
      region: opts.region,
      endpoint: opts.endpoint,
      forcePathStyle: opts.forcePathStyle,
      credentials: opts.credentials,
    });
  }

  private objectKey(key: string): string {
    if (!isValidKey(key)) throw invalidKey(key);
    return this.opts.prefix + key;
  }

  private secret(): string {
    return typeof this.opts.secret === 'function' ? this.opts.secret() : this.opts.secret;
  }

  async put(key: string, bytes: Buffer): Promise<StoredFile> {
    const contentType = contentTypeOf(key)!;
    await this.client.send(new PutObjectCommand({ Bucket: this.opts.bucket, Key: this.objectKey(key), Body: bytes, ContentType: contentType, ContentLength: bytes.length }));
    return { key, contentType, size: bytes.length };
  }

  /** Streamed from the file (media can be large); the length is given so the SDK needs no buffering. */
  async putFile(key: string, source: string): Promise<StoredFile> {
    const objectKey = this.objectKey(key);
    const contentType = contentTypeOf(key)!;
    const { size } = await stat(source);
    await this.client.send(new PutObjectCommand({ Bucket: this.opts.bucket, Key: objectKey, Body: createReadStream(source), ContentType: contentType, ContentLength: size }));
    return { key, contentType, size };
  }

  async open(key: string): Promise<FileBody | null> {
    if (!isValidKey(key)) return null;
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.opts.bucket, Key: this.opts.prefix + key }));
      return { contentType: contentTypeOf(key)!, size: Number(r.ContentLength ?? 0), stream: r.Body as Readable };
    } catch (e) {
      if (notFound(e)) return null;
      throw e;
    }
  }

  async signedUrl(key: string, ttlSeconds = this.opts.defaultTtlSeconds): Promise<string> {
    const objectKey = this.objectKey(key);
    if (this.opts.presigned) {
      return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.opts.bucket, Key: objectKey }), { expiresIn: Math.min(ttlSeconds, PRESIGNED_MAX_SECONDS) });
    }
    return signFileUrl({ publicUrl: this.opts.publicUrl, routePrefix: FILES_ROUTE, secret: this.secret(), key, ttlSeconds });
  }

  /** Age is the object's LastModified (its last PUT), as the local store's is the file's mtime. */
  async sweep(olderThanMs: number, only?: (key: string) => boolean): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.opts.bucket, Prefix: this.opts.prefix || undefined, ContinuationToken: token }));
      const doomed = (page.Contents ?? [])
        .filter((o) => o.Key && o.LastModified && o.LastModified.getTime() < cutoff)
        .map((o) => o.Key!)
        .filter((k) => isValidKey(k.slice(this.opts.prefix.length)) && (!only || only(k.slice(this.opts.prefix.length))));
      if (doomed.length) {
        // A page holds at most 1,000 keys, DeleteObjects' own limit.
        const r = await this.client.send(new DeleteObjectsCommand({ Bucket: this.opts.bucket, Delete: { Objects: doomed.map((Key) => ({ Key })), Quiet: true } }));
        if (r.Errors?.length) throw new Error(`file sweep: ${r.Errors.length} objects not deleted (first: ${r.Errors[0]!.Key}: ${r.Errors[0]!.Code})`);
        removed += doomed.length;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return removed;
  }

  close(): void {
    this.client.destroy();
  }
}
