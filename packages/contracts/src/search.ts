import { z } from 'zod';
import { scrapeDocumentSchema } from './responses';
import { scrapeOptionsSchema } from './scrape';
import { threatProtectionSchema } from './enterprise';

/**
 * POST /v2/search, as Firecrawl's v2 docs and `@mendable/firecrawl-js`'s `search()` define it.
 * `tbs` is read by the API (packages/search parseTbs) so its errors name the bad part.
 */

export const SEARCH_SOURCE_TYPES = ['web', 'news', 'images'] as const;
export const SEARCH_CATEGORY_TYPES = ['github', 'research', 'pdf'] as const;

const categoryType = z.enum(SEARCH_CATEGORY_TYPES, { error: "each category must be 'github', 'research' or 'pdf'" });

const tbsString = z.string().trim().min(1).max(200);
const locationString = z.string().trim().min(1).max(200);

/** A source as a string or an object; a web source object may carry its own tbs and location. */
/**
 * `alexandria` (Firecrawl's catalogue of data providers) is a source the SDKs know: it is accepted
 * here and refused by the API with Firecrawl's 403 for a team without the catalogue, on which
 * firecrawl-mcp falls back to a web search.
 */
const sourceSchema = z.union([
  z.enum([...SEARCH_SOURCE_TYPES, 'alexandria'], { error: "each source must be 'web', 'news' or 'images'" }),
  z.strictObject({ type: z.literal('web'), tbs: tbsString.optional(), location: locationString.optional() }),
  z.strictObject({ type: z.enum(['news', 'images', 'alexandria'], { error: "each source must be 'web', 'news' or 'images'" }) }),
], { error: "each source must be 'web', 'news' or 'images' (or an object with that type)" });

const categorySchema = z.union([categoryType, z.strictObject({ type: categoryType })], { error: "each category must be 'github', 'research' or 'pdf' (or an object with that type)" });

/** A hostname as Firecrawl documents includeDomains/excludeDomains: no scheme, no path. */
const domain = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(253)
  .regex(/^(\*\.)?([a-z0-9-]{1,63}\.)*[a-z0-9-]{1,63}$/, 'domains are hostnames only, without protocol or path (example.com)')
  .transform((d) => d.replace(/^\*\./, '').replace(/^www\./, ''));

export const searchRequestSchema = z
  .strictObject({
    query: z.string({ error: 'query is required' }).trim().min(1, 'query must not be empty').max(500, 'query must be at most 500 characters'),
    limit: z.int().min(1).max(100).default(10),
    sources: z.array(sourceSchema).min(1, 'sources must name at least one source').max(3).optional(),
    categories: z.array(categorySchema).max(3).optional(),
    includeDomains: z.array(domain).max(100).optional(),
    excludeDomains: z.array(domain).max(100).optional(),
    tbs: tbsString.optional(),
    location: locationString.optional(),
    country: z.string().regex(/^[A-Za-z]{2}$/, 'country must be an ISO 3166-1 alpha-2 code (US)').transform((c) => c.toUpperCase()).optional(),
    safe: z.boolean().optional(),
    timeout: z.int().min(1_000, 'timeout must be at least 1000 ms').max(300_000).default(60_000),
    ignoreInvalidURLs: z.boolean().default(false),
    highlights: z.boolean().default(true),
    enterprise: z.array(z.enum(['default', 'anon', 'zdr'])).max(3).optional(),
    scrapeOptions: scrapeOptionsSchema.optional(),
    threatProtection: threatProtectionSchema.optional(),
    domainTools: z.boolean().default(false),
    toolDetail: z.enum(['compact', 'summary', 'full']).optional(),
    origin: z.string().max(200).optional(),
    integration: z.string().max(200).nullable().optional(),
  })
  .superRefine((o, ctx) => {
    if (o.includeDomains?.length && o.excludeDomains?.length) {
      ctx.addIssue({ code: 'custom', path: ['includeDomains'], message: 'includeDomains and excludeDomains cannot both be specified' });
    }
    const types = (o.sources ?? []).map((s) => (typeof s === 'string' ? s : s.type));
    const dup = types.find((t, i) => types.indexOf(t) !== i);
    if (dup) ctx.addIssue({ code: 'custom', path: ['sources'], message: `source '${dup}' is listed twice` });
  })
  .transform((o) => {
    const all = (o.sources ?? ['web']).map((s) => (typeof s === 'string' ? { type: s } : s)) as { type: (typeof SEARCH_SOURCE_TYPES)[number] | 'alexandria'; tbs?: string; location?: string }[];
    const sources = all.filter((s): s is { type: (typeof SEARCH_SOURCE_TYPES)[number] } => s.type !== 'alexandria');
    const web = sources.find((s) => s.type === 'web') as { tbs?: string; location?: string } | undefined;
    return {
      ...o,
      sources: sources.map((s) => s.type),
      /** The request named the alexandria source (the API refuses it). */
      alexandria: all.length > sources.length,
      categories: [...new Set((o.categories ?? []).map((c) => (typeof c === 'string' ? c : c.type)))],
      // A web source object's tbs/location win over the top-level ones (they apply to web only).
      tbs: web?.tbs ?? o.tbs,
      location: web?.location ?? o.location,
    };
  });
export type SearchRequest = z.output<typeof searchRequestSchema>;

// ---- Response (the OpenAPI document's search response; responses.ts style: strict envelopes) ----

/** With scrapeOptions a result also carries its page's document fields (metadata among them). */
const scraped = scrapeDocumentSchema.partial().shape;

export const searchWebResultSchema = z.strictObject({
  ...scraped,
  url: z.string(),
  title: z.string().optional(),
  description: z.string().optional().describe('The matching passage (highlights), else the page or provider description.'),
  position: z.int().optional(),
  category: z.enum(SEARCH_CATEGORY_TYPES).optional().describe('The category the result belongs to, when categories were asked for.'),
});
export const searchNewsResultSchema = z.strictObject({
  ...scraped,
  url: z.string().optional(),
  title: z.string().optional(),
  snippet: z.string().optional(),
  date: z.string().optional(),
  imageUrl: z.string().optional(),
  position: z.int().optional(),
  category: z.enum(SEARCH_CATEGORY_TYPES).optional(),
});
export const searchImageResultSchema = z.strictObject({
  ...scraped,
  url: z.string().optional(),
  title: z.string().optional(),
  imageUrl: z.string().optional(),
  imageWidth: z.int().optional(),
  imageHeight: z.int().optional(),
  position: z.int().optional(),
});

export const searchResponseSchema = z.strictObject({
  success: z.literal(true),
  data: z.strictObject({
    web: z.array(searchWebResultSchema).optional(),
    news: z.array(searchNewsResultSchema).optional(),
    images: z.array(searchImageResultSchema).optional(),
  }).describe('Only the requested sources are present.'),
  warning: z.string().optional().describe('Why results may be missing: failing SearXNG engines, a source a provider could not answer, results not scraped in time.'),
  id: z.uuid(),
  creditsUsed: z.int().describe('2 per 10 results, plus the credits of scraping them.'),
});
export type SearchResponse = z.output<typeof searchResponseSchema>;
