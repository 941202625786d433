import { z } from 'zod';
import { actionsSchema } from './actions';
import { catalogCallsSchema, toolDetailSchema, type CatalogCallInput } from './catalog';
import { formatsSchema, type FormatObject } from './formats';
import { auditMetadataSchema, threatProtectionSchema } from './enterprise';

/** The spec's Scrape request table, field by field (URL mode). */
export const TWO_DAYS_MS = 172_800_000;
export const TWO_YEARS_MS = 2 * 365 * 24 * 3600 * 1000;

export const httpUrl = z
  .string({ error: 'url is required' })
  .trim()
  .min(1, 'url is required')
  .max(8_192)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
    } catch {
      return false;
    }
  }, 'url must be an absolute http(s) URL');

const pdfParser = z.strictObject({
  type: z.literal('pdf'),
  mode: z.enum(['fast', 'auto', 'ocr']).default('auto'),
  maxPages: z.int().min(1).max(10_000).optional(),
  pages: z.boolean().default(false),
  /** Deprecated alias of `pages` that the SDK documents as still accepted. */
  pageMarkdown: z.boolean().optional(),
  blocks: z.boolean().default(false),
  pageMarkers: z.boolean().default(false),
});

export const parserSchema = z
  .union([z.literal('pdf'), pdfParser])
  .transform((p) => (p === 'pdf' ? pdfParser.parse({ type: 'pdf' }) : { ...p, pages: p.pages || p.pageMarkdown === true }));

export const locationSchema = z.strictObject({
  country: z.string().regex(/^[A-Z]{2}$/, 'country must be an ISO 3166-1 alpha-2 code in upper case').default('US'),
  languages: z.array(z.string().min(2).max(35).regex(/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/, 'invalid locale tag')).max(20).optional(),
});

const redactPIIOptions = z.strictObject({
  mode: z.enum(['accurate', 'aggressive', 'fast']).optional(),
  entities: z.array(z.enum(['PERSON', 'EMAIL', 'PHONE', 'LOCATION', 'FINANCIAL', 'SECRET'])).optional(),
  /** Firecrawl's three, plus `hash`: a keyed token per value (packages/pii README). */
  replaceStyle: z.enum(['tag', 'mask', 'remove', 'hash']).optional(),
});

const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * An HTTP field value (RFC 9110 §5.5): tab, space, visible ASCII and obs-text (Latin-1). Anything else
 * (line breaks and other control characters, characters beyond U+00FF) cannot go on the wire: the fetch
 * would fail later with a connection error (schemathesis found that as a 502), so it is a 400 here.
 */
export const httpHeaderValue = z
  .string()
  .max(8_192)
  // A pattern (not a refine), so the OpenAPI document states it too.
  .regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'header values must be tab, space, printable ASCII or Latin-1 characters (no line breaks or other control characters)');

/** Request headers someone asks us to send (scrape `headers`, webhook `headers`, catalog providers). */
export const httpHeaders = z.record(z.string().regex(headerName, 'invalid header name'), httpHeaderValue);

/** Scrape options shared by scrape, crawl scrapeOptions and batch scrape. */
export const scrapeOptionsShape = {
  formats: formatsSchema.default([{ type: 'markdown' }]),
  onlyMainContent: z.boolean().default(true),
  onlyCleanContent: z.boolean().default(false),
  includeTags: z.array(z.string().min(1).max(500)).max(100).optional(),
  excludeTags: z.array(z.string().min(1).max(500)).max(100).optional(),
  maxAge: z.int().min(0).optional(),
  minAge: z.int().min(0).optional(),
  headers: httpHeaders.optional(),
  waitFor: z.int().min(0).max(300_000).default(0),
  mobile: z.boolean().default(false),
  skipTlsVerification: z.boolean().default(true),
  timeout: z.int().min(1_000).max(300_000).default(60_000),
  parsers: z.array(parserSchema).max(5).optional(),
  actions: actionsSchema.optional(),
  location: locationSchema.optional(),
  removeBase64Images: z.boolean().default(true),
  blockAds: z.boolean().default(true),
  proxy: z.enum(['basic', 'enhanced', 'auto', 'stealth']).default('auto'),
  storeInCache: z.boolean().default(true),
  lockdown: z.boolean().default(false),
  redactPII: z.union([z.boolean(), redactPIIOptions]).default(false),
  profile: z.strictObject({ name: z.string().min(1).max(128), saveChanges: z.boolean().default(true) }).optional(),
  threatProtection: threatProtectionSchema.optional(),
  auditMetadata: auditMetadataSchema.optional(),
  zeroDataRetention: z.boolean().default(false),
  fastMode: z.boolean().default(false),
};

const scrapeOptionsObject = z.strictObject(scrapeOptionsShape);

export function checkCrossFieldRules(o: { waitFor: number; timeout: number }, ctx: z.RefinementCtx) {
  if (o.waitFor > o.timeout / 2) {
    ctx.addIssue({ code: 'custom', path: ['waitFor'], message: 'waitFor must not exceed half of timeout' });
  }
}

export const scrapeOptionsSchema = scrapeOptionsObject.superRefine(checkCrossFieldRules);

/** Sibling keys clients add to every body (the JS SDK sends `origin: "js-sdk@x"`). */
const clientTags = {
  origin: z.string().max(200).optional(),
  integration: z.string().max(200).nullable().optional(),
};

export const scrapeUrlRequestSchema = z
  .strictObject({
    url: httpUrl,
    ...scrapeOptionsShape,
    ...clientTags,
    domainTools: z.boolean().default(false),
    toolDetail: toolDetailSchema.optional(),
  })
  .superRefine(checkCrossFieldRules);

/**
 * Catalog mode: the call(s) plus timeout/origin/integration only (spec rule 1). `catalog` is the
 * spec's name; `alexandria` is what the JS SDK sends (`firecrawl.scrape({alexandria})`): either,
 * not both.
 */
export const scrapeCatalogRequestSchema = z
  .strictObject({
    catalog: catalogCallsSchema.optional(),
    alexandria: catalogCallsSchema.optional().describe("The JS SDK's name for `catalog`."),
    timeout: z.int().min(1_000).max(300_000).default(60_000),
    ...clientTags,
  })
  .superRefine((o, ctx) => {
    if ((o.catalog === undefined) === (o.alexandria === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['catalog'], message: 'send the calls as either catalog or alexandria (one of them)' });
    }
  });

/** The calls of a catalog-mode request, always as a list. */
export function catalogCallsOf(o: ScrapeCatalogRequest): CatalogCallInput[] {
  const c = o.catalog ?? o.alexandria!;
  return Array.isArray(c) ? c : [c];
}

export type ScrapeOptions = z.output<typeof scrapeOptionsObject>;
export type ScrapeUrlRequest = z.output<typeof scrapeUrlRequestSchema>;
export type ScrapeCatalogRequest = z.output<typeof scrapeCatalogRequestSchema>;
export type PdfParserOptions = z.output<typeof pdfParser>;
export type { FormatObject };

/** Effective maxAge: the spec's default, or 2 years under lockdown. */
export function effectiveMaxAge(o: Pick<ScrapeOptions, 'maxAge' | 'lockdown'>): number {
  return o.maxAge ?? (o.lockdown ? TWO_YEARS_MS : TWO_DAYS_MS);
}

/** Zero data retention, or lockdown (which the spec treats as ZDR): nothing of the request may outlive its answer. */
export function keepsNoData(o: Pick<ScrapeOptions, 'zeroDataRetention' | 'lockdown'>): boolean {
  return o.zeroDataRetention || o.lockdown;
}

/** Sensitive parameters force storeInCache off (spec: actions, headers). */
export function mayStoreInCache(o: Pick<ScrapeOptions, 'storeInCache' | 'headers' | 'actions' | 'zeroDataRetention' | 'lockdown'>): boolean {
  return o.storeInCache && !o.headers && !o.actions?.length && !keepsNoData(o);
}

/**
 * Firecrawl's published price of zero data retention: +1 credit per scraped page (docs: Billing,
 * "Additional credit costs for scrape options"). Lockdown is ZDR already and its own price
 * waives it (docs: Lockdown).
 */
export const ZDR_CREDITS_PER_PAGE = 1;
export function zdrCredits(o: Pick<ScrapeOptions, 'zeroDataRetention' | 'lockdown'>): number {
  return o.zeroDataRetention && !o.lockdown ? ZDR_CREDITS_PER_PAGE : 0;
}
