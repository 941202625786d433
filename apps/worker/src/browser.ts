import { availableParallelism } from 'node:os';
import type { BrowserPool } from '@wds/browser';
import type { Logger } from '@wds/log';
import type { FileStore } from '@wds/storage';
import type { WorkerEnv } from './env';

/** Pool size: WDS_BROWSER_PAGES, or two per core (0). */
export function browserPages(env: WorkerEnv): number {
  return env.WDS_BROWSER_PAGES || Math.max(2, availableParallelism() * 2);
}

/**
 * The browser side of a wds-browser worker: one BrowserPool for the process (loaded on demand:
 * playwright-core is never imported by workers that do not render) and the file store.
 * WDS_HOST_OVERRIDES apply to the browser too: to the pool's own resolution (SSRF/ad proxy) and,
 * as --host-resolver-rules, to Chromium's when no proxy sits in front of it.
 */
export async function createBrowserResources(env: WorkerEnv, hostOverrides: Record<string, string>, log: Logger): Promise<{ pool: BrowserPool; files: FileStore; stop(): Promise<void> }> {
  const [{ BrowserPool }, { LocalFileStore, lazySigningSecret }, { lookup }, { join, resolve }] = await Promise.all([
    import('@wds/browser'),
    import('@wds/storage'),
    import('node:dns/promises'),
    import('node:path'),
  ]);
  const overrides = Object.entries(hostOverrides);
  const match = (host: string) => overrides.find(([name]) => name === host.toLowerCase() || (name.startsWith('*.') && host.toLowerCase().endsWith(name.slice(1))))?.[1];
  const rules = overrides.map(([name, ip]) => `MAP ${name} ${ip.includes(':') ? `[${ip}]` : ip}`).join(',');
  const pool = new BrowserPool({
    executablePath: env.CHROMIUM_PATH,
    maxConcurrentPages: browserPages(env),
    recycleAfterPages: env.WDS_BROWSER_RECYCLE_AFTER,
    launchArgs: [...(rules ? [`--host-resolver-rules=${rules}`] : []), ...env.WDS_BROWSER_LAUNCH_ARGS],
    // Chromium gets its own minimal environment (the pool's default), never this worker's secrets.
    sandbox: env.WDS_BROWSER_SANDBOX,
    resolve: overrides.length
      ? async (host) => {
          const ip = match(host);
          return ip ? [ip] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
        }
      : undefined,
  });
  // Fail at start, not on the first render, when there is no Chromium.
  pool.executablePath();
  const dataDir = resolve(env.WDS_DATA_DIR);
  const files = new LocalFileStore({
    dir: env.WDS_FILES_DIR ? resolve(env.WDS_FILES_DIR) : join(dataDir, 'files'),
    publicUrl: env.WDS_PUBLIC_URL ?? 'http://localhost:3002',
    secret: lazySigningSecret(env.WDS_FILE_SIGNING_SECRET, dataDir),
    defaultTtlSeconds: env.WDS_FILE_URL_TTL_SECONDS,
  });
  // Links live WDS_FILE_URL_TTL_SECONDS; their files go an hour after that.
  const keepMs = (env.WDS_FILE_URL_TTL_SECONDS + 3600) * 1000;
  const sweep = () => void files.sweep(keepMs).catch((e) => log.warn({ err: e }, 'file sweep failed'));
  const sweeper = setInterval(sweep, Math.min(3600_000, keepMs));
  sweeper.unref();
  sweep();
  return {
    pool,
    files,
    async stop() {
      clearInterval(sweeper);
      await pool.close();
    },
  };
}
