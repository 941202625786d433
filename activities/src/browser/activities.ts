import { Context } from '@temporalio/activity';
import { browserPageInFlight, startScrapeTimer } from '@wds/metrics';
import type { RenderPageInput, RenderPageResult, BrowserActivities } from '@wds/workflows/scrape';
import { asActivity } from '../failures';
import { renderScrapeJob, type BrowserActivityDeps } from './render-page';

/** Heartbeats keep a dead worker's render from holding the scrape until its budget ends. */
const HEARTBEAT_MS = 2_000;

export function createBrowserActivities(deps: BrowserActivityDeps): BrowserActivities {
  return {
    async renderPage(input: RenderPageInput): Promise<RenderPageResult> {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
      beat.unref();
      const done = startScrapeTimer();
      try {
        const r = await browserPageInFlight('scrape', () => asActivity(() => renderScrapeJob(deps, input, ctx.cancellationSignal)));
        done('browser', 'success');
        return r;
      } catch (e) {
        if (!ctx.cancellationSignal.aborted) done('browser', 'error');
        throw e;
      } finally {
        clearInterval(beat);
      }
    },
  };
}
