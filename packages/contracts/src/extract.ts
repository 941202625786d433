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
  /** enableWebSearch: what the seed step searches for, and how many result pages join the frontier. */
  webSearch?: { query: string; limit: number } | null;
}

/** Result pages of extract's web search that join its frontier (within the job's page limit). */
export const EXTRACT_WEB_SEARCH_RESULTS = 5;

/**
 * Words of an extraction request that say what to do rather than what it is about: left out of
 * its web search query (a search engine, and the own index which needs every word of a plain
 * query, would look for them too). English only; other languages' words pass through.
 */
const INSTRUCTION_WORDS = new Set(
  (
    'a an the and or of for from to in on at by with about into as is are was were be been it its this that these those ' +
    'me my we our us you your their them they he she his her all any each every some more most other such than then there here ' +
    'what which who whom whose when where why how please can could would should will shall may might must do does did ' +
    'extract extracting find get give gather collect retrieve return list show tell provide identify look search scrape read ' +
    'data details detail information info page pages website websites site sites web url urls link links json object field fields schema value values'
  ).split(' '),
);

/**
 * extract's web search query, from its prompt, else its schema's property names (and their
 * titles): the request's own words without instruction words, punctuation and duplicates, at
 * most 12. '' when nothing is left to search for (the API's 400).
 */
export function webSearchQuery(prompt: string | undefined, schema: Record<string, unknown> | undefined): string {
  const text = prompt ?? schemaWords(schema).join(' ');
  const seen = new Set<string>();
  const words: string[] = [];
  for (const raw of text.split(/[^\p{L}\p{N}'’&+.-]+/u)) {
    const w = raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    const key = w.toLowerCase();
    if (!w || INSTRUCTION_WORDS.has(key) || seen.has(key)) continue;
    seen.add(key);
    words.push(w);
    if (words.length === 12) break;
  }
  return words.join(' ');
}

/** Property names (camelCase and snake_case split into words) and titles of a JSON Schema, depth first. */
function schemaWords(schema: unknown, depth = 0): string[] {
  if (!schema || typeof schema !== 'object' || depth > 4) return [];
  const s = schema as { properties?: Record<string, unknown>; items?: unknown; title?: unknown };
  const out: string[] = typeof s.title === 'string' ? [s.title] : [];
  for (const [name, sub] of Object.entries(s.properties ?? {})) {
    out.push(name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' '));
    out.push(...schemaWords(sub, depth + 1));
  }
  if (s.items) out.push(...schemaWords(s.items, depth + 1));
  return out;
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
