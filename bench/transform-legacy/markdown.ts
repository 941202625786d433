import TurndownService from 'turndown';
import { highlightedCodeBlock, taskListItems } from 'turndown-plugin-gfm';
import { tableRules } from './markdown-tables';

export interface MarkdownOptions {
  /** Replace `data:` image sources with a placeholder (the alt text stays). */
  removeBase64Images: boolean;
}

export const BASE64_IMAGE_PLACEHOLDER = '<base64-image-removed>';

/** The subset of the DOM (domino's, inside turndown) the rules below touch. */
interface DomNode {
  nodeName: string;
  parentNode: DomNode | null;
  children: ArrayLike<DomNode>;
  nextSibling: DomNode | null;
  getAttribute(name: string): string | null;
}

/**
 * Per-call options read by rules of the shared service. turndown() is
 * synchronous, so setting this around the call is safe even under concurrency.
 */
const current: MarkdownOptions = { removeBase64Images: false };

function cleanAttribute(value: string | null): string {
  return value ? value.replace(/(\n+\s*)+/g, '\n') : '';
}

function escapeLinkDestination(destination: string): string {
  const escaped = destination.replace(/([<>()])/g, '\\$1');
  return escaped.includes(' ') ? `<${escaped}>` : escaped;
}

function titlePart(node: DomNode): string {
  const title = cleanAttribute(node.getAttribute('title'));
  return title ? ` "${title.replace(/"/g, '\\"')}"` : '';
}

function trimNewlines(s: string): string {
  return s.replace(/^\n+/, '').replace(/\n+$/, '');
}

function createService(): TurndownService {
  const service = new TurndownService({
    headingStyle: 'atx',
    bulletListMarker: '-',
    codeBlockStyle: 'fenced',
    fence: '```',
    emDelimiter: '_',
    strongDelimiter: '**',
    linkStyle: 'inlined',
  });
  // Tables are rendered by our own rules (see markdown-tables.ts): the gfm
  // plugin's `tables` keeps header-less tables as raw HTML.
  service.use([highlightedCodeBlock, taskListItems]);
  // Callers normally pass cleaned HTML, but a raw document must not leak its
  // title or scripts into the text.
  service.remove(['head', 'title', 'script', 'style', 'noscript', 'template'] as TurndownService.Filter);

  // The plugin's strikethrough writes a single `~`, which only GitHub renders.
  service.addRule('strikethrough', {
    filter: ['del', 's', 'strike'] as TurndownService.Filter,
    replacement: (content) => (content.trim() ? `~~${content}~~` : ''),
  });

  // A heading must stay on one line or it stops being a heading.
  service.addRule('heading', {
    filter: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'],
    replacement: (content, node) => {
      const text = content.replace(/\s*\n+\s*/g, ' ').trim();
      if (!text) return '';
      return `\n\n${'#'.repeat(Number(node.nodeName.charAt(1)))} ${text}\n\n`;
    },
  });

  // `- item` / `1. item` (turndown's default pads the marker to 4 columns).
  service.addRule('listItem', {
    filter: 'li',
    replacement: (content, el) => {
      const node = el as unknown as DomNode;
      let prefix = '- ';
      const parent = node.parentNode;
      if (parent && parent.nodeName === 'OL') {
        const start = Number.parseInt(parent.getAttribute('start') ?? '', 10);
        const index = Array.prototype.indexOf.call(parent.children, node);
        prefix = `${(Number.isFinite(start) ? start : 1) + index}. `;
      }
      const isParagraph = /\n$/.test(content);
      const body = (trimNewlines(content) + (isParagraph ? '\n' : '')).replace(/\n/g, `\n${' '.repeat(prefix.length)}`);
      return prefix + body + (node.nextSibling ? '\n' : '');
    },
  });

  // Block content inside a link (cards: <a><h3>…</h3><p>…</p></a>) would put
  // newlines inside [...] and break the link; flatten it to one line.
  service.addRule('inlineLink', {
    filter: (el) => el.nodeName === 'A' && !!el.getAttribute('href'),
    replacement: (content, el) => {
      const node = el as unknown as DomNode;
      const text = content
        .replace(/^[ \t]*#{1,6}[ \t]+/gm, '')
        .trim()
        .replace(/\s*\n+\s*/g, ' ');
      return `[${text}](${escapeLinkDestination(node.getAttribute('href') ?? '')}${titlePart(node)})`;
    },
  });

  service.addRule('image', {
    filter: 'img',
    replacement: (_content, el) => {
      const node = el as unknown as DomNode;
      const src = (node.getAttribute('src') ?? '').trim();
      if (!src) return '';
      const alt = service.escape(cleanAttribute(node.getAttribute('alt')));
      if (current.removeBase64Images && /^data:/i.test(src)) return `![${alt}](${BASE64_IMAGE_PLACEHOLDER})`;
      return `![${alt}](${escapeLinkDestination(src)}${titlePart(node)})`;
    },
  });

  for (const [key, rule] of Object.entries(tableRules)) service.addRule(key, rule);
  return service;
}

/** Built once: constructing the service and its rule list is not free, and this is the crawl hot path. */
const service = createService();

/**
 * Blank-line clean-up outside fenced code blocks (whose blank lines are
 * content): whitespace-only lines become empty and 3+ newlines become 2.
 */
const FENCED_BLOCK = /^[ \t]*(`{3,}|~{3,})[^\n]*\n[\s\S]*?\n[ \t]*\1[ \t]*$/gm;

export function tidyMarkdown(md: string): string {
  const tidy = (s: string) => s.replace(/^[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n');
  let out = '';
  let last = 0;
  for (const m of md.matchAll(FENCED_BLOCK)) {
    out += tidy(md.slice(last, m.index)) + m[0];
    last = (m.index ?? 0) + m[0].length;
  }
  return (out + tidy(md.slice(last))).trim();
}

export function htmlToMarkdown(html: string, opts: MarkdownOptions): string {
  current.removeBase64Images = opts.removeBase64Images;
  try {
    return tidyMarkdown(service.turndown(html));
  } finally {
    current.removeBase64Images = false;
  }
}
