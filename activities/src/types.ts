// Activity interfaces only: imported (as types) by workflow code, so no runtime imports here.
import type { RecordScrapeFailureInput, ScrapePageInput, ScrapePageResult } from '@wds/workflows/contracts';

export interface ScrapeActivities {
  scrapePage(input: ScrapePageInput): Promise<ScrapePageResult>;
}

export interface StoreActivities {
  recordScrapeFailure(input: RecordScrapeFailureInput): Promise<void>;
}
