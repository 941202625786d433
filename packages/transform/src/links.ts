import { asPage, type PageInput } from './parse-input';
import { scanPage, type PageScan } from './scan';
import { documentBaseUrl, isHttpUrl, largestSrcsetCandidate, resolveUrl } from './urls';

const SKIPPED_SCHEMES = /^\s*(?:javascript|mailto|tel|sms|data|blob|about):/i;

/** Links of a scan: absolute http(s), deduplicated, in document order, without fragment-only ones. */
export function linksOf(scan: PageScan, pageUrl: string): string[] {
  const base = documentBaseUrl(scan.baseHref, pageUrl);
  const seen = new Set<string>();
  for (const raw of scan.hrefs) {
    const href = raw.trim();
    if (!href || href.startsWith('#') || SKIPPED_SCHEMES.test(href)) continue;
    const abs = resolveUrl(href, base);
    if (abs && isHttpUrl(abs)) seen.add(abs);
  }
  return [...seen];
}

/** The page's `<link rel="canonical">` as an absolute http(s) URL, if it names one. */
export function canonicalOf(scan: PageScan, pageUrl: string): string | undefined {
  const abs = resolveUrl(scan.canonicalHref, documentBaseUrl(scan.baseHref, pageUrl));
  return abs && isHttpUrl(abs) ? abs : undefined;
}

/** Images of a scan: absolute, the largest srcset candidate, no data: URIs, deduplicated. */
export function imagesOf(scan: PageScan, pageUrl: string): string[] {
  const base = documentBaseUrl(scan.baseHref, pageUrl);
  const seen = new Set<string>();
  for (const el of scan.images) {
    const raw = largestSrcsetCandidate(el.attribs.srcset) ?? el.attribs.src;
    if (!raw || SKIPPED_SCHEMES.test(raw)) continue;
    const abs = resolveUrl(raw, base);
    if (abs && isHttpUrl(abs)) seen.add(abs);
  }
  return [...seen];
}

/**
 * Every http(s) link of the page (not only the main content), absolute,
 * deduplicated, in document order. Same-page fragment links (`#top`) are not
 * links to anything else and are skipped.
 */
export function extractLinks(doc: PageInput, pageUrl: string): string[] {
  return linksOf(scanPage(asPage(doc).doc), pageUrl);
}

/**
 * Every image of the page: absolute, the largest srcset candidate when there
 * is a srcset, `data:` URIs skipped, deduplicated, in document order.
 */
export function extractImages(doc: PageInput, pageUrl: string): string[] {
  return imagesOf(scanPage(asPage(doc).doc), pageUrl);
}
