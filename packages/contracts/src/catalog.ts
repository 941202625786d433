import { z } from 'zod';

/**
 * Catalog mode of POST /v2/scrape (spec: Catalog call) and the tool contracts of `domainTools`
 * and search's `alexandria` source. The spec shows neither the success body nor a tool
 * contract; both follow the JS SDK (`AlexandriaScrapeData`, `DiscoveredTool`) and Firecrawl's
 * Alexandria docs.
 */

export const catalogCallSchema = z.strictObject({
  provider: z.string().min(1).max(200),
  capability: z.string().min(1).max(200),
  options: z.record(z.string(), z.unknown()).default({}),
});
export type CatalogCallInput = z.output<typeof catalogCallSchema>;

export const catalogCallsSchema = z.union([catalogCallSchema, z.array(catalogCallSchema).min(1).max(10)]);

const callErrorSchema = z.strictObject({
  code: z.string(),
  message: z.string(),
  status: z.int().optional().describe("The provider's HTTP status, or the status the error would have as a request."),
  chargeId: z.string().optional(),
});

export const catalogCallResultSchema = z.union([
  z.strictObject({
    provider: z.string(),
    capability: z.string(),
    creditsCost: z.int().min(0).describe('Credits this call was billed.'),
    data: z.unknown().describe("What the capability returned (its response contract)."),
    records: z.int().optional(),
    upstreamStatus: z.int().optional().describe("An HTTP provider's status."),
    recordedAt: z.iso.datetime(),
  }),
  z.strictObject({ provider: z.string(), capability: z.string(), error: callErrorSchema }),
]);

export const scrapeCatalogResponseSchema = z.strictObject({
  success: z.literal(true),
  scrape_id: z.uuid().describe('The same on every replay of the x-request-id; also the chargeId of its 409s and 503s.'),
  data: z.strictObject({
    alexandria: z.array(catalogCallResultSchema).describe('One entry per call, in the order sent: data or error.'),
    creditsCost: z.int().min(0).describe('Credits the request was billed (failed calls cost nothing).'),
  }),
});

const optionContractSchema = z.looseObject({ name: z.string(), type: z.string(), required: z.boolean().optional() });

/** A capability as `data.tools` lists it (the JS SDK's DiscoveredTool). */
export const toolContractSchema = z.looseObject({
  id: z.string(),
  provider: z.string(),
  capability: z.string(),
  name: z.string(),
  description: z.string(),
  creditsCost: z.int().optional(),
  perRecord: z.boolean().optional(),
  options: z.array(optionContractSchema).optional(),
  matchedBy: z.array(z.enum(['semantic', 'domain'])).optional(),
  matchedUrls: z.array(z.string()).optional(),
  next: catalogCallSchema.optional(),
});

export const toolDetailSchema = z.enum(['compact', 'summary', 'full']);
