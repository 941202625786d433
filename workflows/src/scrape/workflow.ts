import { ActivityFailure, proxyActivities, proxyLocalActivities, TimeoutFailure } from '@temporalio/workflow';
import type { BrowserActivities, LlmScrapeActivities, MediaScrapeActivities, ScrapeActivities, ScrapeStoreActivities, FetchPageResult, ScrapeWorkflowInput, ScrapeWorkflowResult } from './contracts';
import { NON_RETRYABLE_KINDS, TaskQueues } from '../common';
import { describeFailure } from '../failure';
import { browserActivityTimeouts, LLM_RETRY_MAX_INTERVAL_MS, llmActivityTimeouts } from './engine';

/**
 * A single-URL scrape. The fetch activity (wds-fetch) loads the options, decides the engine
 * (./engine.ts) and either fetches over HTTP and completes the job, or answers `needsBrowser`
 * — up front (actions, screenshot, mobile, profile, waitFor) or after seeing script-rendered
 * HTML — without completing it. The browser activity (wds-browser) then renders the page
 * within what is left of the budget and completes the job. When the request asks for model-made
 * formats, either engine stores a draft instead and the LLM activity (wds-llm) completes the job;
 * with the audio/video formats the media activity (wds-media) comes first, then the LLM's if asked.
 * Only ids and flags cross Temporal. On failure the error is recorded for GET /v2/scrape/{id}
 * and rethrown for the waiting API.
 */
export async function scrapeWorkflow(input: ScrapeWorkflowInput): Promise<ScrapeWorkflowResult> {
  const started = Date.now();
  const retry = { initialInterval: '200ms', backoffCoefficient: 2, maximumAttempts: 3, nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] };
  // The user's timeout is the budget for all attempts together.
  const budget = { scheduleToCloseTimeout: input.timeoutMs + 5_000, startToCloseTimeout: input.timeoutMs + 2_000, retry };
  const { scrapePage } =
    input.fetch === 'local'
      ? // A killed worker's local attempt is redone by the workflow task's retry on another control worker.
        proxyLocalActivities<ScrapeActivities>(budget)
      : proxyActivities<ScrapeActivities>({
          taskQueue: TaskQueues.fetch,
          ...budget,
          // scrapePage beats every second: a killed worker's attempt is retried within this, not at the end of the budget.
          heartbeatTimeout: '10s',
        });
  const { recordScrapeFailure } = proxyActivities<ScrapeStoreActivities>({
    taskQueue: TaskQueues.control,
    startToCloseTimeout: '10s',
    retry: { maximumAttempts: 5 },
  });

  const deadlineMs = input.deadlineMs ?? started + input.timeoutMs;
  try {
    let page = await producePage();
    if (page.needsMedia) {
      // Only requests with the audio/video formats take this branch: histories of other scrapes replay unchanged.
      const { extractScrapeMedia } = proxyActivities<MediaScrapeActivities>({ taskQueue: TaskQueues.media, ...llmActivityTimeouts(deadlineMs - Date.now()), retry });
      page = await extractScrapeMedia({ jobId: input.jobId, deadlineMs });
    }
    if (!page.needsLlm) return { jobId: page.jobId, statusCode: page.statusCode };
    const { enrichScrape } = proxyActivities<LlmScrapeActivities>({
      taskQueue: TaskQueues.llm,
      ...llmActivityTimeouts(deadlineMs - Date.now()),
      // No attempt limit: a failing provider is retried until the scrape's own budget ends.
      retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: LLM_RETRY_MAX_INTERVAL_MS, nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] },
    });
    const enriched = await enrichScrape({ jobId: input.jobId, deadlineMs });
    return { jobId: enriched.jobId, statusCode: enriched.statusCode };
  } catch (err) {
    await recordScrapeFailure({ jobId: input.jobId, error: describeFailure(err) });
    throw err;
  }

  /** The page by the HTTP engine, or by the browser when the fetch activity says it should. */
  async function producePage(): Promise<ScrapeWorkflowResult> {
    const fetched: FetchPageResult = input.fetched ?? (await scrapePage({ jobId: input.jobId }));
    if (!fetched.needsBrowser) return fetched;
    const { required } = fetched.needsBrowser;
    const { renderPage } = proxyActivities<BrowserActivities>({
      taskQueue: TaskQueues.browser,
      ...browserActivityTimeouts(deadlineMs - Date.now(), required),
      // BROWSER_CRASHED (a killed or crashed Chromium) is a retryable BAD_GATEWAY.
      retry,
    });
    try {
      return await renderPage({ jobId: input.jobId, deadlineMs });
    } catch (err) {
      // An optional render nobody picked up in time: the HTTP engine answers instead.
      if (!required && isScheduleToStartTimeout(err)) return await scrapePage({ jobId: input.jobId, engine: 'http', deadlineMs });
      throw err;
    }
  }
}

function isScheduleToStartTimeout(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'SCHEDULE_TO_START';
}
