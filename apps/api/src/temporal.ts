import {
  ActivityFailure,
  ApplicationFailure,
  Client,
  Connection,
  TimeoutFailure,
  WorkflowFailedError,
  WorkflowIdConflictPolicy,
  WorkflowNotFoundError,
  type Workflow,
} from '@temporalio/client';

import { WdsError, isErrorKind } from '@wds/errors';
import type { crawlWorkflow, mapWorkflow, parseWorkflow, scrapeWorkflow } from '@wds/workflows';
import { TaskQueues, workflowIds } from '@wds/workflows/common';
import type { CrawlPlan } from '@wds/workflows/crawl';
import type { ParseWorkflowResult } from '@wds/workflows/parse';
import type { ScrapeWorkflowResult } from '@wds/workflows/scrape';

/** Typed starters: the only place the API names workflows and queues. */
export interface Starters {
  runScrape(input: { jobId: string; timeoutMs: number }): Promise<ScrapeWorkflowResult>;
  /** Starts a crawl or batch job; a repeated start of the same job id is a no-op. */
  startCrawl(input: { jobId: string; kind: 'crawl' | 'batch'; plan: CrawlPlan }): Promise<void>;
  cancelCrawl(input: { jobId: string; kind: 'crawl' | 'batch' }): Promise<void>;
  runMap(input: { jobId: string; timeoutMs: number }): Promise<void>;
  /** POST /v2/parse: converts the stored upload; waits within the request's timeout. */
  runParse(input: { jobId: string; timeoutMs: number }): Promise<ParseWorkflowResult>;
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

  const starters: Starters = {
    async runScrape({ jobId, timeoutMs }) {
      return runToCompletion<typeof scrapeWorkflow>('scrapeWorkflow', workflowIds.scrape(jobId), [{ jobId, timeoutMs, fetch: opts.scrapeFetch }], timeoutMs, 5_000);
    },
    async startCrawl({ jobId, kind, plan }) {
      await client.workflow.start<typeof crawlWorkflow>('crawlWorkflow', {
        taskQueue: TaskQueues.control,
        workflowId: kind === 'crawl' ? workflowIds.crawl(jobId) : workflowIds.batch(jobId),
        args: [{ jobId, kind, plan }],
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      });
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
    close: () => connection.close(),
  };
  return { client, connection, starters };
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
