import type { CheerioAPI } from 'cheerio';
import { loadHtml } from './clean';
import { documentBaseUrl, isHttpUrl, largestSrcsetCandidate, resolveUrl } from './urls';

const SKIPPED_SCHEMES = /^\s*(?:javascript|mailto|tel|sms|data|blob|about):/i;

function asDocument(doc: CheerioAPI | string): CheerioAPI {
  return typeof doc === 'string' ? loadHtml(doc) : doc;
}

/**
 * Every http(s) link of the page (not only the main content), absolute,
 * deduplicated, in document order. Same-page fragment links (`#top`) are not
 * links to anything else and are skipped.
 */
export function extractLinks(doc: CheerioAPI | string, pageUrl: string): string[] {
  const $ = asDocument(doc);
  const base = documentBaseUrl($, pageUrl);
  const seen = new Set<string>();
  $('a[href]').each((_, el) => {
    const href = el.attribs.href?.trim();
    if (!href || href.startsWith('#') || SKIPPED_SCHEMES.test(href)) return;
    const abs = resolveUrl(href, base);
    if (abs && isHttpUrl(abs)) seen.add(abs);
  });
  return [...seen];
}

/**
 * Every image of the page: absolute, the largest srcset candidate when there
 * is a srcset, `data:` URIs skipped, deduplicated, in document order.
 */
export function extractImages(doc: CheerioAPI | string, pageUrl: string): string[] {
  const $ = asDocument(doc);
  const base = documentBaseUrl($, pageUrl);
  const seen = new Set<string>();
  $('img[src], img[srcset]').each((_, el) => {
    const raw = largestSrcsetCandidate(el.attribs.srcset) ?? el.attribs.src;
    if (!raw || SKIPPED_SCHEMES.test(raw)) return;
    const abs = resolveUrl(raw, base);
    if (abs && isHttpUrl(abs)) seen.add(abs);
  });
  return [...seen];
}
