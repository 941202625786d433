import type { Workflow } from '@temporalio/client';
import { endJob } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { FailureRecord } from '@wds/workflows/common';
import type { WorkflowJobSpec } from '@wds/workflows/jobs';
import type { ApiDeps } from '../deps';

/**
 * The job service: how the API starts, awaits and cancels a job of any kind whose row (and its
 * kind's extension) is committed. One rule for refusals: when Temporal refuses the start or does
 * not answer, nothing will ever run the job, so it is failed at once (its idempotency key released:
 * a retry starts afresh) and the request answers 503 saying nothing will run; a start that got
 * through despite the error finds its job ended and does nothing, and is also cancelled here, best
 * effort. (If the API dies before this runs, the workers' stranded-job sweeper fails the job.)
 */

export interface JobStart<W extends Workflow> {
  jobId: string;
  /** What the workflow id is made from, when it is not the job id (a catalog request's). */
  key?: string;
  args: Parameters<W>;
  /** Ends a run nobody works on (no worker) instead of leaving it open: request-scoped kinds. */
  executionTimeoutMs?: number;
  /**
   * How the job is failed when its start is refused, for a kind whose end is more than its row
   * (an agent turn also sets its thread's expiry); default endJob with `error`.
   */
  fail?: (error: FailureRecord) => Promise<unknown>;
}

/** Starts the job's workflow; `running` only for specs that refuse to join an open run (catalog). */
export async function startJob<W extends Workflow>(deps: ApiDeps, spec: WorkflowJobSpec<W>, o: JobStart<W>): Promise<'started' | 'running'> {
  const key = o.key ?? o.jobId;
  try {
    return await deps.workflows.start(spec, { key, args: o.args, executionTimeoutMs: o.executionTimeoutMs });
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    const error = { kind: 'SERVICE_UNAVAILABLE', message: `The job could not be started: ${reason}` };
    await (o.fail ? o.fail(error) : endJob(deps.db, o.jobId, { status: 'failed', error, keptMs: spec.resultsKeptMs, releaseKey: true }));
    void deps.workflows.cancel(spec, key).catch(() => {});
    throw new WdsError('SERVICE_UNAVAILABLE', {
      message: `Service Unavailable: the ${spec.noun} could not be started (the workflow service did not accept it); nothing will run. Retry later.`,
      cause: e,
    });
  }
}

/**
 * A request-scoped job (scrape, map, parse, crawl prompt): started as above, then awaited within
 * the request's budget (its timeout and a grace for the answer); a failed run throws its error.
 */
export async function runJob<W extends Workflow>(deps: ApiDeps, spec: WorkflowJobSpec<W>, o: JobStart<W> & { timeoutMs: number; graceMs: number }): Promise<Awaited<ReturnType<W>>> {
  await startJob(deps, spec, { ...o, executionTimeoutMs: o.executionTimeoutMs ?? o.timeoutMs + 30_000 });
  return deps.workflows.result(spec, { key: o.key ?? o.jobId, budgetMs: o.timeoutMs + o.graceMs });
}

/** Asks the job's workflow to stop; the workflow writes the end. */
export function cancelJob(deps: ApiDeps, spec: WorkflowJobSpec, key: string): Promise<void> {
  return deps.workflows.cancel(spec, key);
}
