import { availableParallelism } from 'node:os';
import type { BrowserPool } from '@wds/browser';
import type { FileStore } from '@wds/storage';
import type { WorkerEnv } from './env';

/** Pool size: WDS_BROWSER_PAGES, or two per core (0). */
export function browserPages(env: WorkerEnv): number {
  return env.WDS_BROWSER_PAGES || Math.max(2, availableParallelism() * 2);
}

/**
 * wds-browser activity slots: the pool's pages and half as many again. An activity holds its slot
 * while it claims its page and while it builds and stores the document, when it needs no pool
 * page; with exactly one slot per page, each page sat idle through those steps (a fifth of the
 * time in a crawl of script-rendered pages, bench/README.md). The extra activities wait in the
 * pool's FIFO queue (counted against their timeout, heartbeating) for at most about one render;
 * more would only hold tasks here that another browser worker could start.
 */
export function browserActivitySlots(env: WorkerEnv): number {
  const pages = browserPages(env);
  return pages + Math.ceil(pages / 2);
}

/**
 * The browser side of a wds-browser worker: one BrowserPool for the process (loaded on demand:
 * playwright-core is never imported by workers that do not render), writing into the file store.
 * WDS_HOST_OVERRIDES apply to the browser too: to the pool's own resolution (SSRF/ad proxy) and,
 * as --host-resolver-rules, to Chromium's when no proxy sits in front of it.
 */
export async function createBrowserResources(env: WorkerEnv, hostOverrides: Record<string, string>, files: FileStore): Promise<{ pool: BrowserPool; files: FileStore; stop(): Promise<void> }> {
  const [{ BrowserPool }, { lookup }] = await Promise.all([import('@wds/browser'), import('node:dns/promises')]);
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
  return { pool, files, stop: () => pool.close() };
}
