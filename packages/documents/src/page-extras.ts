import { attributeSelectorsOf, type ScrapeDocument, type ScrapeOptions } from '@wds/contracts';
import { piiOptionsOf, redact, wantsModelPass } from '@wds/pii';
import { extractMenu, extractProduct, NO_MENU_WARNING, NO_PRODUCT_WARNING } from '@wds/product';
import { extractAttributes } from '@wds/transform';

/**
 * The formats built from the page next to the conversion: `product`, `menu` and `attributes`
 * (from the raw HTML: structured data, visible text, selectors) and `redactPII` (on the finished
 * markdown, so the LLM formats built from it later read the redacted text too).
 */

/** Firecrawl's published price of redaction: 4 credits per page on top of the page's own (docs: PII redaction, Billing). */
export const PII_CREDITS_PER_PAGE = 4;

export const addWarning = (doc: ScrapeDocument, w: string) => {
  doc.warning = doc.warning ? `${doc.warning} ${w}` : w;
};

/**
 * `product`, `menu` and `attributes` of an HTML page (as received, or as rendered); other pages
 * (PDF, text) have no markup to read: null product, no menu, empty attribute lists, each with
 * the same warning an HTML page without that data gets.
 */
export function addHtmlFormats(doc: ScrapeDocument, o: Pick<ScrapeOptions, 'formats'>, html: string | null, pageUrl: string): void {
  for (const f of o.formats) {
    if (f.type === 'product') {
      const r = html === null ? { product: null, warning: NO_PRODUCT_WARNING } : extractProduct(html, pageUrl);
      doc.product = r.product;
      if (r.warning) addWarning(doc, r.warning);
    } else if (f.type === 'menu') {
      // Fail-closed (Firecrawl's docs): no menu object, a warning.
      const r = html === null ? { warning: NO_MENU_WARNING } : extractMenu(html, pageUrl);
      if (r.menu) doc.menu = r.menu;
      if (r.warning) addWarning(doc, r.warning);
    } else if (f.type === 'attributes') {
      const selectors = attributeSelectorsOf([f])!;
      doc.attributes = html === null ? selectors.map((s) => ({ ...s, values: [] })) : extractAttributes(html, selectors);
      if (html === null) addWarning(doc, 'attributes: the page is not HTML, so no element matches.');
    }
  }
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
