// Activity interfaces only: imported (as types) by workflow code, so no runtime imports here.
import type {
  FetchPageInput,
  FetchPageResult,
  FinishJobInput,
  FrontierState,
  JobRef,
  ParseUploadInput,
  ParseUploadResult,
  ProcessBatchInput,
  ProcessBatchResult,
  RecordScrapeFailureInput,
  RenderPageInput,
  RenderPageResult,
} from '@wds/workflows/contracts';

export interface ScrapeActivities {
  /** HTTP engine, or the engine decision (`needsBrowser`) when the browser should render instead. */
  scrapePage(input: FetchPageInput): Promise<FetchPageResult>;
}

/** Served by workers on wds-browser (one BrowserPool per process). */
export interface BrowserActivities {
  renderPage(input: RenderPageInput): Promise<RenderPageResult>;
}

export interface StoreActivities {
  recordScrapeFailure(input: RecordScrapeFailureInput): Promise<void>;
  recordMapFailure(input: RecordScrapeFailureInput): Promise<void>;
}

export interface CrawlActivities {
  seedJob(input: JobRef): Promise<number>;
  processBatch(input: ProcessBatchInput): Promise<ProcessBatchResult>;
}

export interface CrawlControlActivities {
  frontierState(input: JobRef): Promise<FrontierState>;
  finishJob(input: FinishJobInput): Promise<{ status: string }>;
}

export interface MapActivities {
  mapSite(input: JobRef): Promise<{ count: number }>;
}

export interface ParseActivities {
  parseUpload(input: ParseUploadInput): Promise<ParseUploadResult>;
  recordParseFailure(input: RecordScrapeFailureInput): Promise<void>;
}
