import { Context } from '@temporalio/activity';
import { mediaWork, type ScrapeDocument, type ScrapeOptions } from '@wds/contracts';
import { loadScrapeJob } from '@wds/db';
import { WdsError } from '@wds/errors';
import { creditsUsed } from '@wds/metrics';
import { planEngine, type FetchPageInput, type FetchPageResult, type ScrapeActivities, type ScrapeCacheLookup } from '@wds/workflows/scrape';
import type { BrowserAvailability, QueueAvailability } from '../browser/availability';
import { clientRenderedPage } from '../browser/escalation';
import { asActivity } from '../failures';
import { finishScrapePage } from './finish';
import { hideUrlFromLogs } from '../log-privacy';
import { scrapeOrEscalate, type PageDeps } from './pipeline';

export interface ScrapeActivityDeps extends PageDeps {
  /** Whether a worker serves wds-browser; absent = never (the HTTP engine answers everything it can). */
  browserAvailable?: BrowserAvailability;
  /** Whether a worker serves wds-media (the audio and video formats); absent = never. */
  mediaAvailable?: QueueAvailability;
}

const HEARTBEAT_MS = 1_000;

export function createScrapeActivities(deps: ScrapeActivityDeps): ScrapeActivities {
  return {
    async scrapePage({ jobId, engine, deadlineMs }: FetchPageInput): Promise<FetchPageResult> {
      // Heartbeats let Temporal notice a dead worker within the workflow's heartbeatTimeout and
      // retry elsewhere, instead of after startToCloseTimeout, which is the request's whole budget.
      // The first beat comes after a second: short scrapes (most) cost no extra call.
      const ctx = Context.current();
      // Local activities cannot heartbeat: their liveness is the workflow task's.
      const beat = ctx.info.isLocal ? undefined : setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
      return asActivity(() => scrapeJobPage(deps, { jobId, engine, deadlineMs, signal: ctx.cancellationSignal, sleep: (ms) => ctx.sleep(ms) })).finally(() => clearInterval(beat));
    },
  };
}

export interface ScrapeJobPageInput extends FetchPageInput {
  /** The job's options when the caller has just read them (a direct scrape's claim): not read again. */
  options?: unknown;
  signal?: AbortSignal;
  /** A sleep the caller can cut short (waitFor). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The page step of a single scrape, whoever runs it (the scrapePage activity, or a fetch worker
 * that took the job from Postgres: direct.ts): loads the job's options, decides the engine,
 * fetches over HTTP and completes the job (or stores the draft for the model step), or answers
 * `needsBrowser` without completing it. Idempotent: a job already completed is not redone.
 */
export async function scrapeJobPage(deps: ScrapeActivityDeps, { jobId, engine, deadlineMs, options, signal, sleep }: ScrapeJobPageInput): Promise<FetchPageResult> {
  let shown = () => {};
  try {
    let jobOptions = options;
    if (jobOptions === undefined) {
      const job = await loadScrapeJob(deps.db, jobId);
      if (!job) throw new WdsError('NOT_FOUND', { message: `Scrape job ${jobId} not found` });
      if (job.status === 'completed') {
        // A retry after the write succeeded but the completion was lost: nothing to redo.
        return { jobId, statusCode: (job.document as ScrapeDocument).metadata.statusCode };
      }
      jobOptions = job.options;
    }
    // cacheLookup: the API found a cached page that needs converting here (a PDF).
    const stored = jobOptions as ScrapeOptions & { url: string; cacheLookup?: ScrapeCacheLookup };
    shown = hideUrlFromLogs(stored);
    // A fallback after a render, or a direct scrape, gets what is left of the request's budget.
    const o = deadlineMs ? { ...stored, timeout: Math.max(1, deadlineMs - Date.now()) } : stored;

    if (mediaWork(o).length && !(await deps.mediaAvailable?.())) {
      throw new WdsError('SERVICE_UNAVAILABLE', {
        code: 'MEDIA_UNAVAILABLE',
        retryable: false,
        message: `Service Unavailable: the ${mediaWork(o).join(' and ')} format${mediaWork(o).length > 1 ? 's need' : ' needs'} a worker serving the wds-media queue (with ffmpeg), and none does. Start a worker with WDS_WORKER_QUEUES including wds-media.`,
      });
    }
    let escalate = false;
    if (engine !== 'http' && !o.cacheLookup) {
      const plan = planEngine(o, (await deps.browserAvailable?.()) ?? false);
      if (plan.engine === 'unavailable') {
        throw new WdsError('SERVICE_UNAVAILABLE', {
          code: 'BROWSER_UNAVAILABLE',
          retryable: false,
          message: `Service Unavailable: this request needs the browser engine (${plan.reasons.join(', ')}), and no worker serves the wds-browser queue. Start a worker with WDS_WORKER_QUEUES including wds-browser.`,
        });
      }
      if (plan.engine === 'browser') return { jobId, statusCode: 0, needsBrowser: { required: plan.required, reasons: plan.reasons } };
      escalate = plan.escalateIfClientRendered;
    }

    const page = await scrapeOrEscalate(
      deps,
      { url: o.url, options: o, scrapeId: jobId, signal, sleep, useCache: o.cacheLookup, onBackoff: 'retry' },
      escalate ? clientRenderedPage : undefined,
    );
    if ('needsBrowser' in page) return { jobId, statusCode: page.statusCode, needsBrowser: { required: false, reasons: ['clientRendered'] } };
    // Spec: lockdown is billed 5 credits on a hit (and lockdown only ever answers from the cache).
    if (o.lockdown && page.document.metadata.cacheState === 'hit') {
      page.creditsUsed = 5;
      page.document.metadata.creditsUsed = 5;
    }
    const finished = await finishScrapePage(deps.db, jobId, o, page.document, page.creditsUsed, deps.llmAvailable, page.fetched);
    creditsUsed.inc({ kind: 'scrape' }, page.creditsUsed);
    return { jobId, statusCode: page.statusCode, ...finished };
  } finally {
    shown();
  }
}
