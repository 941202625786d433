import { browserPagesWaiting, claimBrowserPages, loadProfileState } from '@wds/db';
import { browserPageInFlight, startScrapeTimer } from '@wds/metrics';
import type { BrowserPageInput, CrawlBrowserActivities, ProcessBatchResult } from '@wds/workflows/crawl';
import { renderBrowserPage, type BrowserActivityDeps } from '../browser/render-page';
import { asActivity } from '../failures';
import { runFrontierBatch, type PageHandler } from '../frontier/batch-runner';
import { withInlineRetries } from '../frontier/page-retries';
import { pageLeaseMs } from './batch';
import { loadJobOptions, type LoadedJob } from './job-options';
import { followsLinks, keepingUrlsPrivate, storeCrawlPage } from './page';

/** wds-browser: the browser pages of crawl and batch jobs. */
export function createCrawlBrowserActivities(deps: BrowserActivityDeps): CrawlBrowserActivities {
  return { renderCrawlPage: (input) => asActivity(() => renderCrawlPage(deps, input)) };
}

/**
 * One browser page of a job: the frontier batch runner (lease, heartbeats, the cancellation
 * check) over one page handed to the browser engine, rendered with every scrape option as a
 * single scrape renders it. A killed worker's attempt is retried by Temporal, and the retry
 * takes its page back at once (same activity id); a render that fails for good frees its lease,
 * which another page activity then takes over. The result says whether more pages wait, so the
 * workflow keeps the browser window full.
 */
async function renderCrawlPage(deps: BrowserActivityDeps, { jobId, delayMs }: BrowserPageInput): Promise<ProcessBatchResult> {
  const job = await loadJobOptions(deps.db, jobId);
  const input = { jobId, batchSize: 1, concurrency: 1, delayMs: 0 };
  const r = await browserPageInFlight(job.kind, () => runFrontierBatch(deps.db, input, pageLeaseMs(job), browserPageHandler(deps, job, delayMs), claimBrowserPages));
  if (r.claimed && !r.stopped && (await browserPagesWaiting(deps.db, jobId))) r.moreBrowserPages = true;
  return r;
}

function browserPageHandler(deps: BrowserActivityDeps, job: LoadedJob, delayMs: number): PageHandler {
  return keepingUrlsPrivate(job, async (u, run) => {
    // Politeness: the job's delay holds between its browser pages as between its fetches.
    if (delayMs > 0) await run.sleep(delayMs).catch(() => {});
    // A profile is read-only inside a crawl: many pages render at once, and one saving session
    // per profile is the rule (a single scrape saves it).
    const storageState = job.scrape.profile ? ((await loadProfileState(deps.db, job.teamId, job.scrape.profile.name)) ?? undefined) : undefined;
    return withInlineRetries(deps.db, job.id, u, run, async () => {
      const done = startScrapeTimer();
      try {
        const r = await renderBrowserPage(deps, {
          url: u.url,
          options: job.scrape,
          scrapeId: u.pageId,
          deadlineMs: Date.now() + job.scrape.timeout,
          signal: run.signal,
          collectLinks: followsLinks(job, u),
          storageState,
        });
        done(r.rendered ? 'browser' : 'http', 'success');
        return await storeCrawlPage(deps, job, u, r.page, { run });
      } catch (e) {
        if (!run.signal.aborted) done('browser', 'error');
        throw e;
      }
    });
  });
}
