import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import {
  claimDirectScrape,
  countDirectAttempt,
  failScrapeJob,
  handOffDirectScrape,
  listenOnChannel,
  releaseDirectScrape,
  renewDirectLeases,
  SCRAPE_QUEUE_CHANNEL,
  type ClaimedScrape,
} from '@wds/db';
import { toWdsError, WdsError } from '@wds/errors';
import type { FetchPageResult } from '@wds/workflows/scrape';
import { toApplicationFailure } from '../failures';
import { scrapeJobPage, type ScrapeActivityDeps } from './activities';

/**
 * The fetch worker's side of direct dispatch (@wds/db scrape-queue.ts): single scrapes the API
 * put in Postgres, run here without Temporal, with the guarantees the scrape workflow gives them:
 * - a worker that dies mid-scrape stops renewing its lease; when the lease has passed another
 *   worker takes the job over (every worker sweeps for such jobs), up to MAX_ATTEMPTS takes;
 * - retryable failures are retried here like the workflow's retry policy (same attempts and back-off),
 *   within the request's own timeout; the result, or the failure, is written once to the job's row;
 * - draining (SIGTERM): no new jobs; running ones may finish within the grace time, then they are
 *   given back at once (another worker takes them) instead of waiting for their lease to pass;
 * - a page that turns out to need the browser (script-rendered) is handed to the scrape workflow,
 *   which renders it on wds-browser as it would any scrape.
 */
export interface DirectScrapeOptions {
  deps: ScrapeActivityDeps;
  databaseUrl: string;
  /** Scrapes this worker runs at once (its wds-fetch slots: WDS_FETCH_CONCURRENCY). */
  concurrency: number;
  /** How long a take lasts without renewal: a dead worker's scrape is retried after about this. */
  leaseMs?: number;
  /** How often to look for jobs nobody holds (missed announcements, dead workers' jobs). */
  sweepMs?: number;
  /** Hands a scrape that needs the browser to the scrape workflow (starting it past the fetch). */
  handOff(job: { jobId: string; timeoutMs: number; deadlineMs: number; fetched: FetchPageResult }): Promise<void>;
  /** Failures worth a log line (the job's row has the error); redacted as the activities' failures are. */
  onError?(jobId: string, e: Error): void;
}

/** The scrape workflow's retry policy for its fetch step: 3 attempts, 200 ms back-off doubling. */
export const MAX_ATTEMPTS = 3;
const BACKOFF_MS = 200;
/** What the API waits beyond the request's timeout; a job taken later than that is failed, not run. */
const API_GRACE_MS = 5_000;

export interface DirectScrapes {
  /** Stops taking jobs; running ones finish within `graceMs`, then are given back. */
  drain(graceMs: number): Promise<void>;
  /** Jobs running now. */
  readonly running: number;
}

export function startDirectScrapes(opts: DirectScrapeOptions): DirectScrapes {
  const { deps, concurrency } = opts;
  const leaseMs = opts.leaseMs ?? 10_000;
  const owner = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const running = new Map<string, AbortController>();
  let draining = false;
  let sweeping: Promise<void> | null = null;
  const report = (jobId: string, e: unknown) => opts.onError?.(jobId, toApplicationFailure(e));

  /** Takes a job (the one announced, or any nobody holds) while there is room; runs it. */
  async function take(id?: string): Promise<boolean> {
    if (draining || running.size >= concurrency) return false;
    const job = await claimDirectScrape(deps.db, owner, leaseMs, id).catch((e) => (report(id ?? '-', e), null));
    if (!job) return false;
    const ac = new AbortController();
    running.set(job.id, ac);
    void run(job, ac.signal).finally(() => {
      running.delete(job.id);
      // A slot came free: jobs that waited for one are in the table.
      if (!draining) void sweep();
    });
    return true;
  }

  /** Takes jobs nobody holds until there are none or no room is left. */
  function sweep(): Promise<void> {
    sweeping ??= (async () => {
      try {
        while (await take());
      } finally {
        sweeping = null;
      }
    })();
    return sweeping;
  }

  async function run(job: ClaimedScrape, signal: AbortSignal): Promise<void> {
    const options = job.options as { timeout?: number };
    const timeoutMs = options.timeout ?? 30_000;
    const deadlineMs = job.createdAt.getTime() + timeoutMs;
    const sleep = (ms: number) => new Promise<void>((r) => { const t = setTimeout(r, ms); signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true }); });
    try {
      if (job.attempts > MAX_ATTEMPTS || Date.now() > deadlineMs + API_GRACE_MS) {
        // Its workers died each time, or nobody was there to take it in time: the API has answered 408.
        await failScrapeJob(deps.db, job.id, record(new WdsError('REQUEST_TIMEOUT', { code: 'SCRAPE_TIMEOUT', message: 'Request Timeout: the scrape did not finish within its timeout' })));
        return;
      }
      for (let attempt = job.attempts; ; attempt++) {
        try {
          // The first attempt has the options from the claim; a retry reads the row (it may have completed meanwhile).
          const r = await scrapeJobPage(deps, { jobId: job.id, deadlineMs, options: attempt === job.attempts ? job.options : undefined, signal, sleep });
          if (r.needsBrowser || r.needsMedia || r.needsLlm) {
            await opts.handOff({ jobId: job.id, timeoutMs, deadlineMs, fetched: r });
            await handOffDirectScrape(deps.db, job.id, owner);
          }
          return;
        } catch (e) {
          if (signal.aborted) throw e;
          const err = toWdsError(e);
          const backoff = BACKOFF_MS * 2 ** (attempt - 1);
          if (!err.retryable || attempt >= MAX_ATTEMPTS || Date.now() + backoff >= deadlineMs) {
            if (err.kind === 'INTERNAL') report(job.id, e);
            await failScrapeJob(deps.db, job.id, record(err));
            return;
          }
          await sleep(backoff);
          await countDirectAttempt(deps.db, job.id, owner);
        }
      }
    } catch (e) {
      // Drained past the grace time: given back for another worker to take at once.
      if (signal.aborted) await releaseDirectScrape(deps.db, job.id, owner).catch((err) => report(job.id, err));
      else report(job.id, e);
    }
  }

  const listener = listenOnChannel(opts.databaseUrl, SCRAPE_QUEUE_CHANNEL, (id) => void take(id), () => void sweep());
  const sweeper = setInterval(() => void sweep(), opts.sweepMs ?? 1_000);
  // Leases are renewed well before they pass; a short scrape never renews (the first renewal is a third in).
  const renewer = setInterval(() => void renewDirectLeases(deps.db, owner, [...running.keys()], leaseMs).catch((e) => report('-', e)), Math.floor(leaseMs / 3));

  return {
    get running() {
      return running.size;
    },
    async drain(graceMs) {
      draining = true;
      clearInterval(sweeper);
      await listener.close();
      const until = Date.now() + graceMs;
      while (running.size && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      for (const ac of running.values()) ac.abort();
      while (running.size) await new Promise((r) => setTimeout(r, 20));
      clearInterval(renewer);
    },
  };
}

/** The failure as stored on the job (the scrape workflow's describeFailure of the same error). */
function record(err: WdsError) {
  return { kind: err.kind, message: err.message, code: err.code, details: err.details };
}
