import { mediaWork, type ScrapeDocument, type ScrapeUrlRequest } from '@wds/contracts';
import { enqueueDirectScrape, failScrapeJob, insertScrapeJob, loadScrapeJob } from '@wds/db';
import { errorFromRecord, WdsError } from '@wds/errors';
import { preferredBrowserNeeds, requiredBrowserNeeds, workflowFetchOf, type ScrapeCacheLookup, type ScrapeDispatch } from '@wds/workflows/scrape';
import { scrapeJob } from '@wds/workflows/job-specs';
import type { ApiDeps } from '../deps';
import { runJob } from './jobs';

/** How long the API waits beyond the request's timeout for the scrape's end (its attempts share the timeout). */
const GRACE_MS = 5_000;
/** A direct scrape whose announcement the API missed (its listener reconnecting) is read from its row this often. */
const POLL_MS = 2_000;

export interface ScrapeRun {
  /** The scrape's id (its job row's). */
  id: string;
  teamId: string;
  /** null: nothing may keep the URL (zero data retention, lockdown). */
  url: string | null;
  options: ScrapeUrlRequest & { cacheLookup?: ScrapeCacheLookup };
}

/** Whether a request goes the direct way: the HTTP engine serves it, and no media step follows (a model step may: see above). */
export function dispatchOf(o: ScrapeUrlRequest, configured: ScrapeDispatch): 'direct' | 'workflow' {
  if (configured !== 'direct') return 'workflow';
  return requiredBrowserNeeds(o).length || preferredBrowserNeeds(o).length || mediaWork(o).length ? 'workflow' : 'direct';
}

/** Runs the scrape job and answers its document, or throws its error (as stored on the job). */
export async function runScrapeJob(deps: ApiDeps, run: ScrapeRun, dispatch: ScrapeDispatch): Promise<ScrapeDocument> {
  const timeoutMs = run.options.timeout;
  const waiting = deps.scrapeDone?.wait(run.id);
  try {
    if (waiting && dispatchOf(run.options, dispatch) === 'direct') {
      await enqueueDirectScrape(deps.db, run);
      return await untilEnded(deps, run.id, waiting.stored, Date.now() + timeoutMs + GRACE_MS);
    }
    await insertScrapeJob(deps.db, run);
    // Registered before the start, so the announcement cannot come first. Whichever comes first
    // answers: the row's end, or the workflow's result.
    const result = runJob(deps, scrapeJob, {
      jobId: run.id,
      args: [{ jobId: run.id, timeoutMs, fetch: workflowFetchOf(dispatch) }],
      timeoutMs,
      graceMs: GRACE_MS,
      // The scrape's row is its own table's (not yet a jobs row): a refused start fails it there.
      fail: (error) => failScrapeJob(deps.db, run.id, error),
    });
    await (waiting ? Promise.race([result, waiting.stored]) : result);
    const ended = await endOf(deps, run.id);
    if (ended) return ended;
    await result;
    return (await endOf(deps, run.id)) ?? noDocument();
  } finally {
    waiting?.cancel();
  }
}

/** The job's document, its stored error thrown, or null while it runs. */
async function endOf(deps: ApiDeps, scrapeId: string): Promise<ScrapeDocument | null> {
  const job = await loadScrapeJob(deps.db, scrapeId);
  if (job?.status === 'failed') throw errorFromRecord(job.error);
  if (job?.status !== 'completed') return null;
  return (job.document as ScrapeDocument | null) ?? noDocument();
}

/** A direct scrape: its announced end, or its row read now and then; past the deadline it is failed as timed out. */
async function untilEnded(deps: ApiDeps, scrapeId: string, announced: Promise<void>, deadline: number): Promise<ScrapeDocument> {
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    let timer: NodeJS.Timeout | undefined;
    const tick = new Promise((r) => (timer = setTimeout(r, Math.min(POLL_MS, left))));
    await Promise.race([announced, tick]);
    clearTimeout(timer);
    const ended = await endOf(deps, scrapeId);
    if (ended) return ended;
  }
  const timedOut = new WdsError('REQUEST_TIMEOUT', { code: 'SCRAPE_TIMEOUT', message: 'Request Timeout: the scrape did not finish within its timeout' });
  // So that no worker starts it any more, and the team's queue no longer counts it.
  await failScrapeJob(deps.db, scrapeId, { kind: timedOut.kind, message: timedOut.message, code: timedOut.code });
  // A worker may have finished it in the meantime: then that answer stands.
  return (await endOf(deps, scrapeId).catch(() => null)) ?? Promise.reject(timedOut);
}

function noDocument(): never {
  throw new WdsError('INTERNAL', { code: 'UNKNOWN_ERROR', message: 'Internal Server Error: the scrape finished without a document' });
}
