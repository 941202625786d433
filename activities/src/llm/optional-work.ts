import { optionalLlmWork, type ScrapeDocument, type ScrapeOptions } from '@wds/contracts';
import { emptyUsage, extractJson, type CallOptions, type LlmClient, type Usage } from '@wds/llm';
import { BUCKET_KINDS, piiOptionsOf, redactValues, type PiiBucket, type PiiKind } from '@wds/pii';

/**
 * The model work a single scrape gets when an LLM is configured, besides the requested
 * model-made formats (capabilities: optionalLlmWork): the `redactPII` model pass and the
 * `branding` format's `personality`. Both are JSON extractions with a fixed schema.
 */

const PII_TYPES = ['PERSON', 'EMAIL', 'PHONE', 'ADDRESS', 'IP_ADDRESS', 'CREDIT_CARD', 'IBAN', 'NATIONAL_ID', 'SECRET'] as const;
const PII_SCHEMA = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      items: { type: 'object', properties: { type: { type: 'string', enum: [...PII_TYPES] }, text: { type: 'string' } }, required: ['type', 'text'], additionalProperties: false },
    },
  },
  required: ['items'],
  additionalProperties: false,
};

const PII_PROMPT = `Find personal data in this page that identifies or contacts a private individual: person names, e-mail addresses, phone numbers, postal addresses, IP addresses, payment card numbers, IBANs, national identity numbers, passwords and secret keys.
Copy each one exactly as it appears in the text, one item per occurrence of a distinct value. Tags like <EMAIL> are already redacted: skip them.
Do not list company or product names, public figures mentioned in the news, dates, prices, order or version numbers.`;

/**
 * The model pass of `redactPII` (modes accurate/aggressive) over markdown the detectors already
 * redacted: what the model reports, within the requested buckets and present verbatim in the
 * text, is replaced too (the same replacement style).
 */
export async function piiModelPass(client: LlmClient, o: { redactPII?: ScrapeOptions['redactPII'] }, markdown: string, scrapeId: string, url: string | undefined, call: CallOptions): Promise<{ markdown: string; usage: Usage; found: number; warning?: string }> {
  const opts = piiOptionsOf(o.redactPII, scrapeId);
  if (!opts || !markdown.trim()) return { markdown, usage: emptyUsage(), found: 0 };
  const r = await extractJson(client, { page: { markdown, url }, schema: PII_SCHEMA, prompt: PII_PROMPT, ...call });
  const allowed = new Set<PiiKind>((opts.entities?.length ? opts.entities : (Object.keys(BUCKET_KINDS) as PiiBucket[])).flatMap((b) => BUCKET_KINDS[b]));
  const items = ((r.data as { items?: Array<{ type: string; text: string }> }).items ?? [])
    .filter((i) => typeof i.text === 'string' && i.text.trim().length >= 2 && allowed.has(i.type as PiiKind) && markdown.includes(i.text))
    .map((i) => ({ kind: i.type as PiiKind, text: i.text }));
  const out = redactValues(markdown, items, opts);
  return { markdown: out.text, usage: r.usage, found: out.spans.length, warning: r.warning };
}

const PERSONALITY_SCHEMA = {
  type: 'object',
  properties: {
    tone: { type: 'string', enum: ['professional', 'playful', 'modern', 'traditional', 'minimalist', 'bold'] },
    energy: { type: 'string', enum: ['low', 'medium', 'high'] },
    targetAudience: { type: 'string' },
  },
  required: ['tone', 'energy', 'targetAudience'],
  additionalProperties: false,
};

/** `branding.personality` (SDK: tone, energy, targetAudience) from the page's text and its measured style. */
export async function brandPersonality(client: LlmClient, branding: Record<string, unknown>, markdown: string, url: string | undefined, call: CallOptions): Promise<{ personality: unknown; usage: Usage; warning?: string }> {
  const style = JSON.stringify({ colorScheme: branding.colorScheme, colors: branding.colors, fonts: branding.fonts, brandName: branding.brandName });
  const prompt = `Describe the brand personality of this website from its copy and its visual style (${style}): tone, energy, and the audience it targets (a short phrase).`;
  const r = await extractJson(client, { page: { markdown: markdown || '(no text)', url }, schema: PERSONALITY_SCHEMA, prompt, ...call });
  return { personality: r.data, usage: r.usage, warning: r.warning };
}

export const optionalWork = (o: Pick<ScrapeOptions, 'formats' | 'redactPII'>, doc: Pick<ScrapeDocument, 'branding'>) => {
  const w = optionalLlmWork(o);
  return { pii: w.pii, personality: w.personality && !!doc.branding };
};
