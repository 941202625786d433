import type { z } from 'zod';
import type { changeDiffSchema, changeTrackingSchema, documentMetadataSchema, scrapeDocumentSchema } from './responses';

/**
 * The scrape response document (`data` of POST /v2/scrape), as the spec's response table gives it.
 * The types come from the zod schemas in responses.ts, which the OpenAPI document is built from:
 * one definition for the code and the published contract.
 */
export type ChangeTracking = z.output<typeof changeTrackingSchema>;
export type ChangeDiff = z.output<typeof changeDiffSchema>;
export type ChangeStatus = ChangeTracking['changeStatus'];
export type DocumentMetadata = z.output<typeof documentMetadataSchema>;
export type ScrapeDocument = Omit<z.output<typeof scrapeDocumentSchema>, 'pages' | 'blocks' | 'actions' | 'tools'>;

export interface ScrapeResponse {
  success: true;
  data: ScrapeDocument;
}
