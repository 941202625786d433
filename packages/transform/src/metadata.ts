import { textOf } from './dom';
import { asPage, type PageInput } from './parse-input';
import { scanPage, type PageScan } from './scan';
import type { MetaValue } from './types';
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

/** Metadata from a scan of the original (uncleaned) page. */
export function metadataOf(scan: PageScan, pageUrl: string): Metadata {
  const values = new Map<string, string[]>();
  for (const el of scan.metas) {
    const a = el.attribs;
    const name = (a.name ?? a.property ?? a.itemprop ?? '').trim();
    if (!name || a.content === undefined) continue;
    const key = metaKey(name);
    const list = values.get(key) ?? [];
    // Repeats with the same content are one value; different contents all count.
    if (!list.includes(a.content)) list.push(a.content);
    values.set(key, list);
  }

  const out: Metadata = {};
  for (const [key, list] of values) out[key] = list.length === 1 && !ALWAYS_ARRAY.has(key) ? list[0] : list;

  const title = scan.title ? collapse(textOf(scan.title)) : '';
  const ogTitle = out.ogTitle;
  if (title) out.title = title;
  else if (typeof ogTitle === 'string' && ogTitle.trim()) out.title = ogTitle.trim();
  else if (Array.isArray(ogTitle) && ogTitle.length) out.title = ogTitle[0];

  const lang = scan.lang?.trim();
  out.language = lang ? lang : null;

  const favicon = resolveUrl(scan.iconHref, documentBaseUrl(scan.baseHref, pageUrl));
  if (favicon) out.favicon = favicon;
  return out;
}

/**
 * Metadata of the original (uncleaned) document. Absent fields are omitted,
 * except `language`, which is null when <html lang> is missing.
 */
export function extractMetadata(doc: PageInput, pageUrl: string): Metadata {
  return metadataOf(scanPage(asPage(doc).doc), pageUrl);
}
