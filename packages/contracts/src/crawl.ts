import { z } from 'zod';
// The pattern compiler alone (not the rest of the crawl engine): re2js and nothing else.
import { checkPathPatterns, PATH_PATTERN_LIMITS } from '@wds/crawl/path-patterns';
import { checkCrossFieldRules, httpHeaders, httpUrl, locationSchema, scrapeOptionsSchema, scrapeOptionsShape } from './scrape';
import { auditMetadataSchema, threatProtectionSchema } from './enterprise';

/** Crawl, batch scrape and map requests, as Firecrawl's v2 docs and JS SDK define them. */

/**
 * includePaths / excludePaths: regular expressions, compiled (once, for the whole request) by
 * the engine that will match them (`checkPathPatterns`): a pattern it refuses, or over the caps,
 * is a 400 naming the pattern.
 */
const pathPatterns = z.array(z.string().min(1).max(PATH_PATTERN_LIMITS.maxLength)).max(PATH_PATTERN_LIMITS.maxCount).nullable().optional();

export const WEBHOOK_EVENTS = ['started', 'page', 'completed', 'failed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A job's `webhook`: a URL, or `{url, headers?, metadata?, events?}` with the job kind's event names. */
export function webhookSchemaOf<const E extends readonly [string, ...string[]]>(events: E) {
  return z
    .union([
      httpUrl,
      z.strictObject({
        url: httpUrl,
        headers: httpHeaders.optional(),
        metadata: z.record(z.string(), z.unknown()).optional(),
        events: z.array(z.enum(events)).optional(),
      }),
    ])
    .transform((w) => (typeof w === 'string' ? { url: w } : w));
}

export const webhookSchema = webhookSchemaOf(WEBHOOK_EVENTS);
export type WebhookConfig = z.output<typeof webhookSchema>;

const clientTags = {
  origin: z.string().max(200).optional(),
  integration: z.string().max(200).nullable().optional(),
};

export const crawlRequestSchema = z.strictObject({
  url: httpUrl,
  prompt: z.string().max(10_000).nullable().optional(),
  excludePaths: pathPatterns,
  includePaths: pathPatterns,
  maxDiscoveryDepth: z.int().min(0).max(1_000).nullable().optional(),
  sitemap: z.enum(['skip', 'include', 'only']).default('include'),
  ignoreQueryParameters: z.boolean().default(false),
  deduplicateSimilarURLs: z.boolean().optional(),
  regexOnFullURL: z.boolean().default(false),
  limit: z.int().min(1).max(1_000_000).nullable().optional().transform((v) => v ?? 10_000),
  crawlEntireDomain: z.boolean().default(false),
  allowExternalLinks: z.boolean().default(false),
  allowSubdomains: z.boolean().default(false),
  ignoreRobotsTxt: z.boolean().default(false),
  robotsUserAgent: z.string().min(1).max(500).nullable().optional(),
  delay: z.number().min(0).max(3_600).nullable().optional(),
  maxConcurrency: z.int().min(1).max(1_000).nullable().optional(),
  webhook: webhookSchema.nullable().optional(),
  scrapeOptions: scrapeOptionsSchema.nullable().optional().transform((v) => v ?? scrapeOptionsSchema.parse({})),
  zeroDataRetention: z.boolean().default(false),
  ...clientTags,
}).superRefine((o, ctx) => {
  for (const issue of checkPathPatterns(o)) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message, input: o[issue.path[0]] });
});
export type CrawlRequest = z.output<typeof crawlRequestSchema>;

/** Batch scrape: scrape options sit at the top level next to `urls`. URLs are validated one by one by the controller. */
export const batchScrapeRequestSchema = z
  .strictObject({
    urls: z.array(z.unknown()).min(1, 'urls must contain at least one URL').max(100_000),
    webhook: webhookSchema.nullable().optional(),
    maxConcurrency: z.int().min(1).max(1_000).nullable().optional(),
    ignoreInvalidURLs: z.boolean().default(true),
    appendToId: z.uuid().nullable().optional(),
    ...scrapeOptionsShape,
    ...clientTags,
  })
  .superRefine(checkCrossFieldRules);
export type BatchScrapeRequest = z.output<typeof batchScrapeRequestSchema>;

export const mapRequestSchema = z.strictObject({
  url: httpUrl,
  search: z.string().max(1_000).optional(),
  sitemap: z.enum(['skip', 'include', 'only']).default('include'),
  includeSubdomains: z.boolean().default(true),
  ignoreQueryParameters: z.boolean().default(true),
  ignoreCache: z.boolean().default(false),
  limit: z.int().min(1).max(100_000).default(5_000),
  timeout: z.int().min(1_000).max(300_000).optional(),
  location: locationSchema.optional(),
  threatProtection: threatProtectionSchema.optional(),
  auditMetadata: auditMetadataSchema.optional(),
  ...clientTags,
});
export type MapRequest = z.output<typeof mapRequestSchema>;

export const JOB_STATUSES = ['scraping', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const crawlParamsPreviewSchema = z.strictObject({ url: httpUrl, prompt: z.string().min(1).max(10_000), ...clientTags });
