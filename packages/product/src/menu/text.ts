import type { CheerioAPI } from 'cheerio';
import type { Element } from 'domhandler';
import { currencyOf, priceOf, str } from '../values';
import { allergensOf, caloriesOf, categoryOf, dietaryOf, mealPeriodsOf, menuAvailabilityOf } from './classify';
import type { MenuItem, MenuProfile, MenuSection } from './types';

/**
 * A menu from the page's visible text, for pages without structured data (restaurant themes,
 * hand-written HTML): the page as lines (each innermost block element's text), headings open
 * sections, a line with a price is an item (name before the price, anything after it — or the
 * line that follows, if it has no price — its description). Fail-closed: only a page that says it
 * is a menu (the word in its URL, title or headings, in several languages) or whose sections are
 * named like menu sections, with at least MIN_ITEMS priced items, gives a menu.
 */

const BLOCKS = new Set(['p', 'li', 'tr', 'dt', 'dd', 'div', 'section', 'article', 'td', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'figcaption', 'blockquote']);
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
const SKIP = 'script, style, noscript, template, nav, header, footer, form, aside, [aria-hidden="true"]';
const MIN_ITEMS = 3;
const MAX_ITEMS = 2_000;

const SYMBOL = String.raw`(?:US\$|C\$|A\$|R\$|[$€£¥₹]|CHF|EUR|USD|GBP)`;
const AMOUNT = String.raw`\d{1,4}(?:[.,]\d{1,2})?`;
/** A price: with a currency before or after, or an amount with two decimals. */
const PRICE = new RegExp(String.raw`(?<![\w.,])(${SYMBOL}\s?${AMOUNT}|${AMOUNT}\s?(?:€|EUR|USD|\$|£|CHF|kr|zł)|\d{1,4}[.,]\d{2})(?![\w.,]*\d)`);
const MENU_WORD = /\b(menu|menus|menú|carte|speisekarte|karte|carta|cardápio|menukaart|dishes|food\s*&\s*drinks?)\b/i;

interface Line {
  text: string;
  heading: boolean;
}

/** Text of `el` outside its nested blocks (they make their own lines). */
function ownText(el: Element): string {
  let out = '';
  for (const c of el.children) {
    if (c.type === 'text') out += c.data;
    else if (c.type === 'tag' && !BLOCKS.has(c.name.toLowerCase())) out += ` ${ownText(c)} `;
    else if (c.type === 'tag' && c.name.toLowerCase() === 'br') out += ' ';
  }
  return out;
}

function rowText(tr: Element): string {
  return tr.children.filter((c): c is Element => c.type === 'tag').map((c) => allText(c)).join(' ');
}

function allText(el: Element): string {
  return el.children.map((c) => (c.type === 'text' ? c.data : c.type === 'tag' ? ` ${allText(c)} ` : '')).join('');
}

function lines($: CheerioAPI): Line[] {
  const body = $('body').clone();
  body.find(SKIP).remove();
  const out: Line[] = [];
  body.find('*').each((_, el) => {
    const e = el as Element;
    const name = e.tagName.toLowerCase();
    if (!BLOCKS.has(name) || (name === 'td' && $(e).parents('tr').length)) return;
    // A table row is one line (name and price sit in its cells); other blocks give their own text.
    const text = str(name === 'tr' ? rowText(e) : HEADINGS.has(name) ? allText(e) : ownText(e));
    if (text && text.length <= 500) out.push({ text, heading: HEADINGS.has(name) });
  });
  return out;
}

interface Priced {
  name: string;
  price: string;
  rest?: string;
}

function pricedLine(text: string): Priced | null {
  const m = PRICE.exec(text);
  if (!m || m.index === undefined) return null;
  const name = text.slice(0, m.index).replace(/[\s.·…:|–—_-]+$/u, '').trim();
  if (name.length < 2 || name.length > 100 || !/\p{L}/u.test(name)) return null;
  const rest = text.slice(m.index + m[0].length).replace(/^[\s|–—-]+/u, '').trim();
  return { name, price: m[1]!, ...(rest ? { rest } : {}) };
}

function newItem(p: Priced, section: string, id: string, pageUrl: string, title: string): MenuItem {
  const symbol = p.price.match(new RegExp(SYMBOL))?.[0] ?? p.price.match(/€|\$|£|kr|zł/)?.[0];
  const price = priceOf(p.price, symbol ? currencyOf(symbol) ?? symbol : undefined);
  return {
    id,
    name: p.name,
    ...(p.rest ? { description: p.rest } : {}),
    images: [],
    ...(price ? { price } : {}),
    availability: menuAvailabilityOf(undefined, p.name, p.rest),
    dietary: dietaryOf(p.name, p.rest),
    ...(caloriesOf(p.rest) !== undefined ? { calories: caloriesOf(p.rest) } : {}),
    ...categoryOf(section, p.name),
    allergens: allergensOf(p.rest),
    mealPeriods: mealPeriodsOf(section, title),
    optionGroups: [],
    identifiers: {},
    sourceUrl: pageUrl,
  };
}

/** The menu in the page's text, or null (not a menu, or too few priced items). */
export function menuFromText($: CheerioAPI, pageUrl: string): Omit<MenuProfile, 'confidence'> | null {
  const title = str($('title').first().text()) ?? '';
  const sections: MenuSection[] = [];
  let current: MenuSection | null = null;
  let last: MenuItem | null = null;
  let count = 0;
  for (const line of lines($)) {
    const p = line.heading ? null : pricedLine(line.text);
    if (line.heading) {
      current = { id: `s${sections.length + 1}`, name: line.text, items: [] };
      sections.push(current);
      last = null;
    } else if (p && count < MAX_ITEMS) {
      if (!current) sections.push((current = { id: 's1', name: 'Menu', items: [] }));
      last = newItem(p, current.name, `${current.id}-i${current.items.length + 1}`, pageUrl, title);
      current.items.push(last);
      count++;
    } else if (last && !last.description && line.text.length <= 300) {
      last.description = line.text;
      last.dietary = dietaryOf(last.name, line.text);
      last.allergens = allergensOf(line.text);
      last.availability = menuAvailabilityOf(undefined, last.name, line.text);
      const cal = caloriesOf(line.text);
      if (cal !== undefined) last.calories = cal;
    } else {
      last = null;
    }
  }
  const withItems = sections.filter((s) => s.items.length);
  if (count < MIN_ITEMS) return null;
  const headings = $('h1, h2, h3').map((_, h) => $(h).text()).get().join(' ');
  const saysMenu = MENU_WORD.test(`${new URL(pageUrl).pathname.replace(/[/_-]/g, ' ')} ${title} ${headings}`);
  const namedLikeMenu = withItems.filter((s) => categoryOf(s.name, '').category !== null).length * 2 >= withItems.length && withItems.length >= 2;
  if (!saysMenu && !namedLikeMenu) return null;
  const currencies = new Set(withItems.flatMap((s) => s.items.map((i) => i.price?.currency)).filter(Boolean));
  return { isMenu: true, merchant: { name: '' }, ...(currencies.size === 1 ? { currency: [...currencies][0] } : {}), sections: withItems, sourceUrl: pageUrl };
}
