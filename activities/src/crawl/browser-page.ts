import { browserPagesWaiting, claimBrowserPages, loadProfileState } from '@wds/db';
import { browserPageInFlight, startScrapeTimer } from '@wds/metrics';
import type { BrowserPageInput, CrawlBrowserActivities, ProcessBatchResult } from '@wds/workflows/crawl';
import { renderBrowserPage, type BrowserActivityDeps } from '../browser/render-page';
import { asActivity } from '../failures';
import { runFrontierBatch, type PageHandler } from '../frontier/batch-runner';
import { withInlineRetries } from '../frontier/page-retries';
import { pageLeaseMs } from './batch';
import { loadJobOptions, type LoadedJob } from './job-options';
import { crawlDelayHint, deferForBackoff, followsLinks, keepingUrlsPrivate, mayDefer, robotsOf, storeCrawlPage } from './page';
import { createRobotsCache } from './discovery';
import { backoffOf } from '../scrape/pipeline';

/** wds-browser: the browser pages of crawl and batch jobs. */
export function createCrawlBrowserActivities(deps: BrowserActivityDeps): CrawlBrowserActivities {
  const robotsFor = createRobotsCache(deps);
  return { renderCrawlPage: (input) => asActivity(() => renderCrawlPage(deps, robotsFor, input)) };
}

/**
 * One browser page of a job: the frontier batch runner (lease, heartbeats, the cancellation
 * check) over one page handed to the browser engine, rendered with every scrape option as a
 * single scrape renders it. A killed worker's attempt is retried by Temporal, and the retry
 * takes its page back at once (same activity id); a render that fails for good frees its lease,
 * which another page activity then takes over. The result says whether more pages wait, so the
 * workflow keeps the browser window full.
 */
async function renderCrawlPage(deps: BrowserActivityDeps, robotsFor: RobotsCache, { jobId, delayMs }: BrowserPageInput): Promise<ProcessBatchResult> {
  const job = await loadJobOptions(deps.db, jobId);
  const input = { jobId, batchSize: 1, concurrency: 1, delayMs: 0 };
  const r = await browserPageInFlight(job.kind, () => runFrontierBatch(deps.db, input, pageLeaseMs(job), browserPageHandler(deps, robotsFor, job, delayMs), claimBrowserPages));
  if (r.claimed && !r.stopped && (await browserPagesWaiting(deps.db, jobId))) r.moreBrowserPages = true;
  return r;
}

type RobotsCache = ReturnType<typeof createRobotsCache>;

function browserPageHandler(deps: BrowserActivityDeps, robotsFor: RobotsCache, job: LoadedJob, delayMs: number): PageHandler {
  return keepingUrlsPrivate(job, async (u, run) => {
    // The fetch side checked robots.txt before handing the page over; its Crawl-delay holds here too.
    const politeness = crawlDelayHint(await robotsOf(job, u, robotsFor, run.signal));
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
          politeness,
        });
        done(r.rendered ? 'browser' : 'http', 'success');
        // The site answered 429/503 and backs off: the page waits for it in the frontier, not failed.
        const retryAtMs = mayDefer(u) ? backoffOf({ statusCode: r.page.statusCode, finalUrl: String(r.page.document.metadata.url ?? u.url) }) : 0;
        if (retryAtMs) return await deferForBackoff(deps.db, job.id, u, { statusCode: r.page.statusCode, retryAtMs });
        return await storeCrawlPage(deps, job, u, r.page, { run });
      } catch (e) {
        if (!run.signal.aborted) done('browser', 'error');
        throw e;
      }
    });
  });
}
