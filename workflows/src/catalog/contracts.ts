/**
 * The catalog request's contract (POST /v2/scrape in catalog mode). Ids, not data: the calls
 * and their options live in the catalog_requests row the API wrote, each call's outcome in
 * catalog_call_results; only indexes, kinds and ids cross Temporal.
 */
import type { FailureRecord } from '../common';

export interface CatalogWorkflowInput {
  /** The request's uuid (its scrape_id and chargeId). */
  id: string;
  timeoutMs: number;
  /** How a built-in scrape's child workflow fetches (the API's WDS_SCRAPE_FETCH). */
  scrapeFetch?: 'queue' | 'local';
}

export type CatalogWorkflowResult =
  | { outcome: 'completed' }
  /** Credits could not be reserved: nothing ran and the request's record is gone. */
  | { outcome: 'insufficient_credits'; message: string }
  /** The request's record was not in a state to begin (already ended): nothing was done by this run. */
  | { outcome: 'not_started' };

/**
 * Where a call runs: `fetch` — an activity on wds-fetch (HTTP providers, map, search,
 * find-tools); `scrape` — a child scrape workflow (the built-in scrape, so it is the same
 * scrape as POST /v2/scrape's: engine choice, browser, billing).
 */
export interface CatalogCallPlan {
  index: number;
  runs: 'fetch' | 'scrape';
}

export type BeginCatalogResult = { state: 'begun'; calls: CatalogCallPlan[] } | { state: 'refused'; message: string } | { state: 'gone' };

export interface CatalogRef {
  id: string;
}

export interface CatalogCallRef extends CatalogRef {
  index: number;
  /** Epoch ms the call must be done by. */
  deadlineMs: number;
}

export interface CollectScrapeInput extends CatalogRef {
  index: number;
  jobId: string;
  /** The child scrape's failure, when it failed. */
  error?: FailureRecord;
}

/** wds-control: the request's bookkeeping (credits, the record, the answer). */
export interface CatalogControlActivities {
  /** Marks the request running and reserves every call's credits, or refuses (402) and deletes the record. */
  beginCatalog(input: CatalogRef): Promise<BeginCatalogResult>;
  /** Stores the child scrape's job row (a stable id per call); null when the call's options do not make a scrape (its error is stored). */
  prepareCatalogScrape(input: CatalogCallRef): Promise<{ jobId: string } | null>;
  /** The child scrape's document (or failure) as the call's result. */
  collectCatalogScrape(input: CollectScrapeInput): Promise<void>;
  /** Bills the calls that succeeded, releases the rest, stores the answer. */
  finishCatalog(input: CatalogRef): Promise<void>;
  /** The workflow cannot finish: the record becomes unresolved and unsettled reservations are released. */
  abandonCatalog(input: CatalogRef): Promise<void>;
}

/** wds-fetch: one call (HTTP provider or built-in), its result stored. */
export interface CatalogFetchActivities {
  runCatalogCall(input: CatalogCallRef): Promise<void>;
}
