import { failStrandedJob } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { CrawlPlan } from '@wds/workflows/crawl';
import type { ApiDeps } from '../deps';

/**
 * Starts the workflow of a crawl or batch job whose rows are committed. When Temporal refuses or
 * does not answer, nothing will ever run the job: it is failed at once (with its idempotency key
 * released, so a retry starts afresh) and the request answers 503. A start that got through
 * despite the error finds its job failed and ends without fetching; it is also cancelled here,
 * best effort. (If the API dies before this runs, the workers' stranded-job sweeper fails the job.)
 */
export async function startJobOrFail(deps: ApiDeps, input: { jobId: string; kind: 'crawl' | 'batch'; plan: CrawlPlan }): Promise<void> {
  try {
    await deps.starters.startCrawl(input);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    await failStrandedJob(deps.db, input.jobId, `The job could not be started: ${reason}`);
    void deps.starters.cancelCrawl({ jobId: input.jobId, kind: input.kind }).catch(() => {});
    const what = input.kind === 'crawl' ? 'crawl' : 'batch scrape';
    throw new WdsError('SERVICE_UNAVAILABLE', {
      message: `Service Unavailable: the ${what} could not be started (the workflow service did not accept it); nothing will run. Retry later.`,
      cause: e,
    });
  }
}
