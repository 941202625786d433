/**
 * Crawl options from a natural-language prompt (POST /v2/crawl with `prompt`, POST
 * /v2/crawl/params-preview). The API stores the URL and prompt in crawl_param_previews; the
 * wds-llm activity asks the model, validates its answer with the crawl's own schema and writes
 * the options back. The API never calls the model itself.
 */
import type { JobRef } from '../common';

export interface CrawlParamsWorkflowInput {
  previewId: string;
  timeoutMs: number;
}

export interface CrawlParamsWorkflowResult {
  /** Options the model set (field count, for the log; the options themselves are in the row). */
  fields: number;
}

/** wds-llm. */
export interface CrawlParamsActivities {
  deriveCrawlParams(input: JobRef): Promise<CrawlParamsWorkflowResult>;
}
