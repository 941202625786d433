import { z } from 'zod';

/**
 * `formats` entries as Firecrawl's v2 docs and JS SDK define them: a bare name or a
 * `{type, ...}` object. Everything is normalised to the object form.
 */
export const SIMPLE_FORMATS = [
  'markdown', 'html', 'rawHtml', 'links', 'images', 'screenshot', 'summary', 'changeTracking',
  'branding', 'product', 'menu', 'audio', 'video',
] as const;

const viewport = z.strictObject({
  width: z.int().min(1).max(7680),
  height: z.int().min(1).max(7680),
});

const simpleObject = z.strictObject({ type: z.enum(SIMPLE_FORMATS.filter((f) => f !== 'screenshot' && f !== 'changeTracking') as [string, ...string[]]) });

const jsonFormat = z
  .strictObject({
    type: z.literal('json'),
    prompt: z.string().min(1).max(10_000).optional(),
    schema: z.record(z.string(), z.unknown()).optional(),
    checkPromptInjection: z.boolean().optional(),
  })
  .refine((f) => f.prompt !== undefined || f.schema !== undefined, {
    message: "json format requires either 'prompt' or 'schema' (or both)",
  });

const screenshotFormat = z.strictObject({
  type: z.literal('screenshot'),
  fullPage: z.boolean().optional(),
  quality: z.int().min(1).max(100).optional(),
  viewport: viewport.optional(),
});

/** The changeTracking format's options (v1 sends them apart, as changeTrackingOptions). */
export const changeTrackingOptionsShape = {
  modes: z.array(z.enum(['git-diff', 'json'])).optional(),
  schema: z.record(z.string(), z.unknown()).optional(),
  prompt: z.string().max(10_000).optional(),
  tag: z.string().max(256).nullable().optional(),
};
const changeTrackingFormat = z.strictObject({ type: z.literal('changeTracking'), ...changeTrackingOptionsShape });

const attributesFormat = z.strictObject({
  type: z.literal('attributes'),
  selectors: z
    .array(z.strictObject({ selector: z.string().trim().min(1).max(500), attribute: z.string().trim().min(1).max(200).regex(/^[^\s"'>/=]+$/, 'an HTML attribute name') }))
    .min(1)
    .max(100),
});

const questionFormat = z.strictObject({ type: z.literal('question'), question: z.string().trim().min(1).max(10_000) });
const highlightsFormat = z.strictObject({ type: z.literal('highlights'), query: z.string().trim().min(1).max(10_000) });
const queryFormat = z.strictObject({
  type: z.literal('query'),
  prompt: z.string().trim().min(1).max(10_000),
  mode: z.enum(['freeform', 'directQuote']).optional(),
});

export const formatObject = z.union([
  simpleObject, jsonFormat, screenshotFormat, changeTrackingFormat, attributesFormat,
  questionFormat, highlightsFormat, queryFormat,
]);

const formatString = z.enum(SIMPLE_FORMATS, {
  error: (iss) =>
    iss.input === 'json' || iss.input === 'attributes'
      ? `${String(iss.input)} format must be an object with { type: '${String(iss.input)}', ... }`
      : `Invalid format ${JSON.stringify(iss.input)}; expected one of ${SIMPLE_FORMATS.join(', ')} or a format object`,
});

export const formatEntry = z.union([formatString, formatObject]).transform((f) => (typeof f === 'string' ? { type: f } : f));

export const formatsSchema = z.array(formatEntry).max(32);

export type FormatObject = z.output<typeof formatEntry>;
/** A changeTracking entry (the bare string `changeTracking` reads as one with no options). */
export type ChangeTrackingFormat = z.output<typeof changeTrackingFormat>;
export type FormatType = FormatObject['type'];

/** The `{selector, attribute}` list of a request's `attributes` format, if it asks for one. */
export function attributeSelectorsOf(formats: readonly FormatObject[]): Array<{ selector: string; attribute: string }> | undefined {
  const f = formats.find((x) => x.type === 'attributes') as unknown as { selectors: Array<{ selector: string; attribute: string }> } | undefined;
  return f?.selectors;
}
