import { mediaWork, type ScrapeDocument, type ScrapeOptions } from '@wds/contracts';
import { mediaSources, type MediaSources } from '@wds/media';
import { piiOptionsOf, redact, wantsModelPass } from '@wds/pii';
import { extractProduct, NO_PRODUCT_WARNING, type ProductResult } from '@wds/product';

/**
 * The formats built from the page next to the conversion: `product` (from the raw HTML's
 * structured data) and `redactPII` (on the finished markdown, so the LLM formats built from it
 * later read the redacted text too).
 */

/** Firecrawl's published price of redaction: 4 credits per page on top of the page's own (docs: PII redaction, Billing). */
export const PII_CREDITS_PER_PAGE = 4;

export const addWarning = (doc: ScrapeDocument, w: string) => {
  doc.warning = doc.warning ? `${doc.warning} ${w}` : w;
};

/** `product` of an HTML page; other pages have no structured data to read. */
export function addProduct(doc: ScrapeDocument, o: Pick<ScrapeOptions, 'formats'>, html: string | null, pageUrl: string): void {
  if (o.formats.some((f) => f.type === 'product')) setProduct(doc, productOf(html, pageUrl));
}

/** The product data of a page's HTML (null for pages that have none: PDFs, text). */
export const productOf = (html: string | null, pageUrl: string): ProductResult =>
  html === null ? { product: null, warning: NO_PRODUCT_WARNING } : extractProduct(html, pageUrl);

export function setProduct(doc: ScrapeDocument, r: ProductResult): void {
  doc.product = r.product;
  if (r.warning) addWarning(doc, r.warning);
}

/**
 * The audio and video formats: the media the page names (`<video>`, `<audio>`, og tags), kept in
 * the draft document for the media step (wds-media), which replaces them with the formats' links.
 * A page with no HTML (a PDF, text) names none.
 */
export function addMediaSources(doc: ScrapeDocument, o: Pick<ScrapeOptions, 'formats'>, html: string | null, pageUrl: string): void {
  if (!mediaWork(o).length) return;
  (doc as ScrapeDocument & MediaDraft).mediaSources = html === null ? { video: [], audio: [] } : mediaSources(html, pageUrl);
}

/** A draft document waiting for the media step: the page's media candidates (never in an answer). */
export interface MediaDraft {
  mediaSources?: MediaSources;
}

/**
 * Redacts the markdown in place and returns the extra credits. The `hash` style is keyed by the
 * scrape id: one value gets one token within a document, and tokens do not link documents.
 */
export function redactMarkdown(doc: ScrapeDocument, o: Pick<ScrapeOptions, 'redactPII'>, scrapeId: string, pages = 1, modelStepFollows = false): number {
  const opts = piiOptionsOf(o.redactPII, scrapeId);
  if (!opts) return 0;
  if (doc.markdown) doc.markdown = redact(doc.markdown, opts).text;
  // Firecrawl redacts markdown only; say so rather than hand back PII the caller thinks is gone.
  if ((doc.html !== undefined || doc.rawHtml !== undefined) && !doc.warning?.includes('redactPII covers')) addWarning(doc, 'redactPII covers markdown (and what is made from it); html and rawHtml are returned unredacted.');
  if (wantsModelPass(o.redactPII) && !modelStepFollows && !doc.warning?.includes('redactPII:')) addWarning(doc, 'redactPII: the model pass of this mode needs an LLM (none is configured in this deployment, or this is a crawl or batch page); the deterministic detectors ran.');
  return PII_CREDITS_PER_PAGE * Math.max(1, pages);
}

/** One text redacted with the request's options (per-page markdown of a PDF). */
export function redactText(text: string, o: Pick<ScrapeOptions, 'redactPII'>, scrapeId: string): string {
  const opts = piiOptionsOf(o.redactPII, scrapeId);
  return opts ? redact(text, opts).text : text;
}
