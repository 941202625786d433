import type { TransformOptions, TransformResult } from './types';
import { cleanPage, serializeHtml } from './clean';
import { parsePage } from './dom';
import { canonicalOf, imagesOf, linksOf } from './links';
import { pageToMarkdown } from './markdown';
import { metadataOf } from './metadata';
import { scanPage } from './scan';

/**
 * The version of what transformHtml produces for a given page and options. Cache entries keep
 * the outputs of a conversion (page_cache.outputs) under it, so raise it with every change to
 * the output: old entries are then converted again instead of served. transform-version.test.ts
 * fails when the output of its reference pages changes while this stays the same.
 */
export const TRANSFORM_VERSION = 2;

/**
 * One HTML page → the requested outputs. The document is parsed once (dom.ts): one walk of
 * the original tree gathers metadata, links and images (links are all the page's links, not
 * only the main content's), then the same tree is cleaned in place; the html format is its
 * serialisation and markdown is written from the tree itself, so no format parses again.
 */
export function transformHtml(rawHtml: string, baseUrl: string, opts: TransformOptions): TransformResult {
  const page = parsePage(rawHtml);
  const scan = scanPage(page.doc);
  const result: TransformResult = { metadata: metadataOf(scan, baseUrl) };
  if (opts.want.links) {
    result.links = linksOf(scan, baseUrl);
    const canonical = canonicalOf(scan, baseUrl);
    if (canonical) result.canonical = canonical;
  }
  if (opts.want.images) result.images = imagesOf(scan, baseUrl);

  if (opts.want.html || opts.want.markdown) {
    cleanPage(page, baseUrl, {
      onlyMainContent: opts.onlyMainContent,
      includeTags: opts.includeTags,
      excludeTags: opts.excludeTags,
      baseHref: scan.baseHref,
    });
    // html first: markdown conversion collapses the tree's whitespace in place.
    if (opts.want.html) result.html = serializeHtml(page);
    if (opts.want.markdown) result.markdown = pageToMarkdown(page, { removeBase64Images: opts.removeBase64Images });
  }
  return result;
}

/** A non-HTML text body (text/plain, markdown, JSON…): the text is the markdown. */
export function transformText(text: string): TransformResult {
  return { markdown: text, metadata: {} };
}
