import { Context } from '@temporalio/activity';
import type { RenderPageInput, RenderPageResult } from '@wds/workflows/contracts';
import { asActivity } from '../failures';
import type { BrowserActivities } from '../types';
import { renderScrapeJob, type BrowserActivityDeps } from './render-page';

/** Heartbeats keep a dead worker's render from holding the scrape until its budget ends. */
const HEARTBEAT_MS = 2_000;

export function createBrowserActivities(deps: BrowserActivityDeps): BrowserActivities {
  return {
    async renderPage(input: RenderPageInput): Promise<RenderPageResult> {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
      beat.unref();
      try {
        return await asActivity(() => renderScrapeJob(deps, input, ctx.cancellationSignal));
      } finally {
        clearInterval(beat);
      }
    },
  };
}
