/**
 * The scrape job's contract (POST /v2/scrape): workflow input/result and the activities it
 * calls. Ids, not data: the options live in the scrape_jobs row written by the API; the page
 * never crosses Temporal.
 */
import type { JobRef, RecordFailureInput } from '../common';
import type { BrowserNeed } from './engine';

export { planEngine, requiredBrowserNeeds, preferredBrowserNeeds, type BrowserNeed, type EnginePlan } from './engine';

/**
 * Where a single scrape runs (WDS_SCRAPE_FETCH on the API), decided here only: the env default,
 * the API's dispatch (apps/api/src/services/scrape-run.ts) and the workflow's fetch all derive from it.
 * - `direct` (default): through Postgres to a fetch worker (@wds/db scrape-queue.ts,
 *   activities/src/scrape/direct.ts), for requests the HTTP engine serves; no Temporal workflow
 *   unless the page turns out to need the browser, or the request asks for model-made formats:
 *   then the fetch worker hands the fetched page to the scrape workflow, started past its fetch
 *   step, so the model call is still an activity on wds-llm but the fetch costs Temporal nothing.
 *   Requests that need the browser or the media step (audio/video) from the start go to the
 *   scrape workflow as before.
 * - `queue` / `local`: always the scrape workflow, its fetch an activity on wds-fetch or a local
 *   activity of the control worker.
 * bench/README.md (scrape) has the measurements behind the default.
 */
export const SCRAPE_DISPATCHES = ['direct', 'queue', 'local'] as const;
export type ScrapeDispatch = (typeof SCRAPE_DISPATCHES)[number];
export const DEFAULT_SCRAPE_DISPATCH: ScrapeDispatch = 'direct';

/** How a scrape workflow fetches under a dispatch: `local` in-process, otherwise on wds-fetch (a direct scrape handed over included). */
export const workflowFetchOf = (dispatch: ScrapeDispatch): 'queue' | 'local' => (dispatch === 'local' ? 'local' : 'queue');

export interface ScrapeWorkflowInput {
  jobId: string;
  /** The request's timeout; bounds the activity including retries. */
  timeoutMs: number;
  /**
   * Where the HTTP fetch runs (WDS_SCRAPE_FETCH on the API): `queue` (default) as an activity
   * on wds-fetch; `local` as a local activity on the wds-control worker running the workflow,
   * which skips an activity dispatch and a workflow task (for deployments whose control
   * workers also fetch, e.g. the embedded default). Browser renders always go to wds-browser.
   */
  fetch?: 'queue' | 'local';
  /**
   * Started by a fetch worker that ran the page step of a directly dispatched scrape (no Temporal:
   * activities/src/scrape/direct.ts) and found the page needs the browser: that step's result, so
   * the workflow goes on from there instead of fetching again.
   */
  fetched?: FetchPageResult;
  /** Epoch ms the scrape must be done by, when it started before the workflow (a direct scrape). */
  deadlineMs?: number;
}

export interface ScrapeWorkflowResult {
  jobId: string;
  statusCode: number;
  /**
   * The request asks for model-made formats (json, summary, …) or onlyCleanContent: the page's
   * document is stored as a draft, and the job is completed by the LLM activity (wds-llm).
   */
  needsLlm?: boolean;
  /** The request asks for `audio`/`video`: the page is a draft, and the media activity (wds-media) goes next. */
  needsMedia?: boolean;
}

/**
 * Written by the API into scrape_jobs.options (as `cacheLookup`) when a cached page needs
 * work that belongs on a worker (PDF conversion): the activity reads the page cache itself,
 * with the window the API decided, instead of fetching.
 */
export interface ScrapeCacheLookup {
  /** Upper bound of the copy's age; absent = any age (minAge without maxAge). */
  maxAgeMs?: number;
  minAgeMs?: number;
  /** What a miss means when the copy is gone by then: a fresh fetch, or the spec's 404s. */
  onMiss: 'fetch' | 'lockdown' | 'minAge';
}

/** The fetch activity of a scrape (wds-fetch). */
export interface FetchPageInput extends JobRef {
  /** 'http': never escalate (the fallback after no browser worker picked the render up). */
  engine?: 'http';
  /** Epoch ms the scrape must finish by (the fallback gets what is left of the budget). */
  deadlineMs?: number;
}

export interface FetchPageResult extends ScrapeWorkflowResult {
  /**
   * Set when the browser must (required) or should (not required) produce the page instead;
   * the job is then not completed. Flags only: the fetched HTML never travels through Temporal.
   */
  needsBrowser?: { required: boolean; reasons: BrowserNeed[] };
}

/** The browser activity of a scrape (wds-browser): renders, stores files, completes the job. */
export interface RenderPageInput {
  jobId: string;
  /** Epoch ms by which the scrape must be done (its start + the request's timeout); retries share it. */
  deadlineMs: number;
}
export type RenderPageResult = ScrapeWorkflowResult;

/** wds-fetch (or a local activity of wds-control): the HTTP engine, or the engine decision. */
export interface ScrapeActivities {
  scrapePage(input: FetchPageInput): Promise<FetchPageResult>;
}

/** wds-browser (one BrowserPool per process). */
export interface BrowserActivities {
  renderPage(input: RenderPageInput): Promise<RenderPageResult>;
}

/** The LLM step of a scrape (wds-llm): reads the draft document, adds the model-made fields, completes the job. */
export interface EnrichScrapeInput {
  jobId: string;
  /** Epoch ms by which the scrape must be done; retries share it. */
  deadlineMs: number;
}

/** The media step of a scrape (wds-media): reads the draft, downloads and converts its media, completes the job (or hands it to the LLM step). */
export interface ExtractScrapeMediaInput {
  jobId: string;
  /** Epoch ms by which the scrape must be done; retries share it. */
  deadlineMs: number;
}

/** wds-media: downloads and ffmpeg, on workers sized for them. */
export interface MediaScrapeActivities {
  extractScrapeMedia(input: ExtractScrapeMediaInput): Promise<ScrapeWorkflowResult>;
}

/** wds-llm: model calls, with their own slots and rate limits, never on the fetch queue. */
export interface LlmScrapeActivities {
  enrichScrape(input: EnrichScrapeInput): Promise<ScrapeWorkflowResult>;
}

/** wds-control: bookkeeping. */
export interface ScrapeStoreActivities {
  recordScrapeFailure(input: RecordFailureInput): Promise<void>;
}
