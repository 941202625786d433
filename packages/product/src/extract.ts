import { load, type CheerioAPI } from 'cheerio';
import { jsonLdNodes, metaTags, microdataNodes, typesOf, type Node } from './sources';
import type { ProductPrice, ProductProfile, ProductResult, ProductVariant } from './types';
import { absUrl, availabilityOf, priceOf, str } from './values';

/**
 * The `product` format from a page's structured data, no model: JSON-LD `Product` /
 * `ProductGroup` (with `hasVariant`) and their `Offer` / `AggregateOffer`s first, then microdata
 * items of the same types, then Open Graph product tags (README: "Sources"). A page without
 * any → `product: null` with a warning.
 */
export const NO_PRODUCT_WARNING = 'No product data found: the page has no schema.org Product (JSON-LD or microdata) and no Open Graph product tags.';

const PRODUCT_TYPES = new Set(['Product', 'ProductGroup', 'IndividualProduct', 'ProductModel', 'Vehicle', 'Car', 'Book']);
const isProduct = (n: Node) => typesOf(n).some((t) => PRODUCT_TYPES.has(t));
const isGroup = (n: Node) => typesOf(n).includes('ProductGroup') || Array.isArray(n.hasVariant) || (typeof n.hasVariant === 'object' && n.hasVariant !== null);

const list = (v: unknown): unknown[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);
const objects = (v: unknown): Node[] => list(v).filter((x): x is Node => typeof x === 'object' && x !== null && !Array.isArray(x));
/** A name-like value: a string, or an object's `name`. */
const nameOf = (v: unknown): string | undefined => {
  for (const x of list(v)) {
    const s = typeof x === 'object' && x !== null ? str((x as Node).name) : str(x);
    if (s) return s;
  }
  return undefined;
};

function imagesOf(v: unknown, base: string): Array<{ url: string }> {
  const out: Array<{ url: string }> = [];
  const seen = new Set<string>();
  for (const x of list(v)) {
    const raw = typeof x === 'object' && x !== null ? ((x as Node).url ?? (x as Node).contentUrl) : x;
    const url = absUrl(raw, base);
    if (url && !seen.has(url)) {
      seen.add(url);
      out.push({ url });
    }
  }
  return out;
}

const ORIGINAL_PRICE_TYPES = /(?:ListPrice|StrikethroughPrice|SRP|MSRP|InvoicePrice)$/i;

/** Price, sale and availability of one offer (Offer, AggregateOffer, or a product without offers). */
function offerFields(offer: Node | undefined): Pick<ProductVariant, 'price' | 'sale' | 'availability'> {
  if (!offer) return { availability: availabilityOf(undefined) };
  const specs = objects(offer.priceSpecification);
  const current = specs.find((s) => !ORIGINAL_PRICE_TYPES.test(String(s.priceType ?? '')));
  const original = specs.find((s) => ORIGINAL_PRICE_TYPES.test(String(s.priceType ?? '')));
  const currency = offer.priceCurrency ?? current?.priceCurrency ?? original?.priceCurrency;
  const price = priceOf(offer.price ?? offer.lowPrice ?? current?.price, currency);
  const out: Pick<ProductVariant, 'price' | 'sale' | 'availability'> = { availability: availabilityOf(str(offer.availability)) };
  if (price) out.price = price;
  const was = original ? priceOf(original.price, original.priceCurrency ?? currency) : undefined;
  if (price && was && was.amount > price.amount) out.sale = { originalPrice: was };
  return out;
}

/** The offers of a product: AggregateOffer's inner offers when it lists them. */
function offersOf(p: Node): Node[] {
  const out: Node[] = [];
  for (const o of objects(p.offers)) {
    const inner = objects(o.offers);
    if (typesOf(o).includes('AggregateOffer') && inner.length) out.push(...inner.map((x) => ({ priceCurrency: o.priceCurrency, ...x })));
    else out.push(o);
  }
  return out;
}

/** What distinguishes a variant: the group's `variesBy` properties, common option properties, `additionalProperty`. */
function valuesOf(p: Node, variesBy: string[]): Record<string, string> | undefined {
  const values: Record<string, string> = {};
  const keys = new Set([...variesBy, 'color', 'size', 'material', 'pattern']);
  for (const k of keys) {
    const v = nameOf(p[k]);
    if (v) values[k] = v;
  }
  for (const prop of objects(p.additionalProperty)) {
    const name = str(prop.name);
    const value = str(prop.value);
    if (name && value) values[name] = value;
  }
  return Object.keys(values).length ? values : undefined;
}

/** Shopify-style offer URLs carry the variant id: `?variant=4012345`. */
const variantIdOfUrl = (u: unknown): string | undefined => {
  const s = str(u);
  const m = s ? /[?&]variant=([^&#]+)/.exec(s) : null;
  return m ? decodeURIComponent(m[1]!) : undefined;
};

function compact<T extends object>(o: T): T {
  for (const k of Object.keys(o) as Array<keyof T>) if (o[k] === undefined) delete o[k];
  return o;
}

function variantOfProduct(p: Node, base: string, variesBy: string[], fallbackImages: Array<{ url: string }>): ProductVariant[] {
  const offers = offersOf(p);
  const images = imagesOf(p.image, base);
  const common = { sku: str(p.sku), title: str(p.name), values: valuesOf(p, variesBy) };
  const id = str(p.productID) ?? str(p['@id']) ?? str(p.sku);
  if (offers.length <= 1) {
    return [compact({ id: id ?? variantIdOfUrl(offers[0]?.url), ...common, ...offerFields(offers[0]), images: (images.length ? images : fallbackImages) || undefined })];
  }
  // Several offers on one product: one variant per offer (Shopify lists each variant as an Offer).
  return offers.map((o) =>
    compact({
      id: variantIdOfUrl(o.url) ?? str(o.sku) ?? str(o['@id']),
      sku: str(o.sku) ?? common.sku,
      title: str(o.name) ?? common.title,
      values: valuesOf(o, variesBy) ?? common.values,
      ...offerFields(o),
      images: (images.length ? images : fallbackImages) || undefined,
    }),
  );
}

const typeName = (v: unknown) => (str(v) ?? '').replace(/^https?:\/\/schema\.org\//i, '');

function fromNode(p: Node, ctx: PageContext): ProductProfile | null {
  const title = str(p.name) ?? nameOf(objects(p.hasVariant)[0]?.name);
  if (!title) return null;
  const productImages = imagesOf(p.image, ctx.base);
  let variants: ProductVariant[];
  if (isGroup(p)) {
    const variesBy = list(p.variesBy).map(typeName).filter(Boolean);
    variants = objects(p.hasVariant).flatMap((v) => variantOfProduct(v, ctx.base, variesBy, productImages));
    if (!variants.length) variants = variantOfProduct(p, ctx.base, [], productImages);
  } else variants = variantOfProduct(p, ctx.base, [], productImages);
  for (const v of variants) if (v.images && !v.images.length) delete v.images;
  return compact({
    title,
    brand: nameOf(p.brand) ?? nameOf(p.manufacturer),
    category: str(p.category) ?? nameOf(p.category) ?? ctx.breadcrumb,
    url: ctx.canonical ?? absUrl(p.url, ctx.base) ?? ctx.base,
    description: str(p.description),
    variants,
  });
}

interface PageContext {
  base: string;
  canonical?: string;
  breadcrumb?: string;
}

/** "Home > Kitchen > Kettles" from a BreadcrumbList, without "Home" and without the product itself. */
function breadcrumbOf(nodes: Node[], title: (n: Node) => string | undefined): string | undefined {
  const bl = nodes.find((n) => typesOf(n).includes('BreadcrumbList'));
  if (!bl) return undefined;
  const items = objects(bl.itemListElement)
    .map((e, i) => ({ pos: Number(e.position ?? i + 1), name: str(e.name) ?? nameOf(e.item) }))
    .filter((e) => e.name)
    .sort((a, b) => a.pos - b.pos)
    .map((e) => e.name!);
  while (items.length && /^(?:home|start|startseite|accueil|inicio|home page)$/i.test(items[0]!)) items.shift();
  const product = nodes.find(isProduct);
  if (product && items.length && items[items.length - 1] === title(product)) items.pop();
  return items.length ? items.join(' > ') : undefined;
}

/** The product a page is about when it has several: a group, else the one at the page's URL, else one with offers. */
function mainProduct(nodes: Node[], ctx: PageContext): Node | undefined {
  const products = nodes.filter(isProduct);
  // Variants inside a group are not candidates themselves.
  const inGroups = new Set(products.filter(isGroup).flatMap((g) => objects(g.hasVariant)));
  const candidates = products.filter((p) => !inGroups.has(p));
  const here = (p: Node) => {
    const u = absUrl(p.url, ctx.base) ?? absUrl(p['@id'], ctx.base);
    return !!u && (u.split('#')[0] === ctx.base.split('#')[0] || u.split('#')[0] === ctx.canonical);
  };
  return candidates.find(isGroup) ?? candidates.find(here) ?? candidates.find((p) => p.offers !== undefined) ?? candidates[0];
}

function fromOpenGraph(meta: Map<string, string[]>, ctx: PageContext): ProductProfile | null {
  const get = (...keys: string[]) => {
    for (const k of keys) {
      const v = str(meta.get(k)?.[0]);
      if (v) return v;
    }
    return undefined;
  };
  const ogType = get('og:type') ?? '';
  const amount = get('product:price:amount', 'og:price:amount', 'product:sale_price:amount');
  if (!/^product/i.test(ogType) && !amount) return null;
  const title = get('og:title', 'twitter:title');
  if (!title) return null;
  const currency = get('product:price:currency', 'og:price:currency', 'product:sale_price:currency');
  const sale = get('product:sale_price:amount');
  const original = get('product:original_price:amount');
  const price: ProductPrice | undefined = priceOf(sale ?? amount, currency);
  const was = priceOf(original ?? (sale && amount !== sale ? amount : undefined), get('product:original_price:currency') ?? currency);
  const variant: ProductVariant = compact({
    sku: get('product:retailer_item_id'),
    price,
    sale: price && was && was.amount > price.amount ? { originalPrice: was } : undefined,
    availability: availabilityOf(get('product:availability', 'og:availability')),
    images: (meta.get('og:image') ?? []).map((u) => absUrl(u, ctx.base)).filter((u): u is string => !!u).map((url) => ({ url })),
  });
  if (variant.images && !variant.images.length) delete variant.images;
  return compact({
    title,
    brand: get('product:brand', 'og:brand'),
    category: get('product:category') ?? ctx.breadcrumb,
    url: ctx.canonical ?? absUrl(get('og:url'), ctx.base) ?? ctx.base,
    description: get('og:description', 'description'),
    variants: [variant],
  });
}

/** Fills what the chosen source left out (brand, category, description) from the others. */
function fill(p: ProductProfile, others: Array<ProductProfile | null>): ProductProfile {
  for (const o of others) {
    if (!o) continue;
    p.brand ??= o.brand;
    p.category ??= o.category;
    p.description ??= o.description;
  }
  return compact(p);
}

export function extractProductFrom($: CheerioAPI, pageUrl: string): ProductResult {
  const meta = metaTags($);
  const ctx: PageContext = { base: pageUrl, canonical: absUrl($('link[rel~="canonical"]').first().attr('href'), pageUrl) ?? absUrl(meta.get('og:url')?.[0], pageUrl) };
  const ld = jsonLdNodes($);
  const md = microdataNodes($);
  const mdFlat = md.flatMap(function flat(n: Node): Node[] {
    return [n, ...Object.values(n).flatMap((v) => objects(v).flatMap(flat))];
  });
  ctx.breadcrumb = breadcrumbOf(ld, (n) => str(n.name)) ?? breadcrumbOf(mdFlat, (n) => str(n.name));
  const ldMain = mainProduct(ld, ctx);
  const mdMain = mainProduct(mdFlat, ctx);
  const fromLd = ldMain ? fromNode(ldMain, ctx) : null;
  const fromMd = mdMain ? fromNode(mdMain, ctx) : null;
  const fromOg = fromOpenGraph(meta, ctx);
  if (fromLd) return { product: fill(fromLd, [fromMd, fromOg]), source: 'json-ld' };
  if (fromMd) return { product: fill(fromMd, [fromOg]), source: 'microdata' };
  if (fromOg) return { product: fromOg, source: 'opengraph' };
  return { product: null, warning: NO_PRODUCT_WARNING };
}

export function extractProduct(html: string, pageUrl: string): ProductResult {
  return extractProductFrom(load(html), pageUrl);
}
