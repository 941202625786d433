import { z } from 'zod';
import { scrapeCatalogResponseSchema, toolContractSchema } from './catalog';
import { JOB_STATUSES } from './crawl';

/**
 * The bodies the API answers, as zod schemas: the source of the response side of
 * `GET /v2/openapi.json` (see openapi.ts). Envelopes are strict — a field added to a response
 * without being added here fails the e2e suite's response check — while page metadata stays
 * open (pages bring their own `og:*`, `twitter:*`, … keys), as in Firecrawl's docs.
 */

/** Every non-2xx answer (spec: Errors, rule 1; packages/errors renders it). */
export const errorBodySchema = z.strictObject({
  success: z.literal(false),
  error: z.string().describe('Identifies the case with the HTTP status (spec: Errors).'),
  code: z.string().optional().describe('Stable machine-readable code, e.g. SCRAPE_TIMEOUT, FEATURE_NOT_AVAILABLE.'),
  details: z.unknown().optional().describe('For validation errors: one entry per field ({code, path, message}).'),
  chargeId: z.string().optional(),
  requiresAction: z.strictObject({
    type: z.string().describe('`accept_terms`: a provider\'s third-party data terms must be accepted first.'),
    terms: z.string().optional().describe('The provider whose terms these are.'),
    version: z.string().optional().describe('The terms version to accept.'),
    url: z.string().optional().describe('Where the terms are published.'),
  }).optional().describe('The step to take first (403 THIRD_PARTY_DATA_TERMS_REQUIRED); the object both official SDKs read. Truthy where the spec tests for `true`.'),
});

const textOrList = z.union([z.string(), z.array(z.string())]);

export const documentMetadataSchema = z.looseObject({
  title: textOrList.optional(),
  description: textOrList.optional(),
  keywords: textOrList.optional(),
  language: textOrList.nullable().optional(),
  sourceURL: z.string().describe('The URL as requested.'),
  url: z.string().describe('The URL after redirects.'),
  statusCode: z.int(),
  contentType: z.string().optional(),
  error: z.string().nullable().optional(),
  scrapeId: z.string(),
  cacheState: z.enum(['hit', 'miss']).optional(),
  cachedAt: z.string().optional(),
  creditsUsed: z.number().optional(),
  proxyUsed: z.enum(['basic', 'stealth']).optional(),
  engine: z.string().optional().describe('What produced the page: http, browser, cache or pdf.'),
  numPages: z.int().optional(),
  totalPages: z.int().optional(),
  /** POST /v2/parse: the uploaded file's name. */
  sourceFile: z.string().optional(),
  concurrencyLimited: z.boolean().optional(),
  concurrencyQueueDurationMs: z.number().optional(),
  politenessWaitMs: z
    .number()
    .optional()
    .describe("Ms the request waited for its site's politeness budget (the deployment's per-origin cap and interval, robots.txt Crawl-delay, a backoff after 429/503), counted in its timeout; only when it waited."),
});

const pdfPage = z.strictObject({ pageNumber: z.int(), markdown: z.string() });

const pdfBlock = z.strictObject({
  id: z.string(),
  type: z.string().describe('title, section_header, text, table, formula, figure, caption, page_number, page_header, page_footer; new types may appear.'),
  label: z.string().nullable(),
  // Fixed-length arrays rather than tuples: same JSON, and tools that predate JSON Schema 2020-12's
  // prefixItems (schemathesis rewrites it to the old array form of items, then rejects that) read them.
  bbox: z.array(z.number()).length(4).nullable().describe('[x0, y0, x1, y1], normalized 0–1.'),
  content: z.string(),
  markdownSpan: z.array(z.int()).length(2).nullable().describe('[start, end) offsets into the markdown.'),
  readingOrder: z.int(),
  source: z.string().nullable(),
  confidence: z.strictObject({ layout: z.number().nullable(), ocr: z.number().nullable() }),
});

const pdfPageBlocks = z.strictObject({
  pageNumber: z.int(),
  width: z.number().nullable(),
  height: z.number().nullable(),
  status: z.enum(['ok', 'partial', 'failed']),
  items: z.array(pdfBlock),
});

const documentActions = z.strictObject({
  screenshots: z.array(z.string()),
  scrapes: z.array(z.strictObject({ url: z.string(), html: z.string() })),
  javascriptReturns: z.array(z.strictObject({ type: z.string(), value: z.unknown() })),
  pdfs: z.array(z.string()),
});

const productPrice = z.strictObject({
  amount: z.number(),
  currency: z.string().regex(/^[A-Z]{3}$/).optional().describe('ISO 4217.'),
  formatted: z.string().optional(),
});

/** The `product` format (spec: product fields; packages/product). */
export const productSchema = z.strictObject({
  title: z.string(),
  brand: z.string().optional(),
  category: z.string().optional().describe('May be a breadcrumb path ("Kitchen > Kettles").'),
  url: z.string().describe('Canonical URL.'),
  description: z.string().optional(),
  variants: z.array(
    z.strictObject({
      id: z.string().optional(),
      sku: z.string().optional(),
      title: z.string().optional(),
      values: z.record(z.string(), z.string()).optional(),
      price: productPrice.optional(),
      sale: z.strictObject({ originalPrice: productPrice }).optional().describe('Present when discounted.'),
      availability: z.strictObject({ inStock: z.boolean(), text: z.string().optional() }),
      images: z.array(z.strictObject({ url: z.string(), alt: z.string().optional() })).optional(),
    }),
  ),
});

const hexColor = z.string().regex(/^#[0-9A-F]{6}$/);

/** The `branding` format (spec: branding fields; packages/browser/src/branding.ts). Nested groups stay open. */
export const brandingSchema = z.looseObject({
  colorScheme: z.enum(['light', 'dark']),
  brandName: z.string().optional(),
  logo: z.string().nullable(),
  colors: z.strictObject({
    primary: hexColor, secondary: hexColor, accent: hexColor, background: hexColor, textPrimary: hexColor,
    textSecondary: hexColor, link: hexColor, success: hexColor, warning: hexColor, error: hexColor,
  }),
  fonts: z.array(z.looseObject({ family: z.string() })),
  typography: z.looseObject({}),
  spacing: z.looseObject({}),
  components: z.looseObject({}),
  icons: z.looseObject({}),
  images: z.strictObject({ logo: z.string().nullable(), favicon: z.string().nullable(), ogImage: z.string().nullable() }),
  animations: z.looseObject({}),
  layout: z.looseObject({}),
  personality: z.strictObject({ tone: z.string(), energy: z.string(), targetAudience: z.string() }).optional(),
});

const menuPrice = productPrice;

/** The `menu` format (the JS SDK's MenuProfile; packages/product README "Menu"). */
export const menuSchema = z.strictObject({
  isMenu: z.boolean(),
  confidence: z.number().min(0).max(1),
  merchant: z.looseObject({ name: z.string(), type: z.string().nullable().optional(), location: z.unknown().optional() }),
  currency: z.string().nullable().optional(),
  sections: z.array(z.strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string().optional(),
    items: z.array(z.strictObject({
      id: z.string(),
      name: z.string(),
      description: z.string().optional(),
      images: z.array(z.strictObject({ url: z.string(), alt: z.string().optional() })),
      price: menuPrice.optional(),
      availability: z.strictObject({ inStock: z.boolean(), text: z.string().optional() }),
      dietary: z.array(z.string()),
      calories: z.number().optional(),
      category: z.enum(['food', 'drink']).nullable(),
      subcategory: z.string().nullable(),
      allergens: z.array(z.string()),
      mealPeriods: z.array(z.string()),
      optionGroups: z.array(z.strictObject({ name: z.string(), role: z.enum(['variation', 'modifier']).nullable(), options: z.array(z.strictObject({ name: z.string(), price: menuPrice.optional() })) })),
      identifiers: z.strictObject({ merchantItemId: z.string().optional() }),
      url: z.string().optional(),
      sourceUrl: z.string(),
    })),
  })),
  sourceUrl: z.string(),
});

/** The `attributes` format: per requested selector, the attribute's values on the matching elements. */
export const attributesSchema = z.array(z.strictObject({ selector: z.string(), attribute: z.string(), values: z.array(z.string()) }));

const diffChange = z.strictObject({
  type: z.enum(['add', 'del', 'normal']),
  add: z.literal(true).optional(),
  del: z.literal(true).optional(),
  normal: z.literal(true).optional(),
  ln: z.int().optional().describe('add: the line in the current version; del: in the previous one.'),
  ln1: z.int().optional().describe('normal: the line in the previous version.'),
  ln2: z.int().optional().describe('normal: the line in the current version.'),
  content: z.string().describe('The line, without the +/-/space marker.'),
});

/** The `git-diff` mode's diff: the unified text and the same hunks parsed (parse-diff's structure, as Firecrawl's docs and JS SDK give it). */
export const changeDiffSchema = z.strictObject({
  text: z.string().describe('Unified diff hunks (`@@ -a,b +c,d @@` …) of the normalized markdown, previous → current.'),
  json: z.strictObject({
    files: z.array(
      z.strictObject({
        from: z.string().nullable(),
        to: z.string().nullable(),
        additions: z.int(),
        deletions: z.int(),
        chunks: z.array(
          z.strictObject({
            content: z.string(),
            oldStart: z.int(),
            oldLines: z.int(),
            newStart: z.int(),
            newLines: z.int(),
            changes: z.array(diffChange),
          }),
        ),
      }),
    ),
  }),
});

/**
 * The `changeTracking` format (spec: changeTracking fields). `diff` is an object `{text, json}`
 * where the spec's table says string: Firecrawl's docs and JS SDK define and read it so.
 */
export const changeTrackingSchema = z.strictObject({
  previousScrapeAt: z.string().nullable().describe('When the version compared with was last scraped; null on the first scrape.'),
  changeStatus: z.enum(['new', 'same', 'changed', 'removed']),
  visibility: z.enum(['visible', 'hidden']).describe('hidden: a crawl reached the page only from memory of earlier crawls (no page links to it now).'),
  diff: changeDiffSchema.optional().describe('git-diff mode, when changed.'),
  json: z.record(z.string(), z.strictObject({ previous: z.unknown(), current: z.unknown() })).optional().describe('json mode, when changed: each schema key\'s previous and current value.'),
});

/** One page: `data` of a scrape, each entry of a crawl/batch status, `data` of a parse. */
export const scrapeDocumentSchema = z.strictObject({
  markdown: z.string().optional(),
  html: z.string().optional(),
  rawHtml: z.string().optional(),
  rawBase64: z.string().optional().describe('The fetched bytes, base64 (PDFs with `parsers: []`).'),
  links: z.array(z.string()).optional(),
  images: z.array(z.string()).optional(),
  screenshot: z.string().optional().describe('A signed link (GET /v2/files/...).'),
  audio: z.string().nullable().optional().describe('The `audio` format: a signed link to the page\'s audio as MP3, valid 1 hour; null, with a `warning`, when the page has none.'),
  video: z.string().nullable().optional().describe('The `video` format: a signed link to the page\'s video (MP4 or WebM), valid 1 hour; null, with a `warning`, when the page has none.'),
  actions: documentActions.optional(),
  pages: z.array(pdfPage).optional(),
  blocks: z.array(pdfPageBlocks).optional(),
  tools: z.array(toolContractSchema).optional().describe("With domainTools: the catalog's tools whose declared domains cover the page's (possibly none)."),
  json: z.unknown().optional().describe('The `json` format: data extracted by the model, conforming to the request\'s schema.'),
  summary: z.string().optional().describe('The `summary` format.'),
  answer: z.string().optional().describe('The `question` format (or the deprecated `query`): the answer.'),
  highlights: z.string().optional().describe('The `highlights` format: verbatim passages of the page.'),
  product: productSchema.nullable().optional().describe('The `product` format: null, with a `warning`, when the page has no product data.'),
  branding: brandingSchema.nullable().optional().describe('The `branding` format.'),
  menu: menuSchema.optional().describe('The `menu` format: absent, with a `warning`, when the page is not a menu.'),
  attributes: attributesSchema.optional().describe('The `attributes` format.'),
  changeTracking: changeTrackingSchema.optional().describe('The `changeTracking` format; absent (with a `warning`) when the fetch failed and nothing was compared.'),
  warning: z.string().optional(),
  metadata: documentMetadataSchema,
});

/** POST /v2/parse: an upload has no URL, status or scrape id. */
export const parseDocumentSchema = scrapeDocumentSchema.extend({
  metadata: documentMetadataSchema.partial({ sourceURL: true, url: true, statusCode: true, scrapeId: true }),
});

export const scrapeResponseSchema = z.strictObject({ success: z.literal(true), data: scrapeDocumentSchema });

/** POST /v2/scrape answers a page (URL mode) or the calls' results (catalog mode). */
export const scrapeOrCatalogResponseSchema = z.union([scrapeResponseSchema, scrapeCatalogResponseSchema]);

/** GET /v2/scrape/{id}: the document, or only the state while the scrape runs. */
export const scrapeStatusResponseSchema = z.union([
  scrapeResponseSchema,
  z.strictObject({ success: z.literal(true), status: z.literal('scraping') }),
]);

export const jobStartedResponseSchema = z.strictObject({
  success: z.literal(true),
  id: z.uuid(),
  url: z.string().describe('Where to poll the job.'),
});

export const batchStartedResponseSchema = jobStartedResponseSchema.extend({
  invalidURLs: z.array(z.string()).optional().describe('With ignoreInvalidURLs (the default): the entries of urls that were not valid URLs.'),
});

/** Counters of a crawl or batch job, shared by GET and the WebSocket messages. */
export const jobStatusFieldsShape = {
  status: z.enum(JOB_STATUSES),
  total: z.int(),
  completed: z.int(),
  creditsUsed: z.number(),
  expiresAt: z.iso.datetime(),
  createdAt: z.iso.datetime(),
  completedAt: z.iso.datetime().optional(),
  duration: z.number().describe('Seconds from createdAt to completedAt (or to now while running).'),
  backoff: z
    .strictObject({ pages: z.int(), retryAt: z.iso.datetime() })
    .optional()
    .describe("While pages wait for their site's backoff (it answered 429/503): how many, and the earliest time one is retried. They are not failed; GET …/errors lists them with code ORIGIN_BACKOFF."),
};

export const jobStatusResponseSchema = z.strictObject({
  success: z.literal(true),
  ...jobStatusFieldsShape,
  next: z.string().nullable().describe('The next page of documents (`?skip=`), null when this is the last.'),
  data: z.array(scrapeDocumentSchema),
});

export const jobCancelledResponseSchema = z.strictObject({ success: z.literal(true), status: z.literal('cancelled') });

export const jobErrorsResponseSchema = z.strictObject({
  success: z.literal(true),
  errors: z.array(
    z.strictObject({
      id: z.string(),
      url: z.string(),
      error: z.string(),
      timestamp: z.iso.datetime().nullable(),
      code: z.string().optional().describe('`ORIGIN_BACKOFF`: the page is not failed but waits for its site\'s backoff (the site answered 429/503) and is retried.'),
    }),
  ),
  robotsBlocked: z.array(z.string()),
  duplicates: z
    .array(z.strictObject({ url: z.string(), duplicateOf: z.string().nullable() }))
    .optional()
    .describe('WDS: pages of a crawl not stored because they repeat an earlier page (the same text, or the same `<link rel="canonical">`); `duplicateOf` is that page\'s URL. Present only when there are some.'),
});

export const activeCrawlsResponseSchema = z.strictObject({
  success: z.literal(true),
  crawls: z.array(z.strictObject({ id: z.uuid(), teamId: z.string(), url: z.string().nullable(), options: z.record(z.string(), z.unknown()) })),
});

export const mapResponseSchema = z.strictObject({
  success: z.literal(true),
  id: z.uuid(),
  links: z.array(z.strictObject({ url: z.string(), title: z.string().optional(), description: z.string().optional() })),
});

export const creditUsageResponseSchema = z.strictObject({
  success: z.literal(true),
  data: z.strictObject({
    remainingCredits: z.number(),
    planCredits: z.number(),
    billingPeriodStart: z.string().nullable(),
    billingPeriodEnd: z.string().nullable(),
  }),
});

/** GET /v2/team/token-usage: the same balance in extract tokens (Firecrawl bills extract by tokens). */
export const tokenUsageResponseSchema = z.strictObject({
  success: z.literal(true),
  data: z.strictObject({
    remainingTokens: z.number(),
    planTokens: z.number(),
    billingPeriodStart: z.string().nullable(),
    billingPeriodEnd: z.string().nullable(),
  }),
});

/** GET /v2/parse/formats: the file formats POST /v2/parse accepts (Firecrawl's shape). */
export const parseFormatsResponseSchema = z.strictObject({
  success: z.literal(true),
  data: z.strictObject({
    formats: z.array(
      z.strictObject({
        format: z.string(),
        kind: z.enum(['document', 'image']),
        extensions: z.array(z.string()),
        mimeTypes: z.array(z.string()),
        available: z.boolean(),
      }),
    ),
  }),
});

export const queueStatusResponseSchema = z.strictObject({
  success: z.literal(true),
  jobsInQueue: z.int(),
  activeJobsInQueue: z.int(),
  waitingJobsInQueue: z.int(),
  maxConcurrency: z.int(),
  mostRecentSuccess: z.iso.datetime().nullable(),
});

export const concurrencyCheckResponseSchema = z.strictObject({
  success: z.literal(true),
  concurrency: z.int(),
  maxConcurrency: z.int(),
});

export const healthResponseSchema = z.strictObject({ status: z.literal('ok') });
export const readyResponseSchema = z.strictObject({ status: z.enum(['ready', 'not ready']), postgres: z.boolean(), temporal: z.boolean() });

/**
 * WebSocket `/v2/crawl/{id}` and `/v2/batch/scrape/{id}`: `catchup` first (status and the
 * documents so far), `document` per new page, `status` when counters move, then `done`
 * (completed) or a last `status` (failed/cancelled) before the close.
 */
const streamSnapshot = z.strictObject({ ...jobStatusFieldsShape, data: z.array(scrapeDocumentSchema) });
export const jobStreamMessageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('catchup'), data: streamSnapshot }),
  z.strictObject({ type: z.literal('document'), data: scrapeDocumentSchema }),
  z.strictObject({ type: z.literal('status'), data: streamSnapshot }),
  z.strictObject({ type: z.literal('done'), data: streamSnapshot }),
]);
