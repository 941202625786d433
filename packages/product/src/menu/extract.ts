import { load } from 'cheerio';
import { jsonLdNodes, microdataNodes } from '../sources';
import { str } from '../values';
import { menuFromNodes, merchantOf } from './structured';
import { menuFromText } from './text';
import type { MenuProfile, MenuResult } from './types';

/**
 * The `menu` format (README: Menu), no model: schema.org JSON-LD first, then microdata, then the
 * page's visible text; the first that yields items wins. Fail-closed: a page that is not a menu
 * gives no `menu` and the warning NO_MENU_WARNING (Firecrawl's docs: the object is omitted).
 * `confidence` says which source spoke: 0.95 JSON-LD, 0.9 microdata, 0.6 text.
 */
export const NO_MENU_WARNING = 'No menu found: the page has no schema.org Menu (JSON-LD or microdata) and its text does not read as a priced menu.';

const CONFIDENCE = { 'json-ld': 0.95, microdata: 0.9, text: 0.6 } as const;

export function extractMenu(html: string, pageUrl: string): MenuResult {
  const $ = load(html);
  const ld = jsonLdNodes($);
  const md = microdataNodes($);
  const found: Array<[MenuResult['source'] & string, Omit<MenuProfile, 'confidence'> | null]> = [
    ['json-ld', menuFromNodes(ld, pageUrl)],
    ['microdata', menuFromNodes(md, pageUrl)],
  ];
  let hit = found.find(([, m]) => m);
  if (!hit) hit = ['text', menuFromText($, pageUrl)];
  const [source, menu] = hit;
  if (!menu) return { warning: NO_MENU_WARNING };
  // The merchant: the structured data's establishment even when the menu came from text; else the site's name.
  if (!menu.merchant.name) {
    const m = merchantOf([...ld, ...md]);
    menu.merchant = m.name ? m : { name: str($('meta[property="og:site_name"]').attr('content')) ?? str($('title').first().text()) ?? '' };
  }
  return { menu: { ...menu, confidence: CONFIDENCE[source] }, source };
}
