import { MEDIA_URL_TTL_SECONDS } from '@wds/activities';
import { isMediaKey, type FileStore } from '@wds/storage';
import type { Logger } from '@wds/log';
import type { WorkerEnv } from './env';

/**
 * The file store of workers that produce files (wds-browser: screenshots, action PDFs; wds-media:
 * audio and video): the directory or bucket the API serves (WDS_FILES_DIR or WDS_FILES_S3_BUCKET), signing with
 * the secret the API checks, and the sweep that deletes files an hour after their links expire.
 */
export async function createFileResources(env: WorkerEnv, log: Logger): Promise<{ files: FileStore; stop(): void }> {
  const { fileStoreFromEnv } = await import('@wds/storage');
  const { store: files, kind } = fileStoreFromEnv(env);
  log.info({ store: kind }, 'file store');
  const keepMs = (env.WDS_FILE_URL_TTL_SECONDS + 3600) * 1000;
  // Media links live an hour (spec: audio, video), so their files go an hour after that.
  const keepMediaMs = (Math.min(env.WDS_FILE_URL_TTL_SECONDS, MEDIA_URL_TTL_SECONDS) + 3600) * 1000;
  const sweep = () => {
    void files.sweep(keepMs).catch((e) => log.warn({ err: e }, 'file sweep failed'));
    void files.sweep(keepMediaMs, isMediaKey).catch((e) => log.warn({ err: e }, 'file sweep failed'));
  };
  const sweeper = setInterval(sweep, Math.min(3600_000, keepMediaMs));
  sweeper.unref();
  sweep();
  return { files, stop: () => clearInterval(sweeper) };
}
