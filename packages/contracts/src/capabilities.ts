import type { FormatType } from './formats';
import type { ScrapeOptions } from './scrape';

/**
 * What this deployment can do. Each later capability (browser, PDF, LLM) removes its
 * entries here; until then a request that needs it gets a clear 400 naming it instead of
 * a silently empty field.
 */
const FORMAT_NEEDS: Partial<Record<FormatType, string>> = {
  summary: 'an LLM',
  json: 'an LLM',
  changeTracking: 'change tracking storage',
  attributes: 'the attributes extractor',
  branding: 'the browser engine and an LLM',
  product: 'an LLM',
  menu: 'an LLM',
  audio: 'media extraction',
  video: 'media extraction',
  question: 'an LLM',
  highlights: 'an LLM',
  query: 'an LLM',
};

export interface Unavailable {
  field: string;
  message: string;
}

export function unavailableFeatures(o: ScrapeOptions): Unavailable[] {
  const out: Unavailable[] = [];
  for (const f of o.formats) {
    const need = FORMAT_NEEDS[f.type];
    if (need) out.push({ field: 'formats', message: `Format '${f.type}' is not available in this deployment: it needs ${need}, which is not built yet.` });
  }
  if (o.onlyCleanContent) out.push({ field: 'onlyCleanContent', message: "'onlyCleanContent' is not available in this deployment: it needs an LLM, which is not configured." });
  if (o.redactPII !== false) out.push({ field: 'redactPII', message: "'redactPII' is not available in this deployment: it needs an LLM, which is not configured." });
  return out;
}

/**
 * Options only the browser engine serves (actions, the screenshot format, mobile, profile).
 * Single scrapes have them; crawl and batch pages are fetched by the HTTP engine only, so there
 * they are still unavailable.
 */
export function browserOnlyFeatures(o: Pick<ScrapeOptions, 'formats' | 'actions' | 'mobile' | 'profile'>): string[] {
  const out: string[] = [];
  if (o.formats.some((f) => f.type === 'screenshot')) out.push('screenshot');
  if (o.actions?.length) out.push('actions');
  if (o.mobile) out.push('mobile');
  if (o.profile) out.push('profile');
  return out;
}

/** The same check for POST /v2/parse options (formats, onlyCleanContent, redactPII). */
export function unavailableParseFeatures(o: Pick<ScrapeOptions, 'formats' | 'onlyCleanContent' | 'redactPII'>): Unavailable[] {
  return unavailableFeatures({ ...o, actions: undefined, mobile: false, profile: undefined } as ScrapeOptions);
}
