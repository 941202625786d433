import type { CheerioAPI } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';

/**
 * The page's structured data as plain JSON-LD-shaped objects: the JSON-LD blocks (with their
 * @graph and nesting flattened into a node list), microdata items read into the same shape
 * (`@type` plus one key per itemprop), and the Open Graph / product meta tags.
 */
export type Node = Record<string, unknown>;

/** Bounds: a page with thousands of items is a catalogue listing, not a product page. */
const MAX_NODES = 2_000;
const MAX_BLOCK_CHARS = 2_000_000;

function parseBlock(raw: string): unknown {
  const text = raw
    .replace(/^\s*(?:<!--|\/\*\s*<!\[CDATA\[\s*\*\/)/, '')
    .replace(/(?:-->|\/\*\s*\]\]>\s*\*\/)\s*$/, '')
    .trim()
    .replace(/;\s*$/, '');
  try {
    return JSON.parse(text);
  } catch {
    try {
      // Raw line breaks inside strings are the usual reason hand-written blocks fail to parse.
      return JSON.parse(text.replace(/[\r\n\t]+/g, ' '));
    } catch {
      return undefined;
    }
  }
}

/** Every object in the JSON-LD blocks (arrays, @graph and nested values included), in document order. */
export function jsonLdNodes($: CheerioAPI): Node[] {
  const out: Node[] = [];
  const visit = (v: unknown, depth: number) => {
    if (out.length >= MAX_NODES || depth > 12 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x, depth + 1);
      return;
    }
    const o = v as Node;
    if (o['@type'] !== undefined) out.push(o);
    for (const [k, x] of Object.entries(o)) if (k !== '@context' && typeof x === 'object') visit(x, depth + 1);
  };
  $('script[type]').each((_, el) => {
    const type = ($(el).attr('type') ?? '').toLowerCase().split(';')[0]!.trim();
    if (type !== 'application/ld+json') return;
    const raw = $(el).text();
    if (raw.length <= MAX_BLOCK_CHARS) visit(parseBlock(raw), 0);
  });
  return out;
}

/** The schema.org type names of a node ("Product", from "http://schema.org/Product" too). */
export function typesOf(n: Node): string[] {
  const t = n['@type'];
  const list = Array.isArray(t) ? t : [t];
  return list.filter((x): x is string => typeof x === 'string').map((x) => x.replace(/^https?:\/\/schema\.org\//i, ''));
}

const URL_TAGS = new Set(['a', 'area', 'link']);
const SRC_TAGS = new Set(['img', 'audio', 'video', 'source', 'iframe', 'embed', 'track']);

function propValue($: CheerioAPI, el: Element, depth: number): unknown {
  const $el = $(el);
  if ($el.is('[itemscope]')) return readItem($, el, depth + 1);
  const tag = el.tagName.toLowerCase();
  const content = $el.attr('content');
  if (content !== undefined) return content;
  if (tag === 'meta') return '';
  if (URL_TAGS.has(tag)) return $el.attr('href') ?? '';
  if (SRC_TAGS.has(tag)) return $el.attr('src') ?? '';
  if (tag === 'time') return $el.attr('datetime') ?? $el.text();
  if (tag === 'data' || tag === 'meter') return $el.attr('value') ?? $el.text();
  return $el.text();
}

/** A microdata item as a JSON-LD-shaped object. */
function readItem($: CheerioAPI, item: Element, depth: number): Node {
  const node: Node = { '@type': ($(item).attr('itemtype') ?? '').trim().split(/\s+/)[0] ?? '' };
  if (depth > 8) return node;
  $(item)
    .find('[itemprop]')
    .each((_, el) => {
      // Only properties of this item: their nearest enclosing item is `item`.
      const owner = $(el).parent().closest('[itemscope]')[0];
      if (owner !== item) return;
      const value = propValue($, el, depth);
      for (const name of ($(el).attr('itemprop') ?? '').trim().split(/\s+/)) {
        if (!name) continue;
        const prev = node[name];
        node[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
      }
    });
  return node;
}

/** Top-level microdata items (not themselves a property of another item). */
export function microdataNodes($: CheerioAPI): Node[] {
  const out: Node[] = [];
  $('[itemscope]').each((_, el) => {
    if (out.length >= MAX_NODES) return false;
    if ($(el).is('[itemprop]')) return;
    out.push(readItem($, el as Element, 0));
    return;
  });
  return out;
}

/** `<meta property|name="…" content="…">` values by lower-case key, all values in order. */
export function metaTags($: CheerioAPI): Map<string, string[]> {
  const out = new Map<string, string[]>();
  $('meta').each((_, el: AnyNode) => {
    const $el = $(el as Element);
    const key = ($el.attr('property') ?? $el.attr('name') ?? '').trim().toLowerCase();
    const content = $el.attr('content');
    if (!key || content === undefined) return;
    const list = out.get(key) ?? [];
    list.push(content);
    out.set(key, list);
  });
  return out;
}
