import { select } from 'cheerio-select';
import { parsePage } from './dom';

/**
 * The `attributes` format (Firecrawl's AttributesFormat; the JS SDK's `Document.attributes`):
 * for each `{selector, attribute}` the values of that attribute on every element the CSS selector
 * matches in the page as received (or as rendered), in document order — deterministic, no model.
 * Elements without the attribute are skipped; values are returned as written (entities decoded,
 * relative URLs left relative); an empty attribute is an empty string. At most
 * MAX_VALUES_PER_SELECTOR values per selector.
 */
export interface AttributeSelector {
  selector: string;
  attribute: string;
}

export interface AttributeValues extends AttributeSelector {
  values: string[];
}

export const MAX_VALUES_PER_SELECTOR = 1_000;

export function extractAttributes(html: string, selectors: readonly AttributeSelector[]): AttributeValues[] {
  const page = parsePage(html);
  return selectors.map(({ selector, attribute }) => {
    const name = attribute.toLowerCase();
    const values: string[] = [];
    for (const el of select(selector, page.doc)) {
      const v = el.attribs[name];
      if (v === undefined) continue;
      values.push(v);
      if (values.length >= MAX_VALUES_PER_SELECTOR) break;
    }
    return { selector, attribute, values };
  });
}
