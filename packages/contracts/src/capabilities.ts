import { changeTrackingJson } from './change-tracking';
import type { FormatType } from './formats';
import type { ScrapeOptions } from './scrape';

/**
 * What this deployment can do. A request that needs a part that is not built, or not configured
 * here, gets a clear 400 naming it instead of a silently empty field.
 */
const FORMAT_NEEDS: Partial<Record<FormatType, string>> = {
  attributes: 'the attributes extractor',
  menu: 'the menu extractor',
  query: 'the query format',
};

/** Formats made by the media step (wds-media workers: downloads, ffmpeg, yt-dlp). */
export const MEDIA_FORMATS = ['audio', 'video'] as const satisfies readonly FormatType[];
export type MediaFormatType = (typeof MEDIA_FORMATS)[number];

/** The media formats a request asks for, in the order the media step makes them. */
export function mediaWork(o: Pick<ScrapeOptions, 'formats'>): MediaFormatType[] {
  return MEDIA_FORMATS.filter((k) => o.formats.some((f) => f.type === k));
}

/** Formats a model produces (packages/llm), available when the deployment has an LLM configured. */
export const LLM_FORMATS = ['json', 'summary', 'question', 'highlights'] as const satisfies readonly FormatType[];
export type LlmFormatType = (typeof LLM_FORMATS)[number];

/** Whether an LLM is configured (OPENAI_API_KEY / OPENAI_BASE_URL / OLLAMA_BASE_URL, see packages/llm). */
export type LlmAvailability = { ok: true } | { ok: false; message: string };

export interface Deployment {
  llm: LlmAvailability;
}

export const NO_LLM: Deployment = { llm: { ok: false, message: 'no LLM is configured: set OPENAI_API_KEY (or OPENAI_BASE_URL / OLLAMA_BASE_URL with MODEL_NAME)' } };

export interface Unavailable {
  field: string;
  message: string;
}

/**
 * The LLM work a request asks for: its model-made formats, the onlyCleanContent pass, and
 * changeTracking's json mode (an extraction per new or changed page).
 */
export function llmWork(o: Pick<ScrapeOptions, 'formats' | 'onlyCleanContent'>): { formats: LlmFormatType[]; clean: boolean; changeTrackingJson: boolean } {
  const formats = o.formats.map((f) => f.type).filter((t): t is LlmFormatType => (LLM_FORMATS as readonly string[]).includes(t));
  return { formats, clean: !!o.onlyCleanContent, changeTrackingJson: changeTrackingJson(o) };
}

/**
 * Model work a request gets only where an LLM is configured, and goes without (silently for
 * `personality`, with a warning for redaction) elsewhere: the `redactPII` model pass (modes
 * `accurate`/`aggressive`) and the `branding` format's `personality`.
 */
export function optionalLlmWork(o: Pick<ScrapeOptions, 'formats'> & { redactPII?: ScrapeOptions['redactPII'] }): { pii: boolean; personality: boolean } {
  const r = o.redactPII;
  return { pii: typeof r === 'object' && (r.mode === 'accurate' || r.mode === 'aggressive'), personality: o.formats.some((f) => f.type === 'branding') };
}

/** Whether the page goes through the model step; `llmAvailable` adds the optional work (optionalLlmWork). */
export const needsLlm = (o: Pick<ScrapeOptions, 'formats' | 'onlyCleanContent'> & { redactPII?: ScrapeOptions['redactPII'] }, llmAvailable = false) => {
  const w = llmWork(o);
  if (w.formats.length > 0 || w.clean || w.changeTrackingJson) return true;
  if (!llmAvailable) return false;
  const x = optionalLlmWork(o);
  return x.pii || x.personality;
};

/**
 * The options a page is built with: the model reads markdown, so a request with LLM work gets
 * markdown built even when it did not ask for it (the LLM step drops it again; see `wantsMarkdown`).
 */
export function withLlmInputs<O extends Pick<ScrapeOptions, 'formats' | 'onlyCleanContent'> & { redactPII?: ScrapeOptions['redactPII'] }>(o: O, llmAvailable = false): O {
  if (!needsLlm(o, llmAvailable) || wantsMarkdown(o)) return o;
  return { ...o, formats: [...o.formats, { type: 'markdown' }] };
}

export const wantsMarkdown = (o: Pick<ScrapeOptions, 'formats'>) => o.formats.some((f) => f.type === 'markdown');

export function unavailableFeatures(o: ScrapeOptions, deployment: Deployment = NO_LLM): Unavailable[] {
  const out: Unavailable[] = [];
  for (const f of o.formats) {
    const need = FORMAT_NEEDS[f.type];
    if (need) out.push({ field: 'formats', message: `Format '${f.type}' is not available in this deployment: it needs ${need}, which is not built yet.` });
  }
  const llm = deployment.llm;
  if (!llm.ok) {
    for (const t of llmWork(o).formats) out.push({ field: 'formats', message: `Format '${t}' is not available in this deployment: ${llm.message}.` });
    if (o.onlyCleanContent) out.push({ field: 'onlyCleanContent', message: `'onlyCleanContent' is not available in this deployment: ${llm.message}.` });
    if (changeTrackingJson(o)) out.push({ field: 'formats', message: `changeTracking's json mode is not available in this deployment: ${llm.message}.` });
  }
  return out;
}

/**
 * Options only the browser engine serves (actions, the screenshot and branding formats, mobile,
 * profile). Scrapes, crawls and batch scrapes have them; extract fetches its pages with the HTTP
 * engine only, so there they are unavailable.
 */
export function browserOnlyFeatures(o: Pick<ScrapeOptions, 'formats' | 'actions' | 'mobile' | 'profile'>): string[] {
  const out: string[] = [];
  if (o.formats.some((f) => f.type === 'screenshot')) out.push('screenshot');
  if (o.formats.some((f) => f.type === 'branding')) out.push('branding');
  if (o.actions?.length) out.push('actions');
  if (o.mobile) out.push('mobile');
  if (o.profile) out.push('profile');
  return out;
}

/** The same check for POST /v2/parse options (formats, onlyCleanContent, redactPII); an upload has no page to take media from. */
export function unavailableParseFeatures(o: Pick<ScrapeOptions, 'formats' | 'onlyCleanContent' | 'redactPII'>, deployment: Deployment = NO_LLM): Unavailable[] {
  const out = unavailableFeatures({ ...o, actions: undefined, mobile: false, profile: undefined } as ScrapeOptions, deployment);
  for (const t of mediaWork(o)) out.push({ field: 'formats', message: `Format '${t}' is not available for POST /v2/parse: it takes the media of a web page; scrape the page's URL instead.` });
  return out;
}
