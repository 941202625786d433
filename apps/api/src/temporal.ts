import { ActivityFailure, ApplicationFailure, Client, Connection, TimeoutFailure, WorkflowFailedError } from '@temporalio/client';
import { WdsError, isErrorKind } from '@wds/errors';
import type { scrapeWorkflow } from '@wds/workflows';
import { TaskQueues, workflowIds, type ScrapeWorkflowResult } from '@wds/workflows/contracts';

/** Typed starters: the only place the API names workflows and queues. */
export interface Starters {
  runScrape(input: { jobId: string; timeoutMs: number }): Promise<ScrapeWorkflowResult>;
  close(): Promise<void>;
}

export async function connectTemporal(address: string, namespace: string): Promise<{ client: Client; connection: Connection; starters: Starters }> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  const starters: Starters = {
    async runScrape({ jobId, timeoutMs }) {
      const handle = await client.workflow.start<typeof scrapeWorkflow>('scrapeWorkflow', {
        taskQueue: TaskQueues.control,
        workflowId: workflowIds.scrape(jobId),
        args: [{ jobId, timeoutMs }],
        // A scrape nobody can run (no worker) must not linger forever.
        workflowExecutionTimeout: timeoutMs + 30_000,
      });
      return awaitResult(handle.result(), timeoutMs + 5_000);
    },
    close: () => connection.close(),
  };
  return { client, connection, starters };
}

async function awaitResult<T>(p: Promise<T>, budgetMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const overBudget = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new WdsError('REQUEST_TIMEOUT', { code: 'SCRAPE_TIMEOUT', message: 'Request Timeout: the scrape did not finish within its timeout' })),
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
