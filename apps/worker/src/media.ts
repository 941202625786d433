import type { Logger } from '@wds/log';
import type { GuardedProxy, MediaTools } from '@wds/media';
import type { WorkerEnv } from './env';

/**
 * The media side of a wds-media worker: the tools (ffmpeg and ffprobe required, yt-dlp optional,
 * each missing one said in one line) and the guarded proxy yt-dlp goes through, started on first
 * use and shared by the process's media steps.
 */
export async function createMediaResources(env: WorkerEnv, log: Logger): Promise<{ tools: MediaTools; proxy: () => Promise<GuardedProxy>; stop(): Promise<void> }> {
  const [{ findMediaTools, startGuardedProxy }, { processResolver }] = await Promise.all([import('@wds/media'), import('@wds/fetch')]);
  const { tools, missing } = findMediaTools({ ffmpeg: env.FFMPEG_PATH, ytDlp: env.YTDLP_PATH });
  for (const m of missing) log.warn({ queue: 'wds-media' }, `wds-media without yt-dlp: ${m}; pages that do not name their media in their HTML get audio/video null with a warning`);
  let proxy: Promise<GuardedProxy> | undefined;
  return {
    tools,
    proxy: () => (proxy ??= startGuardedProxy({ allowPrivateNetwork: env.WDS_ALLOW_PRIVATE_NETWORK, resolve: processResolver() })),
    async stop() {
      await (await proxy?.catch(() => undefined))?.close();
    },
  };
}
