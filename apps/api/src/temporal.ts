import {
  ActivityFailure,
  ApplicationFailure,
  Client,
  Connection,
  TimeoutFailure,
  WorkflowFailedError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WithStartWorkflowOperation,
  type UpdateDefinition,
  type Workflow,
  type WorkflowStartOptions,
} from '@temporalio/client';

import { WdsError, isErrorKind } from '@wds/errors';
import type { CatalogWorkflowResult } from '@wds/workflows/catalog';
import { catalogJob } from '@wds/workflows/job-specs';
import type { WorkflowJobSpec } from '@wds/workflows/jobs';
import { workflowFetchOf, type ScrapeDispatch } from '@wds/workflows/scrape';

/**
 * How long a job start may wait for Temporal before the request fails (and the job with it).
 * Kept well under the workers' stranded-job grace (WDS_STRANDED_JOB_GRACE_MS), so the sweeper
 * never fails a job whose start is still in flight.
 */
export const START_DEADLINE_MS = 10_000;

/**
 * The workflow operations every job kind uses, driven by its JobSpec (workflows/src/<kind>/spec.ts):
 * the only place the API starts, awaits or cancels a workflow by name. `key` is what the spec
 * makes the workflow id from (the job id; a catalog request's `<team>-<x-request-id>`).
 */
export interface JobWorkflows {
  /**
   * Starts the job's workflow with the spec's id policies, within START_DEADLINE_MS. `running`: a
   * run of that id is open and the spec refuses to join it (conflict FAIL), so this start did
   * nothing; a spec that joins (USE_EXISTING) answers `started` for a repeated start.
   */
  start<W extends Workflow>(spec: WorkflowJobSpec<W>, o: { key: string; args: Parameters<W>; executionTimeoutMs?: number }): Promise<'started' | 'running'>;
  /**
   * The latest run's result within `budgetMs`; past it a REQUEST_TIMEOUT (`what` names the job in
   * its message). A failed run throws the WdsError its activity threw.
   */
  result<W extends Workflow>(spec: WorkflowJobSpec<W>, o: { key: string; budgetMs: number; what?: string }): Promise<Awaited<ReturnType<W>>>;
  /** Whether a run of the job's workflow is open now. */
  running(spec: WorkflowJobSpec, key: string): Promise<boolean>;
  /** Asks the workflow to cancel (its cleanup writes the end); one already gone is no error. */
  cancel(spec: WorkflowJobSpec, key: string): Promise<void>;
  /**
   * Sends `update` to the job's open run, or starts a run (the spec's id policies) carrying it, in
   * one call: the update lands in the run it started or joined. Past `budgetMs` it rejects saying
   * `what` did not finish within it (the update may still finish in the run).
   */
  updateWithStart<W extends Workflow, R, A extends [unknown, ...unknown[]]>(
    spec: WorkflowJobSpec<W>,
    o: { key: string; args: Parameters<W>; update: UpdateDefinition<R, A>; updateArgs: A; budgetMs: number; what: string },
  ): Promise<R>;
  /** Sends an argument-less `update` to the job's open run within `budgetMs`; null when no run is open. */
  update<R>(spec: WorkflowJobSpec, o: { key: string; update: UpdateDefinition<R, []>; budgetMs: number; what: string }): Promise<R | null>;
}

/** Starts that are more than one call: the kinds not yet on the job service (apps/api/src/services/jobs.ts). */
export interface Starters {
  /**
   * Catalog mode: starts the request's workflow (id from team and x-request-id); `running` when a
   * run of that id is still open (this start did nothing). Fails after START_DEADLINE_MS.
   */
  startCatalog(input: { teamId: string; requestId: string; id: string; timeoutMs: number }): Promise<'started' | 'running'>;
  /** The latest run's result, or `timeout` when it is not done within `budgetMs`. A failed run throws. */
  awaitCatalog(input: { teamId: string; requestId: string; budgetMs: number }): Promise<CatalogWorkflowResult | 'timeout'>;
  /** Whether a run of the request's workflow is open now. */
  catalogRunning(input: { teamId: string; requestId: string }): Promise<boolean>;
  close(): Promise<void>;
}

const CONFLICT = { USE_EXISTING: WorkflowIdConflictPolicy.USE_EXISTING, FAIL: WorkflowIdConflictPolicy.FAIL } as const;
const REUSE = { REJECT_DUPLICATE: WorkflowIdReusePolicy.REJECT_DUPLICATE, ALLOW_DUPLICATE: WorkflowIdReusePolicy.ALLOW_DUPLICATE } as const;

export async function connectTemporal(
  address: string,
  namespace: string,
  opts: { scrapeDispatch: ScrapeDispatch },
): Promise<{ client: Client; connection: Connection; workflows: JobWorkflows; starters: Starters }> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  const catalogKey = (teamId: string, requestId: string) => `${teamId}-${requestId}`;

  const workflows: JobWorkflows = {
    async start<W extends Workflow>(spec: WorkflowJobSpec<W>, { key, args, executionTimeoutMs }: { key: string; args: Parameters<W>; executionTimeoutMs?: number }) {
      const start = () =>
        client.workflow.start<W>(spec.workflowType, {
          taskQueue: spec.taskQueue,
          workflowId: spec.workflowId(key),
          args,
          workflowIdConflictPolicy: CONFLICT[spec.start.conflict],
          workflowIdReusePolicy: REUSE[spec.start.reuse],
          // A job nobody can run (no worker) must not linger forever.
          ...(executionTimeoutMs ? { workflowExecutionTimeout: executionTimeoutMs } : {}),
        } as unknown as WorkflowStartOptions<W>);
      try {
        // The gRPC deadline ends the call, but the client's retry backoff can sleep past it: the
        // timer is what bounds the request.
        await withinMs(client.withDeadline(Date.now() + START_DEADLINE_MS, start), START_DEADLINE_MS, 'Temporal did not accept the workflow start');
        return 'started';
      } catch (e) {
        // REJECT_DUPLICATE: the job's one run already ended; that run is the job's.
        if (e instanceof WorkflowExecutionAlreadyStartedError) return spec.start.conflict === 'FAIL' ? 'running' : 'started';
        throw e;
      }
    },
    async result(spec, { key, budgetMs, what }) {
      return awaitResult(client.workflow.getHandle(spec.workflowId(key)).result(), budgetMs, what ?? spec.noun);
    },
    async running(spec, key) {
      try {
        const d = await client.workflow.getHandle(spec.workflowId(key)).describe();
        return d.status.name === 'RUNNING';
      } catch (e) {
        if (e instanceof WorkflowNotFoundError) return false;
        throw e;
      }
    },
    async cancel(spec, key) {
      await client.workflow
        .getHandle(spec.workflowId(key))
        .cancel()
        .catch((e) => {
          // Already finished: the job row is what callers see, and it is already final.
          if (!(e instanceof WorkflowNotFoundError)) throw e;
        });
    },
    async updateWithStart(spec, { key, args, update, updateArgs, budgetMs, what }) {
      const call = client.workflow.executeUpdateWithStart(update, {
        args: updateArgs,
        startWorkflowOperation: new WithStartWorkflowOperation(spec.workflowType, {
          taskQueue: spec.taskQueue,
          workflowId: spec.workflowId(key),
          args,
          workflowIdConflictPolicy: CONFLICT[spec.start.conflict],
          workflowIdReusePolicy: REUSE[spec.start.reuse],
        } as never),
        // The SDK's overloads cannot be matched by a generic update; the interface above keeps the types.
      } as never) as Promise<never>;
      return withinMs(call, budgetMs, `${what} did not finish`);
    },
    async update(spec, { key, update, budgetMs, what }) {
      try {
        return await withinMs(client.workflow.getHandle(spec.workflowId(key)).executeUpdate(update), budgetMs, `${what} did not finish`);
      } catch (e) {
        if (e instanceof WorkflowNotFoundError || /already completed|not found/i.test((e as Error).message ?? '')) return null;
        throw e;
      }
    },
  };

  const starters: Starters = {
    startCatalog: ({ teamId, requestId, id, timeoutMs }) =>
      workflows.start(catalogJob, { key: catalogKey(teamId, requestId), args: [{ id, timeoutMs, scrapeFetch: workflowFetchOf(opts.scrapeDispatch) }] }),
    async awaitCatalog({ teamId, requestId, budgetMs }) {
      const handle = client.workflow.getHandle(catalogJob.workflowId(catalogKey(teamId, requestId)));
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), budgetMs)));
      try {
        return await Promise.race([handle.result() as Promise<CatalogWorkflowResult>, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    catalogRunning: ({ teamId, requestId }) => workflows.running(catalogJob, catalogKey(teamId, requestId)),
    close: () => connection.close(),
  };
  return { client, connection, workflows, starters };
}

/** `p`, or a rejection after `ms` (p's own outcome is then ignored). */
async function withinMs<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  p.catch(() => {});
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function awaitResult<T>(p: Promise<T>, budgetMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const overBudget = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new WdsError('REQUEST_TIMEOUT', { code: 'SCRAPE_TIMEOUT', message: `Request Timeout: the ${what} did not finish within its timeout` })),
      budgetMs,
    );
  });
  try {
    return await Promise.race([p.catch((e) => { throw failureToWdsError(e); }), overBudget]);
  } finally {
    clearTimeout(timer);
  }
}

/** The `code` of a failed update's ApplicationFailure (e.g. SESSION_BUSY, SESSION_ENDING), if it is one. */
export function updateFailureCode(e: unknown): string | undefined {
  const cause = e instanceof WorkflowUpdateFailedError ? e.cause : undefined;
  if (!(cause instanceof ApplicationFailure)) return undefined;
  return (cause.details?.[0] as { code?: string } | undefined)?.code ?? undefined;
}

/** Rebuilds the WdsError an activity threw from the Temporal failure chain. */
export function failureToWdsError(e: unknown): WdsError {
  if (e instanceof WdsError) return e;
  let cause: unknown = e;
  if (cause instanceof WorkflowFailedError || cause instanceof WorkflowUpdateFailedError) cause = cause.cause;
  if (cause instanceof ActivityFailure) cause = cause.cause;
  if (cause instanceof ApplicationFailure && isErrorKind(cause.type)) {
    const [detail] = (cause.details ?? []) as { code?: string; details?: unknown }[];
    return new WdsError(cause.type, { message: cause.message, code: detail?.code ?? undefined, details: detail?.details ?? undefined });
  }
  if (cause instanceof TimeoutFailure) {
    return new WdsError('REQUEST_TIMEOUT', { code: 'SCRAPE_TIMEOUT', message: 'Request Timeout: the scrape did not finish within its timeout' });
  }
  return new WdsError('INTERNAL', { code: 'UNKNOWN_ERROR', cause: e });
}
