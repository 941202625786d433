import { load, type CheerioAPI } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { WdsError } from '@wds/errors';
import { keepMainContent } from './main-content';
import { documentBaseUrl, largestSrcsetCandidate, resolveUrl } from './urls';

export interface CleanOptions {
  onlyMainContent: boolean;
  /** CSS selectors; when non-empty only matching elements are kept. */
  includeTags?: string[];
  /** CSS selectors of elements to drop (applied after includeTags). */
  excludeTags?: string[];
}

export interface CleanResult {
  /** The cleaned document (the same object that was passed to cleanDocument). */
  $: CheerioAPI;
  /** Serialised cleaned document. */
  html: string;
}

/** Never part of the content a caller wants back. */
const ALWAYS_REMOVED = 'script, style, noscript, meta, head, link, template';

/** Attributes holding a single URL that must survive being moved off the page. */
const URL_ATTRIBUTES = ['href', 'src', 'poster', 'action'] as const;

/** Parse with parse5 (via cheerio) so the tree matches what a browser builds. */
export function loadHtml(html: string): CheerioAPI {
  return load(html);
}

/**
 * Throws BAD_REQUEST for a selector cheerio cannot parse. Exported so the API
 * layer can reject bad include/exclude tags before any fetching happens.
 */
export function validateSelectors(selectors: string[] | undefined, field = 'selector'): void {
  if (!selectors) return;
  const $ = load('');
  for (const sel of selectors) {
    try {
      $(sel);
    } catch (cause) {
      throw new WdsError('BAD_REQUEST', { message: `Invalid ${field}: ${JSON.stringify(sel)}`, cause });
    }
  }
}

function select($: CheerioAPI, selector: string, field: string) {
  try {
    return $(selector);
  } catch (cause) {
    throw new WdsError('BAD_REQUEST', { message: `Invalid ${field}: ${JSON.stringify(selector)}`, cause });
  }
}

function nonEmpty(list: string[] | undefined): string[] {
  return (list ?? []).map((s) => s.trim()).filter(Boolean);
}

/** Comments and the doctype carry no content; removing them keeps output small. */
function removeCommentsAndDirectives(nodes: AnyNode[], $: CheerioAPI): void {
  for (const node of [...nodes]) {
    if (node.type === 'comment' || node.type === 'directive') $(node).remove();
    else if ('children' in node && node.children.length) removeCommentsAndDirectives(node.children, $);
  }
}

function isRootElement(el: AnyNode): boolean {
  return el.type === 'tag' && ((el as Element).tagName === 'html' || (el as Element).tagName === 'body');
}

/** Keep only the outermost elements matching any of the selectors, in document order. */
function applyIncludeTags($: CheerioAPI, includeTags: string[]): void {
  const matched = new Set<AnyNode>();
  for (const sel of includeTags) select($, sel, 'includeTags').each((_, el) => { matched.add(el); });
  const body = $('body');
  // Selecting `body`/`html` means "everything": leave the body as it is.
  if ([...matched].some(isRootElement)) return;
  const outermost = $('body *')
    .toArray()
    .filter((el) => matched.has(el) && !$(el).parents().toArray().some((p) => matched.has(p)));
  for (const el of outermost) $(el).remove();
  body.empty();
  for (const el of outermost) body.append(el);
}

function applyExcludeTags($: CheerioAPI, excludeTags: string[]): void {
  for (const sel of excludeTags) {
    select($, sel, 'excludeTags')
      .filter((_, el) => !isRootElement(el))
      .remove();
  }
}

/**
 * `srcset` is resolved to its largest candidate and stored as `src`, because
 * consumers (markdown, LLMs) want one URL and the biggest is the best quality.
 * For `<picture>`, the `<img>` falls back to the first `<source>` when it has no src.
 */
function resolveResponsiveImages($: CheerioAPI): void {
  $('picture').each((_, pic) => {
    const $pic = $(pic);
    const img = $pic.find('img').first();
    if (img.length && !img.attr('src')?.trim() && !img.attr('srcset')) {
      const first = $pic.find('source[srcset]').first();
      const best = largestSrcsetCandidate(first.attr('srcset'));
      if (best) img.attr('src', best);
    }
  });
  $('img[srcset], source[srcset]').each((_, el) => {
    const $el = $(el);
    const best = largestSrcsetCandidate($el.attr('srcset'));
    if (best) $el.attr('src', best);
    $el.removeAttr('srcset').removeAttr('sizes');
  });
}

function absolutizeUrls($: CheerioAPI, base: string): void {
  for (const attr of URL_ATTRIBUTES) {
    $(`[${attr}]`).each((_, el) => {
      const raw = el.attribs[attr];
      const abs = resolveUrl(raw, base);
      if (abs) el.attribs[attr] = abs;
    });
  }
}

/**
 * Clean a parsed document in place (the caller must be done reading the
 * original, e.g. for metadata and links). Order matters: the base URL is read
 * before <head> is removed; include/exclude/main-content run before URL
 * rewriting so that only surviving elements are touched.
 *
 * includeTags, when given, is an explicit choice of content, so the
 * onlyMainContent heuristic is not applied on top of it (it would otherwise
 * strip e.g. an explicitly included `nav`).
 */
export function cleanDocument($: CheerioAPI, pageUrl: string, opts: CleanOptions): CleanResult {
  const base = documentBaseUrl($, pageUrl);
  const includeTags = nonEmpty(opts.includeTags);
  const excludeTags = nonEmpty(opts.excludeTags);

  removeCommentsAndDirectives($.root().toArray(), $);
  $(ALWAYS_REMOVED).remove();

  if (includeTags.length) applyIncludeTags($, includeTags);
  if (excludeTags.length) applyExcludeTags($, excludeTags);
  if (opts.onlyMainContent && !includeTags.length) keepMainContent($);

  resolveResponsiveImages($);
  absolutizeUrls($, base);
  return { $, html: $.html() };
}

export function cleanHtml(html: string, pageUrl: string, opts: CleanOptions): CleanResult {
  return cleanDocument(loadHtml(html), pageUrl, opts);
}
