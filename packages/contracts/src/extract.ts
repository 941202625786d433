import { z } from 'zod';
import { webhookSchema } from './crawl';
import { scrapeOptionsSchema, type ScrapeOptions } from './scrape';
import { threatProtectionSchema } from './enterprise';

/**
 * POST /v2/extract, as Firecrawl's v2 docs (api-reference/v2-openapi.json) and the JS SDK's
 * `startExtract` define it. Upstream marks the endpoint deprecated in favour of /v2/agent; it
 * keeps working here (the API says so in a `warning` and in Deprecation/Link headers).
 *
 * `urls` are checked one by one by the controller (like batch scrape), so that
 * `ignoreInvalidURLs` can report the bad ones. A URL may end in a wildcard
 * (`https://site/*`, `https://site/docs/*`): it is expanded through the map engine.
 */
export const extractRequestSchema = z
  .strictObject({
    urls: z.array(z.unknown()).max(1_000).optional(),
    prompt: z.string().trim().min(1).max(10_000).optional(),
    schema: z.record(z.string(), z.unknown()).optional(),
    systemPrompt: z.string().trim().min(1).max(10_000).optional(),
    enableWebSearch: z.boolean().default(false),
    showSources: z.boolean().default(false),
    scrapeOptions: scrapeOptionsSchema.nullable().optional(),
    ignoreInvalidURLs: z.boolean().default(true),
    /** Wildcard expansion: subdomains of the URL's host count as the site (map's includeSubdomains). */
    includeSubdomains: z.boolean().default(true),
    /** Wildcard expansion without the site's sitemap (map's sitemap: skip). */
    ignoreSitemap: z.boolean().default(false),
    allowExternalLinks: z.boolean().default(false),
    /** FIRE-1: the agent issue's territory (/v2/agent); refused here with a pointer. */
    agent: z.record(z.string(), z.unknown()).optional(),
    webhook: webhookSchema.nullable().optional(),
    threatProtection: threatProtectionSchema.optional(),
    origin: z.string().max(200).optional(),
    integration: z.string().max(200).nullable().optional(),
  })
  .refine((o) => o.prompt !== undefined || o.schema !== undefined, { message: "extract requires either 'prompt' or 'schema' (or both)", path: ['prompt'] });
export type ExtractRequest = z.output<typeof extractRequestSchema>;

/** What the API writes into extract_jobs.options (once); the activities read it by job id. */
export interface StoredExtractOptions {
  prompt?: string;
  schema?: Record<string, unknown>;
  systemPrompt?: string;
  showSources: boolean;
  /** How every page is fetched: the request's scrapeOptions with markdown as the only format. */
  pageOptions: ScrapeOptions;
  /** Wildcard URLs (`https://site/*`), expanded through map by the first step. */
  wildcards: string[];
  includeSubdomains: boolean;
  ignoreSitemap: boolean;
  /** Pages the job may fetch in all. */
  maxPages: number;
  /** Warnings decided at the request (e.g. options extract does not use), shown with the result. */
  warnings: string[];
}

export const EXTRACT_STATUSES = ['processing', 'completed', 'failed', 'cancelled'] as const;
export type ExtractStatus = (typeof EXTRACT_STATUSES)[number];

/** A wildcard URL (`…/*`, or `*` anywhere in the path): expanded through map before scraping. */
export const isWildcardUrl = (url: string) => {
  try {
    return new URL(url).pathname.includes('*');
  } catch {
    return false;
  }
};

/**
 * The crawl options a model may derive from a crawl `prompt` (POST /v2/crawl with `prompt`, and
 * POST /v2/crawl/params-preview): the fields of Firecrawl's params-preview answer that this
 * crawl takes. Each is validated by the crawl's own schema before use.
 */
export const PROMPT_CRAWL_FIELDS = [
  'includePaths',
  'excludePaths',
  'maxDiscoveryDepth',
  'crawlEntireDomain',
  'allowExternalLinks',
  'allowSubdomains',
  'sitemap',
  'ignoreQueryParameters',
  'ignoreRobotsTxt',
  'robotsUserAgent',
  'deduplicateSimilarURLs',
  'delay',
  'limit',
] as const;
export type PromptCrawlField = (typeof PROMPT_CRAWL_FIELDS)[number];

// ---- responses ----

/** POST /v2/extract. */
export const extractStartedResponseSchema = z.strictObject({
  success: z.literal(true),
  id: z.uuid(),
  url: z.string().describe('Where to poll the job.'),
  invalidURLs: z.array(z.string()).optional().describe('With ignoreInvalidURLs (the default): the entries of urls that were not valid URLs.'),
  warning: z.string().optional().describe('The deprecation notice (extract is succeeded by /v2/agent), and options extract does not use.'),
});

/** GET /v2/extract/{id}. */
export const extractStatusResponseSchema = z.strictObject({
  success: z.literal(true),
  id: z.uuid(),
  status: z.enum(EXTRACT_STATUSES),
  data: z.unknown().describe('The merged answer (conforming to the schema when one was given); [] while processing, as upstream.'),
  sources: z.record(z.string(), z.array(z.string())).optional().describe("With showSources: each value's path (`a.b`, `list[2]`, `$` for the root) → the URLs it came from."),
  error: z.string().optional(),
  warning: z.string().optional().describe('The deprecation notice, and what the answer is missing (pages not fetched or read, a time or credit budget reached).'),
  creditsUsed: z.number().describe('Credits used so far (model tokens, 15 a credit), live while processing.'),
  tokensUsed: z.int().optional().describe('Model tokens the job used, once it has ended.'),
  expiresAt: z.iso.datetime(),
});

/** POST /v2/crawl/params-preview: the URL and the crawl options the prompt turned into (only those set). */
export const crawlParamsPreviewResponseSchema = z.strictObject({
  success: z.literal(true),
  data: z.strictObject({
    url: z.string(),
    includePaths: z.array(z.string()).optional(),
    excludePaths: z.array(z.string()).optional(),
    maxDiscoveryDepth: z.int().optional(),
    crawlEntireDomain: z.boolean().optional(),
    allowExternalLinks: z.boolean().optional(),
    allowSubdomains: z.boolean().optional(),
    sitemap: z.enum(['include', 'skip', 'only']).optional(),
    ignoreQueryParameters: z.boolean().optional(),
    ignoreRobotsTxt: z.boolean().optional(),
    robotsUserAgent: z.string().optional(),
    deduplicateSimilarURLs: z.boolean().optional(),
    delay: z.number().optional(),
    limit: z.int().optional(),
  }),
  warning: z.string().optional(),
});
