import { Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { startDirectScrapes, type DirectScrapes, type ScrapeActivityDeps } from '@wds/activities';
import type { Logger } from '@wds/log';
import { scrapeJob } from '@wds/workflows/job-specs';
import type { ScrapeWorkflowInput } from '@wds/workflows/scrape';
import type { scrapeWorkflow } from '@wds/workflows';

/**
 * Fetch workers run directly dispatched scrapes (WDS_SCRAPE_FETCH=direct on the API) beside their
 * wds-fetch activities, with the same number of slots. A page that needs the browser after all is
 * handed to the scrape workflow, started past its fetch step.
 */
export function serveDirectScrapes(o: { deps: ScrapeActivityDeps; databaseUrl: string; concurrency: number; connection: NativeConnection; namespace: string; log: Logger }): DirectScrapes {
  const client = new Client({ connection: o.connection as never, namespace: o.namespace });
  return startDirectScrapes({
    deps: o.deps,
    databaseUrl: o.databaseUrl,
    concurrency: o.concurrency,
    async handOff({ jobId, timeoutMs, deadlineMs, fetched }) {
      const input: ScrapeWorkflowInput = { jobId, timeoutMs, deadlineMs, fetched, fetch: 'queue' };
      try {
        // The scrape's JobSpec names its workflow, queue and id, as for the API's starts.
        await client.workflow.start<typeof scrapeWorkflow>(scrapeJob.workflowType, {
          taskQueue: scrapeJob.taskQueue,
          workflowId: scrapeJob.workflowId(jobId),
          args: [input],
          workflowExecutionTimeout: Math.max(1_000, deadlineMs - Date.now()) + 30_000,
        });
      } catch (e) {
        // A retake of a job whose hand-off went through before its worker died.
        if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
      }
    },
    onError: (jobId, e) => o.log.warn({ err: e, scrapeId: jobId }, 'direct scrape failed'),
  });
}
