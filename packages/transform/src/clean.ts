import { select } from 'cheerio-select';
import render from 'dom-serializer';
import type { AnyNode, ChildNode, Element, ParentNode } from 'domhandler';
import { WdsError } from '@wds/errors';
import { isTag, isText, parsePage, removeNodes, replaceChildren, type Page } from './dom';
import { keepMainContent } from './main-content';
import { documentBaseUrl, largestSrcsetCandidate, resolveUrl } from './urls';

export interface CleanOptions {
  onlyMainContent: boolean;
  /** CSS selectors; when non-empty only matching elements are kept. */
  includeTags?: string[];
  /** CSS selectors of elements to drop (applied after includeTags). */
  excludeTags?: string[];
  /** The document's `<base href>`, read before cleaning removes <head> (default: found here). */
  baseHref?: string;
}

export interface CleanResult {
  /** The cleaned page (the same object that was passed to cleanDocument). */
  page: Page;
  /** Serialised cleaned document. */
  html: string;
}

/** Never part of the content a caller wants back. */
const ALWAYS_REMOVED = new Set(['script', 'style', 'noscript', 'meta', 'head', 'link', 'template']);

/** Attributes holding a single URL that must survive being moved off the page. */
const URL_ATTRIBUTES = ['href', 'src', 'poster', 'action'] as const;

/** Parse once (dom.ts); every output of the transform is read from this tree. */
export function loadHtml(html: string): Page {
  return parsePage(html);
}

function compile(selector: string, field: string): void {
  try {
    select(selector, []);
  } catch (cause) {
    throw new WdsError('BAD_REQUEST', { message: `Invalid ${field}: ${JSON.stringify(selector)}`, cause });
  }
}

/**
 * Throws BAD_REQUEST for a selector that cannot be parsed. Exported so the API
 * layer can reject bad include/exclude tags before any fetching happens.
 */
export function validateSelectors(selectors: string[] | undefined, field = 'selector'): void {
  for (const sel of selectors ?? []) compile(sel, field);
}

function selectAll(root: AnyNode, selector: string, field: string): Element[] {
  compile(selector, field);
  return select(selector, root);
}

function nonEmpty(list: string[] | undefined): string[] {
  return (list ?? []).map((s) => s.trim()).filter(Boolean);
}

/**
 * A page whose text lives in <noscript> (a server-rendered copy for readers without JavaScript,
 * beside an empty app shell) is that text to a reader without JavaScript, which an HTTP fetch
 * is: its noscript boxes are kept (unwrapped) when they hold most of the visible text, at
 * least NOSCRIPT_MIN_CHARS. Otherwise a noscript is a tracking pixel or an "enable JavaScript"
 * notice, and goes.
 */
const NOSCRIPT_MIN_CHARS = 200;

function noscriptHoldsContent(body: ParentNode): boolean {
  let inside = 0;
  let outside = 0;
  const walk = (node: ParentNode, inNoscript: boolean) => {
    for (const c of node.children) {
      if (isText(c)) {
        const n = c.data.trim().length;
        if (inNoscript) inside += n;
        else outside += n;
      } else if (isTag(c) && c.name !== 'script' && c.name !== 'style' && c.name !== 'template') {
        walk(c, inNoscript || c.name === 'noscript');
      }
    }
  };
  walk(body, false);
  return inside >= NOSCRIPT_MIN_CHARS && inside > 2 * outside;
}

/** Comments, the doctype and elements that are never content, in one walk; noscript boxes unwrapped when `unwrapNoscript`. */
function removeNonContent(parent: ParentNode, unwrapNoscript: boolean): void {
  let changed = false;
  const kept: ChildNode[] = [];
  for (const c of parent.children) {
    if (unwrapNoscript && isTag(c) && c.name === 'noscript') {
      removeNonContent(c, true);
      kept.push(...c.children);
      changed = true;
      continue;
    }
    if (c.type === 'comment' || c.type === 'directive' || c.type === 'cdata' || (isTag(c) && ALWAYS_REMOVED.has(c.name))) {
      changed = true;
      continue;
    }
    kept.push(c);
    if (isTag(c) && c.children.length) removeNonContent(c, unwrapNoscript);
  }
  if (changed) replaceChildren(parent, kept);
}

const isRootElement = (el: Element) => el.name === 'html' || el.name === 'body';

/** Keep only the outermost elements matching any of the selectors, in document order. */
function applyIncludeTags(page: Page, includeTags: string[]): void {
  const matched = new Set<Element>();
  for (const sel of includeTags) for (const el of selectAll(page.doc, sel, 'includeTags')) matched.add(el);
  // Selecting `body`/`html` means "everything": leave the body as it is.
  if ([...matched].some(isRootElement)) return;
  const outermost: Element[] = [];
  const walk = (node: ParentNode) => {
    for (const c of node.children) {
      if (!isTag(c)) continue;
      if (matched.has(c)) outermost.push(c);
      else walk(c);
    }
  };
  walk(page.body);
  replaceChildren(page.body, outermost);
}

function applyExcludeTags(page: Page, excludeTags: string[]): void {
  for (const sel of excludeTags) removeNodes(selectAll(page.doc, sel, 'excludeTags').filter((el) => !isRootElement(el)));
}

/**
 * `srcset` is resolved to its largest candidate and stored as `src`, because
 * consumers (markdown, LLMs) want one URL and the biggest is the best quality.
 * For `<picture>`, the `<img>` falls back to the first `<source>` when it has no src.
 * URL attributes become absolute. One walk over what survived the cleaning.
 */
function finishAttributes(parent: ParentNode, base: string): void {
  for (const el of parent.children) {
    if (!isTag(el)) continue;
    const a = el.attribs;
    if (el.name === 'picture') pictureFallback(el);
    if (a.srcset !== undefined && (el.name === 'img' || el.name === 'source')) {
      const best = largestSrcsetCandidate(a.srcset);
      if (best) a.src = best;
      delete a.srcset;
      delete a.sizes;
    }
    for (const attr of URL_ATTRIBUTES) {
      const raw = a[attr];
      if (raw === undefined) continue;
      const abs = resolveUrl(raw, base);
      if (abs) a[attr] = abs;
    }
    if (el.children.length) finishAttributes(el, base);
  }
}

function pictureFallback(pic: Element): void {
  const img = select('img', pic, {}, 1)[0];
  if (!img || img.attribs.src?.trim() || img.attribs.srcset) return;
  const source = select('source[srcset]', pic, {}, 1)[0];
  const best = largestSrcsetCandidate(source?.attribs.srcset);
  if (best) img.attribs.src = best;
}

/** The cleaned document as HTML (the `html` format). */
export function serializeHtml(page: Page): string {
  return render(page.doc, { encodeEntities: 'utf8' });
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
export function cleanPage(page: Page, pageUrl: string, opts: CleanOptions): Page {
  const baseHref = 'baseHref' in opts ? opts.baseHref : select('base[href]', page.doc, {}, 1)[0]?.attribs.href;
  const base = documentBaseUrl(baseHref, pageUrl);
  const includeTags = nonEmpty(opts.includeTags);
  const excludeTags = nonEmpty(opts.excludeTags);

  removeNonContent(page.doc, noscriptHoldsContent(page.body));
  if (includeTags.length) applyIncludeTags(page, includeTags);
  if (excludeTags.length) applyExcludeTags(page, excludeTags);
  if (opts.onlyMainContent && !includeTags.length) keepMainContent(page);

  finishAttributes(page.body, base);
  return page;
}

export function cleanDocument(page: Page, pageUrl: string, opts: CleanOptions): CleanResult {
  cleanPage(page, pageUrl, opts);
  return { page, html: serializeHtml(page) };
}

export function cleanHtml(html: string, pageUrl: string, opts: CleanOptions): CleanResult {
  return cleanDocument(loadHtml(html), pageUrl, opts);
}
