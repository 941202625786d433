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
  type Workflow,
} from '@temporalio/client';

import { WdsError, isErrorKind } from '@wds/errors';
import type { agentWorkflow, crawlParamsWorkflow, crawlWorkflow, extractWorkflow, mapWorkflow, monitorRunWorkflow, parseWorkflow, scrapeWorkflow } from '@wds/workflows';
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
  startMonitorRun(input: { runId: string; plan: CrawlPlan }): Promise<void>;
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
    async startMonitorRun({ runId, plan }) {
      await startOnce(() =>
        client.workflow.start<typeof monitorRunWorkflow>('monitorRunWorkflow', {
          taskQueue: TaskQueues.control,
          workflowId: workflowIds.monitorRun(runId),
          args: [{ runId, plan }],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        }),
      );
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

/** Rebuilds the WdsError an activity threw from the Temporal failure chain. */
export function failureToWdsError(e: unknown): WdsError {
  if (e instanceof WdsError) return e;
  let cause: unknown = e;
  if (cause instanceof WorkflowFailedError) cause = cause.cause;
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
