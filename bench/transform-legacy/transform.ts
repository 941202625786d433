import type { TransformOptions, TransformResult } from './types';
import { cleanDocument, loadHtml } from './clean';
import { extractImages, extractLinks } from './links';
import { htmlToMarkdown } from './markdown';
import { extractMetadata } from './metadata';

/**
 * One HTML page → the requested outputs. The document is parsed once: metadata,
 * links and images are read from the original tree first (links are all the
 * page's links, not only the main content's), then the same tree is cleaned in
 * place for html/markdown. Markdown, the expensive part, is built only if asked.
 */
export function transformHtml(rawHtml: string, baseUrl: string, opts: TransformOptions): TransformResult {
  const $ = loadHtml(rawHtml);
  const result: TransformResult = { metadata: extractMetadata($, baseUrl) };
  if (opts.want.links) result.links = extractLinks($, baseUrl);
  if (opts.want.images) result.images = extractImages($, baseUrl);

  if (opts.want.html || opts.want.markdown) {
    const cleaned = cleanDocument($, baseUrl, {
      onlyMainContent: opts.onlyMainContent,
      includeTags: opts.includeTags,
      excludeTags: opts.excludeTags,
    });
    if (opts.want.html) result.html = cleaned.html;
    if (opts.want.markdown) {
      const bodyHtml = cleaned.$('body').html() ?? cleaned.html;
      result.markdown = htmlToMarkdown(bodyHtml, { removeBase64Images: opts.removeBase64Images });
    }
  }
  return result;
}

/** A non-HTML text body (text/plain, markdown, JSON…): the text is the markdown. */
export function transformText(text: string): TransformResult {
  return { markdown: text, metadata: {} };
}
