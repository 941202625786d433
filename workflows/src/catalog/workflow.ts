import { executeChild, proxyActivities } from '@temporalio/workflow';
import { TaskQueues } from '../common';
import { describeFailure } from '../failure';
import { scrapeJob } from '../scrape/spec';
import type { scrapeWorkflow } from '../scrape/workflow';
import type { CatalogCallPlan, CatalogControlActivities, CatalogFetchActivities, CatalogWorkflowInput, CatalogWorkflowResult } from './contracts';

/**
 * A catalog-mode request: reserve every call's credits (or refuse: nothing runs), run the calls
 * at once — HTTP providers and map/search/find-tools as activities on wds-fetch, the built-in
 * scrape as a child scrape workflow — then bill the calls that succeeded and store the answer
 * that the API returns and every replay of the x-request-id repeats. The workflow id is derived
 * from the team and the x-request-id (workflowIds.catalog), so one request id runs once at a time.
 * A call that fails is that call's error in the answer, not the request's; only a failure of the
 * bookkeeping itself leaves the request unresolved.
 */
export async function catalogWorkflow(input: CatalogWorkflowInput): Promise<CatalogWorkflowResult> {
  const control = proxyActivities<CatalogControlActivities>({
    taskQueue: TaskQueues.control,
    startToCloseTimeout: '30s',
    retry: { initialInterval: '200ms', maximumInterval: '5s', maximumAttempts: 10 },
  });
  const { runCatalogCall } = proxyActivities<CatalogFetchActivities>({
    taskQueue: TaskQueues.fetch,
    // The call's own budget, plus room to store its result; a killed worker's call is retried (same idempotency key).
    startToCloseTimeout: input.timeoutMs + 10_000,
    heartbeatTimeout: '10s',
    retry: { initialInterval: '500ms', maximumAttempts: 3 },
  });
  const deadlineMs = Date.now() + input.timeoutMs;

  const begun = await control.beginCatalog({ id: input.id });
  if (begun.state === 'refused') return { outcome: 'insufficient_credits', message: begun.message };
  if (begun.state === 'gone') return { outcome: 'not_started' };
  try {
    await Promise.all(begun.calls.map(runCall));
    await control.finishCatalog({ id: input.id });
    return { outcome: 'completed' };
  } catch (err) {
    await control.abandonCatalog({ id: input.id });
    throw err;
  }

  async function runCall(call: CatalogCallPlan): Promise<void> {
    const ref = { id: input.id, index: call.index, deadlineMs };
    if (call.runs === 'fetch') return runCatalogCall(ref);
    const prepared = await control.prepareCatalogScrape(ref);
    if (!prepared) return;
    let error: ReturnType<typeof describeFailure> | undefined;
    try {
      await executeChild<typeof scrapeWorkflow>(scrapeJob.workflowType, {
        workflowId: scrapeJob.workflowId(prepared.jobId),
        taskQueue: scrapeJob.taskQueue,
        args: [{ jobId: prepared.jobId, timeoutMs: Math.max(deadlineMs - Date.now(), 1_000), fetch: input.scrapeFetch }],
      });
    } catch (err) {
      // The child failed (its failure chain: child → activity → application failure): the call's error.
      error = describeFailure(innermost(err));
    }
    await control.collectCatalogScrape({ id: input.id, index: call.index, jobId: prepared.jobId, ...(error ? { error } : {}) });
  }
}

/** The cause chain's last-but-one link, which describeFailure reads the cause of. */
function innermost(err: unknown): unknown {
  let e = err as { cause?: unknown };
  while (e?.cause && (e.cause as { cause?: unknown }).cause) e = e.cause as { cause?: unknown };
  return e;
}
