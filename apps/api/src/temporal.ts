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
  type Workflow,
} from '@temporalio/client';

import { WdsError, isErrorKind } from '@wds/errors';
import type { agentWorkflow, crawlParamsWorkflow, crawlWorkflow, extractWorkflow, interactWorkflow, mapWorkflow, monitorRunWorkflow, parseWorkflow, scrapeWorkflow } from '@wds/workflows';
import { interactUpdate, stopInteractUpdate, type InteractCallInput, type InteractStopResult } from '@wds/workflows/interact';
import type { MonitorRunInput } from '@wds/workflows/monitor';
import type { AgentPlan } from '@wds/workflows/agent';
import { TaskQueues, workflowIds } from '@wds/workflows/common';
import type { CrawlPlan } from '@wds/workflows/crawl';
import type { ParseWorkflowResult } from '@wds/workflows/parse';
import type { ScrapeWorkflowResult } from '@wds/workflows/scrape';

/**
 * How long a job start may wait for Temporal before the request fails (and the job with it).
 * Kept well under the workers' stranded-job grace (WDS_STRANDED_JOB_GRACE_MS), so the sweeper
 * never fails a job whose start is still in flight.
 */
export const START_DEADLINE_MS = 10_000;

/** Typed starters: the only place the API names workflows and queues. */
export interface Starters {
  runScrape(input: { jobId: string; timeoutMs: number }): Promise<ScrapeWorkflowResult>;
  /**
   * Starts a crawl or batch job; a repeated start of the same job id is a no-op. Fails after
   * START_DEADLINE_MS when Temporal does not answer.
   */
  startCrawl(input: { jobId: string; kind: 'crawl' | 'batch'; plan: CrawlPlan }): Promise<void>;
  cancelCrawl(input: { jobId: string; kind: 'crawl' | 'batch' }): Promise<void>;
  runMap(input: { jobId: string; timeoutMs: number }): Promise<void>;
  /** POST /v2/parse: converts the stored upload; waits within the request's timeout. */
  runParse(input: { jobId: string; timeoutMs: number }): Promise<ParseWorkflowResult>;
  /** Starts an extract job (idempotent per job id, like startCrawl); fails after START_DEADLINE_MS. */
  startExtract(input: { jobId: string; plan: CrawlPlan; deadlineMs: number }): Promise<void>;
  /** Crawl options from a prompt: one model step on wds-llm; waits within `timeoutMs`. */
  runCrawlParams(input: { previewId: string; timeoutMs: number }): Promise<void>;
  /** POST /v2/agent: starts the run's workflow (a repeated start of the same run is a no-op). */
  startAgent(input: { runId: string; plan: AgentPlan }): Promise<void>;
  /** DELETE /v2/agent/{id}: asks the workflow to cancel (its cleanup writes the end). */
  cancelAgent(input: { runId: string }): Promise<void>;
  /** POST /v2/monitor/{id}/run: starts the run of the check (idempotent per run id); fails after START_DEADLINE_MS. */
  startMonitorRun(input: MonitorRunInput): Promise<void>;
  /**
   * POST /v2/scrape/{id}/interact: one call in the scrape's session, starting the session's
   * workflow if none runs; waits for the call's end within `budgetMs`.
   */
  interact(input: { scrapeId: string; teamId: string; idleMs: number; call: InteractCallInput; budgetMs: number }): Promise<void>;
  /** DELETE /v2/scrape/{id}/interact: ends the running session; null when none runs. */
  stopInteract(input: { scrapeId: string }): Promise<InteractStopResult | null>;
  close(): Promise<void>;
}

export async function connectTemporal(
  address: string,
  namespace: string,
  opts: { scrapeFetch?: 'queue' | 'local' } = {},
): Promise<{ client: Client; connection: Connection; starters: Starters }> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });

  /** Starts a request-scoped workflow and waits for it within the request's budget. */
  async function runToCompletion<W extends Workflow>(type: string, workflowId: string, args: Parameters<W>, timeoutMs: number, graceMs: number, what = 'scrape') {
    const handle = await client.workflow.start<W>(type, {
      taskQueue: TaskQueues.control,
      workflowId,
      args,
      // A job nobody can run (no worker) must not linger forever.
      workflowExecutionTimeout: timeoutMs + 30_000,
    } as never);
    return awaitResult(handle.result() as Promise<Awaited<ReturnType<W>>>, timeoutMs + graceMs, what);
  }

  /** A job start bounded by START_DEADLINE_MS; a start of a job already started is a no-op. */
  async function startOnce(start: () => Promise<unknown>): Promise<void> {
    try {
      // The gRPC deadline ends the call, but the client's retry backoff can sleep past it: the
      // timer is what bounds the request.
      await withinMs(client.withDeadline(Date.now() + START_DEADLINE_MS, start), START_DEADLINE_MS, 'Temporal did not accept the workflow start');
    } catch (e) {
      if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
    }
  }

  const starters: Starters = {
    async runScrape({ jobId, timeoutMs }) {
      return runToCompletion<typeof scrapeWorkflow>('scrapeWorkflow', workflowIds.scrape(jobId), [{ jobId, timeoutMs, fetch: opts.scrapeFetch }], timeoutMs, 5_000);
    },
    async startCrawl({ jobId, kind, plan }) {
      await startOnce(() =>
        client.workflow.start<typeof crawlWorkflow>('crawlWorkflow', {
          taskQueue: TaskQueues.control,
          workflowId: kind === 'crawl' ? workflowIds.crawl(jobId) : workflowIds.batch(jobId),
          args: [{ jobId, kind, plan }],
          // Running: the same run. Ended: never a second run of a job (it would redo its pages).
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        }),
      );
    },
    async startExtract({ jobId, plan, deadlineMs }) {
      await startOnce(() =>
        client.workflow.start<typeof extractWorkflow>('extractWorkflow', {
          taskQueue: TaskQueues.control,
          workflowId: workflowIds.extract(jobId),
          args: [{ jobId, plan, deadlineMs }],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        }),
      );
    },
    async runCrawlParams({ previewId, timeoutMs }) {
      await runToCompletion<typeof crawlParamsWorkflow>('crawlParamsWorkflow', workflowIds.crawlParams(previewId), [{ previewId, timeoutMs }], timeoutMs, 5_000, 'crawl prompt');
    },
    async cancelCrawl({ jobId, kind }) {
      const id = kind === 'crawl' ? workflowIds.crawl(jobId) : workflowIds.batch(jobId);
      await client.workflow
        .getHandle(id)
        .cancel()
        .catch((e) => {
          // Already finished: the job row is what callers see, and it is already final.
          if (!(e instanceof WorkflowNotFoundError)) throw e;
        });
    },
    async runMap({ jobId, timeoutMs }) {
      await runToCompletion<typeof mapWorkflow>('mapWorkflow', workflowIds.map(jobId), [{ jobId, timeoutMs }], timeoutMs, 10_000, 'map');
    },
    async runParse({ jobId, timeoutMs }) {
      return runToCompletion<typeof parseWorkflow>('parseWorkflow', workflowIds.parse(jobId), [{ jobId, timeoutMs }], timeoutMs, 5_000, 'parse');
    },
    async startAgent({ runId, plan }) {
      const start = () =>
        client.workflow.start<typeof agentWorkflow>('agentWorkflow', {
          taskQueue: TaskQueues.control,
          workflowId: workflowIds.agent(runId),
          args: [{ runId, rootId: runId, plan }],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        });
      try {
        await withinMs(client.withDeadline(Date.now() + START_DEADLINE_MS, start), START_DEADLINE_MS, 'Temporal did not accept the workflow start');
      } catch (e) {
        if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
      }
    },
    async cancelAgent({ runId }) {
      await client.workflow
        .getHandle(workflowIds.agent(runId))
        .cancel()
        .catch((e) => {
          if (!(e instanceof WorkflowNotFoundError)) throw e;
        });
    },
    async startMonitorRun(input) {
      await startOnce(() =>
        client.workflow.start<typeof monitorRunWorkflow>('monitorRunWorkflow', {
          taskQueue: TaskQueues.control,
          workflowId: workflowIds.monitorRun(input.runId),
          args: [input],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        }),
      );
    },
    async interact({ scrapeId, teamId, idleMs, call, budgetMs }) {
      const workflowId = workflowIds.interact(scrapeId);
      const attempt = () =>
        client.workflow.executeUpdateWithStart(interactUpdate, {
          args: [call],
          startWorkflowOperation: new WithStartWorkflowOperation<typeof interactWorkflow>('interactWorkflow', {
            taskQueue: TaskQueues.control,
            workflowId,
            args: [{ scrapeId, teamId, idleMs }],
            // One session per scrape at a time; a new one once the last has ended.
            workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
            workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
          }),
        });
      const t0 = Date.now();
      try {
        await withinMs(attempt(), budgetMs, 'the interact call did not finish');
      } catch (e) {
        // The session was ending as the call came: once it has, the call opens a new one.
        if (updateFailureCode(e) !== 'SESSION_ENDING') throw asInteractError(e);
        await withinMs(client.workflow.getHandle(workflowId).result(), 30_000, 'the ending session did not close').catch(() => {});
        await withinMs(attempt(), Math.max(1_000, budgetMs - (Date.now() - t0)), 'the interact call did not finish').catch((e2) => {
          throw asInteractError(e2);
        });
      }
    },
    async stopInteract({ scrapeId }) {
      try {
        // Closing saves a profile and bills: seconds; a minute means the session's workers are not answering.
        return await withinMs(client.workflow.getHandle(workflowIds.interact(scrapeId)).executeUpdate(stopInteractUpdate), 60_000, 'the session did not finish stopping');
      } catch (e) {
        if (e instanceof WorkflowNotFoundError || /already completed|not found/i.test((e as Error).message ?? '')) return null;
        throw asInteractError(e);
      }
    },
    close: () => connection.close(),
  };
  return { client, connection, starters };
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

/** The `code` of a failed update's ApplicationFailure (e.g. SESSION_BUSY), if it is one. */
function updateFailureCode(e: unknown): string | undefined {
  const cause = e instanceof WorkflowUpdateFailedError ? e.cause : undefined;
  if (!(cause instanceof ApplicationFailure)) return undefined;
  return (cause.details?.[0] as { code?: string } | undefined)?.code ?? undefined;
}

/** An interact call's failure as the API answers it; the client's own deadline is a 504 (the call may still finish in the session). */
function asInteractError(e: unknown): WdsError {
  if (e instanceof Error && /did not finish[a-z ]* within \d+ ms/.test(e.message)) {
    return new WdsError('GATEWAY_TIMEOUT', { code: 'INTERACT_TIMEOUT', message: `Gateway Timeout: ${e.message}; the session may still be running it` });
  }
  return failureToWdsError(e);
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
