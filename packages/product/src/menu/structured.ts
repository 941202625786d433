import { typesOf, type Node } from '../sources';
import { absUrl, currencyOf, priceOf, str } from '../values';
import { allergensOf, caloriesOf, categoryOf, dietaryOf, mealPeriodsOf, menuAvailabilityOf } from './classify';
import type { MenuItem, MenuOptionGroup, MenuProfile, MenuSection } from './types';

/**
 * A menu from schema.org structured data (JSON-LD or microdata, both read into the same node
 * shape by ../sources): `Menu` → `hasMenuSection` (nested sections flattened, in order) →
 * `hasMenuItem`; or `MenuSection`s without a `Menu`; the merchant is the `Restaurant` (or other
 * food establishment) that has the menu. Items: `offers` (price, currency, availability),
 * `suitableForDiet`, `nutrition.calories`, `image`, `menuAddOn` (→ option groups), `identifier`.
 */

const list = (v: unknown): unknown[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);
const objects = (v: unknown): Node[] => list(v).filter((x): x is Node => typeof x === 'object' && x !== null && !Array.isArray(x));
const is = (n: Node, ...types: string[]) => typesOf(n).some((t) => types.includes(t));

const ESTABLISHMENTS = ['Restaurant', 'FoodEstablishment', 'CafeOrCoffeeShop', 'Bakery', 'BarOrPub', 'FastFoodRestaurant', 'IceCreamShop', 'Brewery', 'Winery', 'Distillery'];
const MAX_ITEMS = 2_000;

interface Ctx {
  base: string;
  currency?: string;
  menuName?: string;
  count: number;
}

function priceFields(n: Node, ctx: Ctx) {
  const offer = objects(n.offers)[0];
  const currency = offer?.priceCurrency ?? n.priceCurrency;
  if (!ctx.currency) ctx.currency = currencyOf(currency);
  return { price: priceOf(offer?.price ?? offer?.lowPrice ?? n.price, currency), availability: offer?.availability };
}

function optionGroups(n: Node, ctx: Ctx): MenuOptionGroup[] {
  return objects(n.menuAddOn).map((g) => {
    const options = (is(g, 'MenuSection') ? objects(g.hasMenuItem) : [g]).map((o) => {
      const price = priceFields(o, ctx).price;
      return { name: str(o.name) ?? '', ...(price ? { price } : {}) };
    }).filter((o) => o.name);
    return { name: str(g.name) ?? 'Add-ons', role: 'modifier' as const, options };
  });
}

function item(n: Node, section: string, id: string, ctx: Ctx): MenuItem | null {
  const name = str(n.name);
  if (!name) return null;
  const description = str(n.description);
  const { price, availability } = priceFields(n, ctx);
  const diets = list(n.suitableForDiet).map((d) => String(typeof d === 'object' && d ? ((d as Node)['@id'] ?? (d as Node).name ?? '') : d));
  const nutrition = objects(n.nutrition)[0];
  const merchantItemId = str(n.identifier) ?? str(n.sku) ?? undefined;
  const images = list(n.image)
    .map((x) => absUrl(typeof x === 'object' && x ? ((x as Node).url ?? (x as Node).contentUrl) : x, ctx.base))
    .filter((u): u is string => !!u)
    .map((url) => ({ url }));
  const url = absUrl(n.url, ctx.base);
  return {
    id: merchantItemId ?? id,
    name,
    ...(description ? { description } : {}),
    images,
    ...(price ? { price } : {}),
    availability: menuAvailabilityOf(availability, name, description),
    dietary: dietaryOf(diets.join(' '), name, description),
    ...(caloriesOf(nutrition?.calories) !== undefined ? { calories: caloriesOf(nutrition?.calories) } : {}),
    ...categoryOf(section, name),
    allergens: allergensOf(description),
    mealPeriods: mealPeriodsOf(section, ctx.menuName),
    optionGroups: optionGroups(n, ctx),
    identifiers: merchantItemId ? { merchantItemId } : {},
    ...(url ? { url } : {}),
    sourceUrl: ctx.base,
  };
}

/** A section and, after it, its nested sections (named "Parent › Child"), in document order. */
function sections(s: Node, prefix: string, ctx: Ctx, out: MenuSection[]): void {
  const name = [prefix, str(s.name) ?? 'Menu'].filter(Boolean).join(' › ');
  const id = `s${out.length + 1}`;
  const items = objects(s.hasMenuItem).flatMap((n, i) => (ctx.count++ < MAX_ITEMS ? [item(n, name, `${id}-i${i + 1}`, ctx)] : [])).filter((x): x is MenuItem => !!x);
  const description = str(s.description);
  if (items.length) out.push({ id, name, ...(description ? { description } : {}), items });
  for (const child of objects(s.hasMenuSection)) sections(child, name, ctx, out);
}

export function merchantOf(nodes: Node[]): MenuProfile['merchant'] {
  const m = nodes.find((n) => is(n, ...ESTABLISHMENTS));
  if (!m) return { name: '' };
  const type = typesOf(m).find((t) => ESTABLISHMENTS.includes(t));
  const address = objects(m.address)[0];
  const location = address
    ? Object.fromEntries(['streetAddress', 'addressLocality', 'addressRegion', 'postalCode', 'addressCountry'].map((k) => [k, str(address[k]) ?? str(objects(address[k])[0]?.name)]).filter(([, v]) => v))
    : str(m.address);
  return { name: str(m.name) ?? '', type: type === 'FoodEstablishment' ? 'restaurant' : type ? type.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase() : null, ...(location ? { location } : {}) };
}

/** Every typed node, nested ones too (microdata items hold their menu as a property). */
function flatten(nodes: Node[]): Node[] {
  const out: Node[] = [];
  const seen = new Set<Node>();
  const visit = (n: Node, depth: number) => {
    if (seen.has(n) || depth > 12 || out.length > MAX_ITEMS * 2) return;
    seen.add(n);
    if (n['@type'] !== undefined) out.push(n);
    for (const v of Object.values(n)) for (const c of objects(v)) visit(c, depth + 1);
  };
  for (const n of nodes) visit(n, 0);
  return out;
}

/** The menu in these nodes, or null when they hold no menu items. */
export function menuFromNodes(top: Node[], pageUrl: string): Omit<MenuProfile, 'confidence'> | null {
  const nodes = flatten(top);
  const menus = nodes.filter((n) => is(n, 'Menu'));
  const nested = new Set(nodes.flatMap((n) => objects(n.hasMenuSection)));
  const roots = menus.length ? menus : nodes.filter((n) => is(n, 'MenuSection') && !nested.has(n));
  const ctx: Ctx = { base: pageUrl, count: 0 };
  const out: MenuSection[] = [];
  for (const m of roots) {
    ctx.menuName = is(m, 'Menu') ? str(m.name) : undefined;
    if (is(m, 'Menu') && objects(m.hasMenuItem).length) sections({ name: str(m.name) ?? 'Menu', hasMenuItem: m.hasMenuItem }, '', ctx, out);
    for (const s of is(m, 'Menu') ? objects(m.hasMenuSection) : [m]) sections(s, '', ctx, out);
  }
  if (!out.length) return null;
  return { isMenu: true, merchant: merchantOf(nodes), ...(ctx.currency ? { currency: ctx.currency } : {}), sections: out, sourceUrl: pageUrl };
}
