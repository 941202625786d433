import type { CheerioAPI } from 'cheerio';
import type { MetaValue } from './types';
import { loadHtml } from './clean';
import { documentBaseUrl, resolveUrl } from './urls';

export type Metadata = Record<string, MetaValue | null>;

function camel(parts: string[]): string {
  return parts
    .filter(Boolean)
    .map((p, i) => (i === 0 ? p.toLowerCase() : p.charAt(0).toUpperCase() + p.slice(1).toLowerCase()))
    .join('');
}

/**
 * The metadata key for a <meta> name/property/itemprop. One documented rule:
 *  - `og:xxx[:yyy]` → `ogXxxYyy` (`og:site_name` → `ogSiteName`, `og:locale:alternate` → `ogLocaleAlternate`);
 *  - `article:published_time` / `article:modified_time` → `publishedTime` / `modifiedTime`;
 *  - `dc.xxx` / `dcterms.xxx` (any case, `.` or `:`) → `dcXxx` / `dcTermsXxx`;
 *  - `description`, `keywords` (any case) → lower case;
 *  - everything else keeps its original name (`twitter:card`, `article:tag`, `viewport`).
 */
export function metaKey(name: string): string {
  const lower = name.toLowerCase();
  if (lower.startsWith('og:')) return camel(['og', ...lower.slice(3).split(/[:_.-]+/)]);
  if (lower === 'article:published_time') return 'publishedTime';
  if (lower === 'article:modified_time') return 'modifiedTime';
  const dc = /^(dcterms|dc)[.:](.+)$/.exec(lower);
  if (dc) return camel([dc[1] === 'dc' ? 'dc' : 'dcTerms', ...dc[2].split(/[:_.-]+/)]).replace(/^dcterms/, 'dcTerms');
  if (lower === 'description' || lower === 'keywords') return lower;
  return name;
}

/** Keys that are arrays whenever present, because the property is defined as repeatable. */
const ALWAYS_ARRAY = new Set(['ogLocaleAlternate']);

function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/**
 * Metadata of the original (uncleaned) document. Absent fields are omitted,
 * except `language`, which is null when <html lang> is missing.
 */
export function extractMetadata(doc: CheerioAPI | string, pageUrl: string): Metadata {
  const $ = typeof doc === 'string' ? loadHtml(doc) : doc;
  const values = new Map<string, string[]>();

  $('meta').each((_, el) => {
    const a = el.attribs;
    const name = (a.name ?? a.property ?? a.itemprop ?? '').trim();
    if (!name || a.content === undefined) return;
    const key = metaKey(name);
    const list = values.get(key) ?? [];
    // Repeats with the same content are one value; different contents all count.
    if (!list.includes(a.content)) list.push(a.content);
    values.set(key, list);
  });

  const out: Metadata = {};
  for (const [key, list] of values) out[key] = list.length === 1 && !ALWAYS_ARRAY.has(key) ? list[0] : list;

  // <title> outside inline SVG (whose <title> is a tooltip, not the page's).
  const titleEl = $('title')
    .filter((_, el) => !$(el).closest('svg').length)
    .first();
  const title = titleEl.length ? collapse(titleEl.text()) : '';
  const ogTitle = out.ogTitle;
  if (title) out.title = title;
  else if (typeof ogTitle === 'string' && ogTitle.trim()) out.title = ogTitle.trim();
  else if (Array.isArray(ogTitle) && ogTitle.length) out.title = ogTitle[0];

  const lang = $('html').first().attr('lang')?.trim();
  out.language = lang ? lang : null;

  const iconHref = $('link[rel]')
    .filter((_, el) => /(?:^|\s)icon(?:\s|$)/i.test(el.attribs.rel ?? ''))
    .first()
    .attr('href');
  const favicon = resolveUrl(iconHref, documentBaseUrl($, pageUrl));
  if (favicon) out.favicon = favicon;

  return out;
}
