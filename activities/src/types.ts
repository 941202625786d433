// Activity interfaces only: imported (as types) by workflow code, so no runtime imports here.
import type {
  FinishJobInput,
  FrontierState,
  JobRef,
  ParseUploadInput,
  ParseUploadResult,
  ProcessBatchInput,
  ProcessBatchResult,
  RecordScrapeFailureInput,
  ScrapePageInput,
  ScrapePageResult,
} from '@wds/workflows/contracts';

export interface ScrapeActivities {
  scrapePage(input: ScrapePageInput): Promise<ScrapePageResult>;
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
