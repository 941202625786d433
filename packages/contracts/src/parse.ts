import { z } from 'zod';
import { formatsSchema } from './formats';
import { parserSchema, scrapeOptionsShape } from './scrape';

/**
 * POST /v2/parse: the JSON `options` part of the multipart upload (Firecrawl's ParseOptions).
 * A subset of the scrape options: nothing that needs a URL, a browser or the cache. Unknown
 * fields are rejected like everywhere else.
 */

/** Formats a parse cannot make (browser-only or change tracking): refused with PARSE_UNSUPPORTED_OPTIONS. */
export const PARSE_UNSUPPORTED_FORMATS = ['screenshot', 'changeTracking', 'branding', 'audio', 'video'] as const;

const imageParser = z
  .union([z.literal('image'), z.strictObject({ type: z.literal('image') })])
  .transform(() => ({ type: 'image' as const }));

export const parseParserSchema = z.union([parserSchema, imageParser]);

export const parseOptionsSchema = z.strictObject({
  formats: formatsSchema.default([{ type: 'markdown' }]),
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
  /**
   * Scrape options a parse cannot honour, accepted as the SDKs send them (firecrawl-py always
   * sends `mobile: false`) and refused by parseUnsupportedOption only when they ask for something.
   */
  actions: scrapeOptionsShape.actions,
  waitFor: z.int().min(0).max(300_000).optional(),
  location: scrapeOptionsShape.location,
  mobile: z.boolean().optional(),
  proxy: z.enum(['basic', 'enhanced', 'auto', 'stealth']).optional(),
  auditMetadata: scrapeOptionsShape.auditMetadata,
  zeroDataRetention: scrapeOptionsShape.zeroDataRetention,
  origin: z.string().max(200).optional(),
  integration: z.string().max(200).nullable().optional(),
});

export type ParseOptions = z.output<typeof parseOptionsSchema>;
export type ParseParser = ParseOptions extends { parsers?: (infer P)[] } ? P : never;

const UNSUPPORTED_FORMAT_MESSAGE: Record<(typeof PARSE_UNSUPPORTED_FORMATS)[number], string> = {
  screenshot: 'Parse uploads do not support screenshot output.',
  branding: 'Parse uploads do not support branding output.',
  changeTracking: 'Parse uploads do not support change tracking.',
  audio: 'Parse uploads do not support audio output.',
  video: 'Parse uploads do not support video output.',
};

/**
 * Why a parse cannot do what its options ask (Firecrawl's sentence, answered 400
 * PARSE_UNSUPPORTED_OPTIONS), or null. An option at its do-nothing value (`mobile: false`,
 * `waitFor: 0`, `actions: []`, `proxy: "basic"`) asks for nothing and passes.
 */
export function parseUnsupportedOption(o: ParseOptions): string | null {
  if (o.actions?.length) return 'Parse uploads do not support actions.';
  for (const f of o.formats) {
    if ((PARSE_UNSUPPORTED_FORMATS as readonly string[]).includes(f.type)) return UNSUPPORTED_FORMAT_MESSAGE[f.type as keyof typeof UNSUPPORTED_FORMAT_MESSAGE];
  }
  if (o.waitFor) return 'Parse uploads do not support waitFor.';
  if (o.location !== undefined) return 'Parse uploads do not support location overrides.';
  if (o.mobile) return 'Parse uploads do not support mobile rendering.';
  if (o.proxy && o.proxy !== 'auto' && o.proxy !== 'basic') return 'Parse uploads only support proxy values of auto or basic.';
  return null;
}
