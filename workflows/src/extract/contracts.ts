/**
 * The extract job's contract (POST /v2/extract). The request (prompt, schema, page options)
 * lives in its jobs row's options; the pages in its frontier (its crawl_jobs extension,
 * crawl_urls/crawl_documents); the model's per-page results in extract_pages, the answer in its
 * extract_jobs extension. The workflow carries the job id, the frontier plan, counters and page sequence numbers.
 */
import type { CrawlPlan, CrawlProgress, ProcessBatchInput, ProcessBatchResult } from '../crawl/contracts';
import type { JobRef } from '../common';

export interface ExtractProgress {
  /** `scrape`: fetching pages through the frontier; `extract`: model steps and merge. */
  phase: 'scrape' | 'extract';
  frontier: CrawlProgress;
}

export interface ExtractWorkflowInput {
  jobId: string;
  plan: CrawlPlan;
  /** Epoch ms by which the model steps must be done; pages not extracted by then are left out (partial data, warning). */
  deadlineMs: number;
  progress?: ExtractProgress;
}

export interface ExtractWorkflowResult {
  status: string;
  pages: number;
}

/** wds-fetch: expands wildcard URLs through map (the frontier's seed step) and fetches pages. */
export interface ExtractFetchActivities {
  expandExtractUrls(input: JobRef): Promise<number>;
  fetchExtractBatch(input: ProcessBatchInput): Promise<ProcessBatchResult>;
}

export interface EndScrapePhaseInput {
  jobId: string;
  outcome: 'completed' | 'failed' | 'cancelled';
  error?: string;
}

export interface EndExtractInput {
  jobId: string;
  outcome: 'failed' | 'cancelled';
  error?: string;
}

/** wds-control: bookkeeping only. */
export interface ExtractControlActivities {
  /** The frontier loop's end: closes the frontier row (and the job, unless the frontier completed). */
  endExtractScrape(input: EndScrapePhaseInput): Promise<{ status: string }>;
  /** Page documents still to hand to the model, as sequence numbers. */
  extractPagesToDo(input: JobRef): Promise<number[]>;
  endExtract(input: EndExtractInput): Promise<void>;
}

export interface ExtractPageInput {
  jobId: string;
  docSeq: number;
  deadlineMs: number;
}

export interface ExtractPageResult {
  status: 'extracted' | 'failed' | 'skipped';
  /** The team's credit limit refused the step: start no more page steps. */
  outOfCredits?: boolean;
}

export interface MergeExtractInput {
  jobId: string;
  deadlineMs: number;
}

/** wds-llm: model calls, with their own slots and rate limits. */
export interface ExtractLlmActivities {
  extractPage(input: ExtractPageInput): Promise<ExtractPageResult>;
  /** Merges the page results into one answer (a model call only where values conflict) and completes the job. */
  mergeExtract(input: MergeExtractInput): Promise<{ status: string }>;
}
