import { z } from 'zod';
import { jobStatusFieldsShape, scrapeDocumentSchema } from './responses';
import { searchWebResultSchema } from './search';
import { httpUrl } from './scrape';
import { changeTrackingOptionsShape } from './formats';

/**
 * Firecrawl's v1 API, as its public v1 OpenAPI document (`firecrawl/firecrawl-docs`,
 * `api-reference/v1-openapi.json`) and the SDKs' v1 classes (`FirecrawlAppV1`, firecrawl-py's
 * `V1FirecrawlApp`) define it. WDS serves v1 as adapters over v2 (apps/api/src/controllers/v1):
 * the fields below are the ones v1 names differently; every other field is a v2 field of the
 * same name and meaning, validated by the v2 schema after translation.
 */

/** v1 `formats`: names only; `json`/`extract` take their options from jsonOptions/extract, `changeTracking` from changeTrackingOptions. */
export const V1_FORMATS = ['markdown', 'html', 'rawHtml', 'links', 'screenshot', 'screenshot@fullPage', 'json', 'extract', 'changeTracking'] as const;

const v1JsonOptions = z.strictObject({
  schema: z.record(z.string(), z.unknown()).optional(),
  systemPrompt: z.string().max(10_000).optional(),
  prompt: z.string().max(10_000).optional(),
});

/** The scrape options v1 spells differently from v2 (scrape, batch scrape, crawl/search/extract `scrapeOptions`). */
export const v1ScrapeFieldsShape = {
  formats: z.array(z.enum(V1_FORMATS, { error: `each v1 format must be one of ${V1_FORMATS.join(', ')}` })).max(32).optional(),
  jsonOptions: v1JsonOptions.optional(),
  /** The JS SDK v1's name for the `extract` format's options. */
  extract: v1JsonOptions.optional(),
  changeTrackingOptions: z.strictObject(changeTrackingOptionsShape).optional(),
  /** false: the PDF is not converted (v2 `parsers: []`). */
  parsePDF: z.boolean().optional(),
};
export const v1ScrapeFieldsSchema = z.looseObject(v1ScrapeFieldsShape);

/** Crawl fields v1 names differently: maxDepth (path depth), allowBackwardLinks (= crawlEntireDomain), ignoreSitemap. */
export const v1CrawlFieldsSchema = z.looseObject({
  maxDepth: z.int().min(0).max(1_000).optional(),
  allowBackwardLinks: z.boolean().optional(),
  ignoreSitemap: z.boolean().optional(),
  scrapeOptions: v1ScrapeFieldsSchema.nullable().optional(),
});

/** Map fields v1 names differently: ignoreSitemap (v1 default true), sitemapOnly, useIndex (firecrawl-py v1). */
export const v1MapFieldsSchema = z.looseObject({
  ignoreSitemap: z.boolean().optional(),
  sitemapOnly: z.boolean().optional(),
  useIndex: z.boolean().optional(),
});

/** Search fields of v1 that v2 has not: `lang` (sent by the JS SDK v1 always) and `filter`; `location` is a string in both. */
export const v1SearchFieldsSchema = z.looseObject({
  lang: z.string().max(35).optional(),
  filter: z.string().max(1_000).optional(),
  scrapeOptions: v1ScrapeFieldsSchema.nullable().optional(),
});

export const v1ExtractFieldsSchema = z.looseObject({ scrapeOptions: v1ScrapeFieldsSchema.nullable().optional() });

/**
 * The v1 request bodies as documented: the fields v1 spells differently; the rest are the v2
 * request's fields (loose here; the v2 schema refuses unknown ones after translation).
 */
const described = <T extends z.ZodRawShape>(shape: T, v2: string) => z.looseObject(shape).describe(`v1 fields; any other field is ${v2}'s, with its meaning.`);
export const v1ScrapeRequestSchema = described({ url: httpUrl, ...v1ScrapeFieldsShape }, 'POST /v2/scrape');
export const v1BatchScrapeRequestSchema = described({ urls: z.array(z.string()), ...v1ScrapeFieldsShape }, 'POST /v2/batch/scrape');
export const v1CrawlRequestSchema = described({ url: httpUrl, ...v1CrawlFieldsSchema.shape }, 'POST /v2/crawl');
export const v1MapRequestSchema = described({ url: httpUrl, ...v1MapFieldsSchema.shape }, 'POST /v2/map');
export const v1SearchRequestSchema = described({ query: z.string(), ...v1SearchFieldsSchema.shape }, 'POST /v2/search');
export const v1ExtractRequestSchema = described({ ...v1ExtractFieldsSchema.shape }, 'POST /v2/extract');

/** A v1 document: the v2 document, with `extract` holding what the `extract` format returned. */
export const v1DocumentSchema = scrapeDocumentSchema.extend({
  extract: z.unknown().optional().describe('The `extract` format (v1): data extracted by the model.'),
});

export const v1ScrapeResponseSchema = z.strictObject({ success: z.literal(true), data: v1DocumentSchema, warning: z.string().optional() });

export const v1JobStatusResponseSchema = z.strictObject({
  success: z.literal(true),
  ...jobStatusFieldsShape,
  // v1 clients loop `while ("next" in status)`: a null next would be fetched, so it is left out instead.
  next: z.string().optional().describe('The next page of documents (`?skip=`); absent on the last page.'),
  data: z.array(v1DocumentSchema),
});

export const v1MapResponseSchema = z.strictObject({ success: z.literal(true), links: z.array(z.string()) });

export const v1SearchResponseSchema = z.strictObject({
  success: z.literal(true),
  data: z.array(searchWebResultSchema),
  warning: z.string().optional(),
});

const billing = { billing_period_start: z.string().nullable(), billing_period_end: z.string().nullable() };
export const v1CreditUsageResponseSchema = z.strictObject({
  success: z.literal(true),
  data: z.strictObject({ remaining_credits: z.number(), plan_credits: z.number(), ...billing }),
});
export const v1TokenUsageResponseSchema = z.strictObject({
  success: z.literal(true),
  data: z.strictObject({ remaining_tokens: z.number(), plan_tokens: z.number(), ...billing }),
});

export type V1ScrapeFields = z.output<typeof v1ScrapeFieldsSchema>;
