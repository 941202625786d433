import { z } from 'zod';
import { formatsSchema } from './formats';
import { parserSchema, scrapeOptionsShape } from './scrape';

/**
 * POST /v2/parse: the JSON `options` part of the multipart upload (Firecrawl's ParseOptions).
 * A subset of the scrape options: nothing that needs a URL, a browser or the cache. Unknown
 * fields are rejected like everywhere else.
 */

/** Formats the SDK itself refuses for parse (browser-only or change tracking). */
export const PARSE_UNSUPPORTED_FORMATS = ['screenshot', 'changeTracking', 'branding', 'audio', 'video'] as const;

const imageParser = z
  .union([z.literal('image'), z.strictObject({ type: z.literal('image') })])
  .transform(() => ({ type: 'image' as const }));

export const parseParserSchema = z.union([parserSchema, imageParser]);

export const parseOptionsSchema = z.strictObject({
  formats: formatsSchema.default([{ type: 'markdown' }]).superRefine((formats, ctx) => {
    formats.forEach((f, i) => {
      if ((PARSE_UNSUPPORTED_FORMATS as readonly string[]).includes(f.type)) {
        ctx.addIssue({ code: 'custom', path: [i], message: `parse does not support the '${f.type}' format` });
      }
    });
  }),
  onlyMainContent: scrapeOptionsShape.onlyMainContent,
  onlyCleanContent: scrapeOptionsShape.onlyCleanContent,
  includeTags: scrapeOptionsShape.includeTags,
  excludeTags: scrapeOptionsShape.excludeTags,
  /** Accepted for compatibility; parsing an upload makes no outbound request. */
  headers: scrapeOptionsShape.headers,
  /** Firecrawl's parse default is 30 s (scrape's is 60 s). */
  timeout: z.int().min(1_000).max(300_000).default(30_000),
  parsers: z.array(parseParserSchema).max(5).optional(),
  skipTlsVerification: scrapeOptionsShape.skipTlsVerification,
  removeBase64Images: scrapeOptionsShape.removeBase64Images,
  blockAds: scrapeOptionsShape.blockAds,
  fastMode: scrapeOptionsShape.fastMode,
  redactPII: scrapeOptionsShape.redactPII,
  proxy: z.enum(['basic', 'auto']).optional(),
  auditMetadata: scrapeOptionsShape.auditMetadata,
  zeroDataRetention: scrapeOptionsShape.zeroDataRetention,
  origin: z.string().max(200).optional(),
  integration: z.string().max(200).nullable().optional(),
});

export type ParseOptions = z.output<typeof parseOptionsSchema>;
export type ParseParser = ParseOptions extends { parsers?: (infer P)[] } ? P : never;
