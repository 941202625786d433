import {
  v1CrawlFieldsSchema, v1ExtractFieldsSchema, v1MapFieldsSchema, v1ScrapeFieldsSchema, v1SearchFieldsSchema, type V1ScrapeFields,
} from '@wds/contracts';
import { WdsError } from '@wds/errors';
import { validateBody } from '../v2/validate';

/**
 * v1 request bodies → v2 request bodies. Only the fields v1 spells differently are read (and
 * validated, so an error names the field the client sent); the rest pass through to the v2
 * controller, whose schema validates them and refuses unknown ones. The v2 body is what runs.
 */
type Body = Record<string, unknown>;

/** What a translated scrape body asked for that the answer must give back in v1 form. */
export interface V1Wants {
  /** The `extract` format was asked for: the v2 `json` result is returned as `extract`. */
  extract: boolean;
}

const invalid = (path: (string | number)[], message: string) => new WdsError('BAD_REQUEST', { details: [{ code: 'custom', path, message }] });

/** systemPrompt has no v2 field: it leads the prompt, as an instruction before the question. */
function jsonFormat(o: { schema?: Record<string, unknown>; systemPrompt?: string; prompt?: string } | undefined, name: string, at: (string | number)[]) {
  const prompt = [o?.systemPrompt, o?.prompt].filter((p): p is string => !!p && p.trim() !== '').join('\n\n');
  if (!o || (!o.schema && !prompt)) throw invalid([...at, name === 'json' ? 'jsonOptions' : 'extract'], `the '${name}' format needs ${name === 'json' ? 'jsonOptions' : 'extract'} with a schema or a prompt`);
  return { type: 'json', ...(o.schema ? { schema: o.schema } : {}), ...(prompt ? { prompt } : {}) };
}

/** Scrape options (top level of scrape and batch scrape, or a `scrapeOptions` object): v1 → v2. */
export function scrapeOptionsToV2(raw: Body, at: (string | number)[] = []): { body: Body; wants: V1Wants } {
  // Nested options were validated with their parent's schema already (errors name `scrapeOptions.…`).
  const v1 = validateBody(v1ScrapeFieldsSchema, raw) as V1ScrapeFields & Body;
  const { formats, jsonOptions, extract, changeTrackingOptions, parsePDF, ...rest } = v1;
  const body: Body = { ...rest };
  const wants: V1Wants = { extract: false };
  if (formats) {
    if (formats.includes('json') && formats.includes('extract')) throw invalid([...at, 'formats'], "ask for 'json' or 'extract', not both: they are the same format in v1");
    body.formats = formats.map((f) => {
      switch (f) {
        case 'screenshot@fullPage':
          return { type: 'screenshot', fullPage: true };
        case 'json':
          return jsonFormat(jsonOptions, 'json', at);
        case 'extract':
          wants.extract = true;
          return jsonFormat(extract ?? jsonOptions, 'extract', at);
        case 'changeTracking':
          return { type: 'changeTracking', ...(changeTrackingOptions ?? {}) };
        default:
          return f;
      }
    });
  }
  if (parsePDF === false) body.parsers = [];
  // v1's default is to verify certificates (v2's is to skip verification).
  if (body.skipTlsVerification === undefined) body.skipTlsVerification = false;
  return { body, wants };
}

const nested = (raw: unknown, at: string) => (raw && typeof raw === 'object' && !Array.isArray(raw) ? scrapeOptionsToV2(raw as Body, [at]).body : raw);

/**
 * maxDepth (v1): at most this many path segments below the URL's own path. v2 has no such
 * field, so it becomes one more excludePaths pattern, matched as the v2 patterns are (on the
 * path, or the whole URL with regexOnFullURL).
 */
function depthPattern(url: unknown, maxDepth: number, fullUrl: boolean): string {
  let base = 0;
  try {
    base = new URL(String(url)).pathname.split('/').filter(Boolean).length;
  } catch {
    // The v2 schema refuses the URL itself.
  }
  const segments = `(?:/[^/?#]+){${base + maxDepth + 1},}`;
  return fullUrl ? `^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]+${segments}` : `^${segments}`;
}

export function crawlToV2(raw: Body): Body {
  const { maxDepth, allowBackwardLinks, ignoreSitemap, scrapeOptions, ...rest } = validateBody(v1CrawlFieldsSchema, raw) as Body & {
    maxDepth?: number; allowBackwardLinks?: boolean; ignoreSitemap?: boolean; scrapeOptions?: unknown;
  };
  const body: Body = { ...rest };
  if (scrapeOptions !== undefined) body.scrapeOptions = nested(scrapeOptions, 'scrapeOptions');
  if (allowBackwardLinks !== undefined && body.crawlEntireDomain === undefined) body.crawlEntireDomain = allowBackwardLinks;
  if (ignoreSitemap !== undefined && body.sitemap === undefined) body.sitemap = ignoreSitemap ? 'skip' : 'include';
  // An excludePaths that is not a list is left for the v2 schema to refuse.
  if (maxDepth !== undefined && (body.excludePaths == null || Array.isArray(body.excludePaths))) {
    body.excludePaths = [...((body.excludePaths as string[] | null) ?? []), depthPattern(raw.url, maxDepth, raw.regexOnFullURL === true)];
  }
  return body;
}

export function mapToV2(raw: Body): Body {
  const { ignoreSitemap, sitemapOnly, useIndex, ...body } = validateBody(v1MapFieldsSchema, raw) as Body & { ignoreSitemap?: boolean; sitemapOnly?: boolean; useIndex?: boolean };
  if (sitemapOnly && ignoreSitemap === true) throw invalid(['sitemapOnly'], 'sitemapOnly cannot be combined with ignoreSitemap: true');
  // useIndex: false (firecrawl-py v1) = do not answer from earlier maps.
  const rest = useIndex === false && body.ignoreCache === undefined ? { ...body, ignoreCache: true } : body;
  if (rest.sitemap !== undefined) return rest;
  // v1's documented default is ignoreSitemap: true.
  return { ...rest, sitemap: sitemapOnly ? 'only' : ignoreSitemap === false ? 'include' : 'skip' };
}

/**
 * `lang` and `filter` have no v2 field. The JS SDK v1 sends `lang: "en"` on every search, so lang
 * is accepted and not used (docs/compatibility.md says so); a non-empty filter is refused.
 */
export function searchToV2(raw: Body): Body {
  const { lang: _lang, filter, scrapeOptions, ...rest } = validateBody(v1SearchFieldsSchema, raw) as Body & { lang?: string; filter?: string; scrapeOptions?: unknown };
  if (filter) throw new WdsError('FEATURE_NOT_AVAILABLE', { code: 'FEATURE_NOT_AVAILABLE', message: "v1 search's 'filter' is not available: use includeDomains / excludeDomains of POST /v2/search." });
  // v1's default is 5 results (v2's 10).
  const body: Body = { limit: 5, ...rest };
  const so = nested(scrapeOptions, 'scrapeOptions') as Body | undefined;
  // The JS SDK v1 always sends `scrapeOptions: {formats: []}`: no formats means no scrape.
  if (so && !(Array.isArray(so.formats) && so.formats.length === 0)) body.scrapeOptions = so;
  return body;
}

export function extractToV2(raw: Body): Body {
  const { scrapeOptions, ...rest } = validateBody(v1ExtractFieldsSchema, raw) as Body & { scrapeOptions?: unknown };
  return scrapeOptions === undefined ? rest : { ...rest, scrapeOptions: nested(scrapeOptions, 'scrapeOptions') };
}

/** Batch scrape: v1 scrape options at the top level, beside urls / webhook / maxConcurrency / ignoreInvalidURLs (v1 default false). */
export function batchToV2(raw: Body): { body: Body; wants: V1Wants } {
  const { body, wants } = scrapeOptionsToV2(raw);
  if (body.ignoreInvalidURLs === undefined) body.ignoreInvalidURLs = false;
  return { body, wants };
}
