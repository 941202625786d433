import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import {
  createBrowserActivities,
  createCrawlActivities,
  createCrawlControlActivities,
  createMapActivities,
  createParseActivities,
  createScrapeActivities,
  createStoreActivities,
  type BrowserAvailability,
} from '@wds/activities';
import { schema, type Db } from '@wds/db';
import { jobsFinished } from '@wds/metrics';
import { eq } from 'drizzle-orm';
import type { BrowserPool } from '@wds/scraper/browser/index';
import type { Logger } from '@wds/log';
import type { FileStore } from '@wds/storage';
import { TaskQueues, type TaskQueue } from '@wds/workflows/contracts';
import type { WorkerOptions } from '@temporalio/worker';
import type { WorkerEnv } from './env';

const require = createRequire(import.meta.url);

/** Process-wide resources some queues need; created in main.ts only for the queues served. */
export interface QueueResources {
  db: Db;
  /** Asks Temporal whether a worker polls wds-browser (fetch queue: engine choice). */
  browserAvailable: BrowserAvailability;
  /** Only when this process serves wds-browser. */
  browser?: { pool: BrowserPool; files: FileStore };
}

/** Per queue: which workflows/activities it serves and how many slots (sized by resource profile). */
export function queueOptions(queue: TaskQueue, env: WorkerEnv, res: QueueResources): Omit<WorkerOptions, 'connection' | 'namespace' | 'taskQueue'> | null {
  const { db } = res;
  const pageDeps = { db, allowPrivateNetwork: env.WDS_ALLOW_PRIVATE_NETWORK, maxBodyBytes: env.WDS_MAX_BODY_BYTES };
  const scrapeActivities = () => createScrapeActivities({ ...pageDeps, browserAvailable: res.browserAvailable });
  switch (queue) {
    case TaskQueues.control:
      return {
        workflowsPath: require.resolve('@wds/workflows'),
        activities: {
          ...createStoreActivities({ db }),
          ...countFinishedJobs(createCrawlControlActivities({ db }), db),
          // For scrapes started with WDS_SCRAPE_FETCH=local, which fetch as local activities here
          // (converting on the transform threads when this process also serves wds-fetch, else inline).
          ...scrapeActivities(),
        },
        maxConcurrentActivityTaskExecutions: 50,
      };
    case TaskQueues.fetch:
      return {
        activities: {
          ...scrapeActivities(),
          ...createCrawlActivities(pageDeps),
          ...createMapActivities(pageDeps),
          ...createParseActivities({ db }),
        },
        maxConcurrentActivityTaskExecutions: env.WDS_FETCH_CONCURRENCY,
      };
    case TaskQueues.browser:
      if (!res.browser) return null;
      return {
        activities: createBrowserActivities({ ...pageDeps, renderer: res.browser.pool, files: res.browser.files }),
        // One activity per pool page: a render never queues inside the worker, so tasks this
        // worker cannot start stay in Temporal for another browser worker.
        maxConcurrentActivityTaskExecutions: browserPages(env),
      };
    default:
      // The LLM queue has no activities yet; a worker asked to serve it says so.
      return null;
  }
}

/**
 * Crawl and batch jobs end in the control activity finishJob: count them there (by kind and final
 * status) without touching the activity itself. A retried finishJob may count twice; rare.
 */
function countFinishedJobs<T extends ReturnType<typeof createCrawlControlActivities>>(acts: T, db: Db): T {
  return {
    ...acts,
    async finishJob(input) {
      const r = await acts.finishJob(input);
      const [row] = await db.select({ kind: schema.crawlJobs.kind }).from(schema.crawlJobs).where(eq(schema.crawlJobs.id, input.jobId)).catch(() => []);
      jobsFinished.inc({ kind: row?.kind ?? 'crawl', status: r.status });
      return r;
    },
  };
}

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
    import('@wds/scraper/browser/index'),
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
