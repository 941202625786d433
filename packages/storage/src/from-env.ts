import { join, resolve } from 'node:path';
import { LocalFileStore } from './local';
import { S3FileStore } from './s3';
import { lazySigningSecret } from './secret';
import type { FileStore } from './types';

/** The file settings of packages/config's common env that every process which stores or serves files reads. */
export interface FileStoreEnv {
  WDS_DATA_DIR: string;
  WDS_PUBLIC_URL?: string;
  WDS_FILES_DIR?: string;
  WDS_FILE_SIGNING_SECRET?: string;
  WDS_FILE_URL_TTL_SECONDS: number;
  WDS_FILES_S3_BUCKET?: string;
  WDS_FILES_S3_ENDPOINT?: string;
  WDS_FILES_S3_REGION: string;
  WDS_FILES_S3_FORCE_PATH_STYLE: boolean;
  WDS_FILES_S3_PREFIX: string;
  WDS_FILES_S3_PRESIGNED: boolean;
}

/**
 * The API's and the workers' one way to build their store, so both always agree: the bucket when
 * `WDS_FILES_S3_BUCKET` is set, else the local directory (the embedded default).
 */
export function fileStoreFromEnv(env: FileStoreEnv): { store: FileStore; secret: () => string; kind: 'local' | 's3' } {
  const dataDir = resolve(env.WDS_DATA_DIR);
  const secret = lazySigningSecret(env.WDS_FILE_SIGNING_SECRET, dataDir);
  const common = { publicUrl: env.WDS_PUBLIC_URL ?? 'http://localhost:3002', secret, defaultTtlSeconds: env.WDS_FILE_URL_TTL_SECONDS };
  if (env.WDS_FILES_S3_BUCKET) {
    const store = new S3FileStore({
      ...common,
      bucket: env.WDS_FILES_S3_BUCKET,
      endpoint: env.WDS_FILES_S3_ENDPOINT,
      region: env.WDS_FILES_S3_REGION,
      forcePathStyle: env.WDS_FILES_S3_FORCE_PATH_STYLE,
      prefix: env.WDS_FILES_S3_PREFIX && !env.WDS_FILES_S3_PREFIX.endsWith('/') ? `${env.WDS_FILES_S3_PREFIX}/` : env.WDS_FILES_S3_PREFIX,
      presigned: env.WDS_FILES_S3_PRESIGNED,
    });
    return { store, secret, kind: 's3' };
  }
  const store = new LocalFileStore({ ...common, dir: env.WDS_FILES_DIR ? resolve(env.WDS_FILES_DIR) : join(dataDir, 'files') });
  return { store, secret, kind: 'local' };
}
