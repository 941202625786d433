import type { AnyNode, Element, ParentNode, Text } from 'domhandler';
import { isTag, isText, parsePage, type Page } from './dom';
import { tableCell, tableModeOf, tableRowMarkdown, tableMarkdown } from './markdown-tables';

/**
 * HTML → markdown by walking the parsed tree directly (no second parse, no DOM emulation).
 * It keeps turndown's conventions, which users and tests rely on: its whitespace collapsing
 * and block joining, ATX headings, `-` bullets, fenced code, inline links, `_em_`/`**strong**`,
 * `~~strike~~`, `* * *` rules and its escaping of markdown syntax in text; plus our own rules
 * (GFM tables for header-less tables, layout tables unwrapped, block content in links flattened,
 * the base64 image placeholder). turndown took ~14 ms per benchmark page, mostly re-parsing the
 * cleaned HTML with domino and testing every node against every rule; this is one walk.
 */
export interface MarkdownOptions {
  /** Replace `data:` image sources with a placeholder (the alt text stays). */
  removeBase64Images: boolean;
}

export const BASE64_IMAGE_PLACEHOLDER = '<base64-image-removed>';

const BLOCK = new Set([
  'address', 'article', 'aside', 'audio', 'blockquote', 'body', 'canvas', 'center', 'dd', 'dir', 'div', 'dl', 'dt',
  'fieldset', 'figcaption', 'figure', 'footer', 'form', 'frameset', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header',
  'hgroup', 'hr', 'html', 'isindex', 'li', 'main', 'menu', 'nav', 'noframes', 'noscript', 'ol', 'output', 'p', 'pre',
  'section', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'ul', 'details', 'summary',
]);
const VOID = new Set(['area', 'base', 'br', 'col', 'command', 'embed', 'hr', 'img', 'input', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
/** Elements that are never text: their content is dropped (an inline <svg>'s titles are icon names). */
const SKIPPED = new Set(['head', 'title', 'script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'canvas', 'audio', 'video', 'select', 'datalist']);
/** Not "blank" even without text (turndown's rule: an empty link or cell still means something). */
const MEANINGFUL_WHEN_BLANK = new Set(['a', 'table', 'thead', 'tbody', 'tfoot', 'th', 'td']);

export const isBlockElement = (name: string) => BLOCK.has(name);

// ---- whitespace (turndown's collapse-whitespace, on the domhandler tree) ----

/**
 * Collapses runs of ASCII whitespace in text to one space and drops the spaces a browser would
 * not render (at block edges, after a space), in document order. Mutates the text nodes: the
 * tree is the transform's own and is not serialised after this.
 */
function collapseWhitespace(root: ParentNode): void {
  let prevText: Text | null = null;
  let keepLeadingWs = false;
  const onElement = (name: string) => {
    if (BLOCK.has(name) || name === 'br') {
      if (prevText && prevText.data.endsWith(' ')) prevText.data = prevText.data.slice(0, -1);
      prevText = null;
      keepLeadingWs = false;
    } else if (VOID.has(name) || name === 'pre') {
      prevText = null;
      keepLeadingWs = true;
    } else if (prevText) {
      keepLeadingWs = false;
    }
  };
  const visit = (node: ParentNode) => {
    for (const c of node.children) {
      if (isText(c)) {
        let text = c.data.replace(/[ \r\n\t]+/g, ' ');
        if ((!prevText || prevText.data.endsWith(' ')) && !keepLeadingWs && text.charCodeAt(0) === 32) text = text.slice(1);
        c.data = text;
        if (text) {
          prevText = c;
          // turndown re-parsed serialised HTML, so adjacent text nodes (left where a comment
          // was removed) were one: only the first after a void element keeps its leading space.
          keepLeadingWs = false;
        }
      } else if (isTag(c)) {
        onElement(c.name);
        if (c.name !== 'pre' && !SKIPPED.has(c.name) && c.children.length) {
          visit(c);
          onElement(c.name); // turndown's walk visits an element again on the way out
        }
      }
    }
  };
  visit(root);
  if (prevText && (prevText as Text).data.endsWith(' ')) (prevText as Text).data = (prevText as Text).data.slice(0, -1);
}

// ---- escaping ----

const ESCAPES: [RegExp, string][] = [
  [/\\/g, '\\\\'], [/\*/g, '\\*'], [/^-/g, '\\-'], [/^\+ /g, '\\+ '], [/^(=+)/g, '\\$1'], [/^(#{1,6}) /g, '\\$1 '],
  [/`/g, '\\`'], [/^~~~/g, '\\~~~'], [/\[/g, '\\['], [/\]/g, '\\]'], [/^>/g, '\\>'], [/_/g, '\\_'], [/^(\d+)\. /g, '$1\\. '],
];
const MAY_NEED_ESCAPE = /[\\*`[\]_]|^[-+=#~>\d]/;

/** Markdown syntax in text is escaped (turndown's list), so text never turns into markup. */
export function escapeMarkdown(s: string): string {
  if (!MAY_NEED_ESCAPE.test(s)) return s;
  for (const [re, rep] of ESCAPES) s = s.replace(re, rep);
  return s;
}

// ---- joining ----

const trimLeadingNewlines = (s: string) => {
  let i = 0;
  while (i < s.length && s.charCodeAt(i) === 10) i++;
  return i ? s.slice(i) : s;
};
const trimTrailingNewlines = (s: string) => {
  let i = s.length;
  while (i > 0 && s.charCodeAt(i - 1) === 10) i--;
  return i < s.length ? s.slice(0, i) : s;
};
const trimNewlines = (s: string) => trimTrailingNewlines(trimLeadingNewlines(s));
/** Whitespace that text can carry at an element's edge (newlines there come from block markup). */
const isEdgeWs = (c: number) => c === 32 || c === 9 || c === 13 || c === 0xa0 || (c > 0x1fff && /\s/.test(String.fromCharCode(c)));

/** Appends a replacement, merging the newlines around the seam to at most two (turndown's join). */
function join(out: string[], replacement: string): void {
  if (!replacement) return;
  const tail = out.length ? out.pop()! : '';
  const s1 = trimTrailingNewlines(tail);
  const s2 = trimLeadingNewlines(replacement);
  const nls = Math.max(tail.length - s1.length, replacement.length - s2.length);
  if (s1) out.push(s1);
  if (nls) out.push(nls >= 2 ? '\n\n' : '\n');
  if (s2) out.push(s2);
}

function cleanAttribute(value: string | undefined): string {
  return value ? value.replace(/(\n+\s*)+/g, '\n') : '';
}

function escapeLinkDestination(destination: string): string {
  const escaped = destination.replace(/([<>()])/g, '\\$1');
  return escaped.includes(' ') ? `<${escaped}>` : escaped;
}

function titlePart(el: Element): string {
  const title = cleanAttribute(el.attribs.title);
  return title ? ` "${title.replace(/"/g, '\\"')}"` : '';
}

/** The next sibling that renders something (whitespace collapsed away does not count). */
function hasNextSibling(node: AnyNode): boolean {
  for (let n = node.next; n; n = n.next) {
    if (isText(n) ? n.data !== '' : isTag(n)) return true;
  }
  return false;
}

function elementIndex(el: Element): number {
  let i = 0;
  for (let n = el.prev; n; n = n.prev) if (isTag(n)) i++;
  return i;
}

function lastElementChild(el: ParentNode): Element | null {
  for (let i = el.children.length - 1; i >= 0; i--) {
    const c = el.children[i];
    if (isTag(c)) return c;
  }
  return null;
}

function firstChild(el: Element): AnyNode | null {
  for (const c of el.children) if (!isText(c) || c.data !== '') return c;
  return null;
}

/** textContent, except that a <br> (some highlighters end lines with one) is a newline. */
function rawText(node: AnyNode): string {
  if (isText(node)) return node.data;
  if (!isTag(node)) return '';
  if (node.name === 'br') return '\n';
  let s = '';
  for (const c of node.children) s += rawText(c);
  return s;
}

const HIGHLIGHT_CLASS = /highlight-(?:text|source)-([a-z0-9]+)/;

function codeLanguage(pre: Element, code: Element | null): string {
  const fromClass = (el: Element | null | undefined) => (el ? /(?:^|\s)lang(?:uage)?-(\S+)/.exec(el.attribs.class ?? '')?.[1] : undefined);
  const parent = pre.parent && isTag(pre.parent) ? pre.parent : null;
  return fromClass(code) ?? fromClass(pre) ?? (parent ? HIGHLIGHT_CLASS.exec(parent.attribs.class ?? '')?.[1] : undefined) ?? '';
}

function fencedCode(code: string, language: string): string {
  let size = 3;
  for (const m of code.matchAll(/^`{3,}/gm)) if (m[0].length >= size) size = m[0].length + 1;
  const fence = '`'.repeat(size);
  return `\n\n${fence}${language}\n${code.replace(/\n$/, '')}\n${fence}\n\n`;
}

function inlineCode(content: string): string {
  if (!content) return '';
  content = content.replace(/\r?\n|\r/g, ' ');
  const extraSpace = /^`|^ .*?[^ ].* $|`$/.test(content) ? ' ' : '';
  let delimiter = '`';
  const runs: string[] = content.match(/`+/gm) ?? [];
  while (runs.includes(delimiter)) delimiter += '`';
  return delimiter + extraSpace + content + extraSpace + delimiter;
}

class Converter {
  constructor(private readonly opts: MarkdownOptions) {}

  children(node: ParentNode, inCode: boolean): string {
    const out: string[] = [];
    for (const c of node.children) {
      if (isText(c)) {
        if (c.data) join(out, inCode ? c.data : escapeMarkdown(c.data));
      } else if (isTag(c)) {
        join(out, this.element(c, inCode));
      }
    }
    return out.join('');
  }

  element(el: Element, inCode: boolean): string {
    const name = el.name;
    if (SKIPPED.has(name)) return '';
    switch (name) {
      case 'br':
        return '  \n';
      case 'hr':
        return '\n\n* * *\n\n';
      case 'img':
        return this.image(el);
      case 'input':
        return el.attribs.type?.toLowerCase() === 'checkbox' && el.parent && isTag(el.parent) && el.parent.name === 'li'
          ? (el.attribs.checked !== undefined ? '[x] ' : '[ ] ')
          : '';
      case 'pre':
        return this.pre(el);
      case 'code':
        return inlineCode(rawText(el));
      case 'div': {
        // GitHub's highlighted blocks: <div class="highlight highlight-source-js"><pre>…
        const first = firstChild(el);
        if (isTag(first) && first.name === 'pre' && HIGHLIGHT_CLASS.test(el.attribs.class ?? '')) return this.pre(first);
        break;
      }
    }
    if (VOID.has(name)) return '';

    let content = this.children(el, inCode || name === 'code');
    if (!content.trim() && !MEANINGFUL_WHEN_BLANK.has(name)) return BLOCK.has(name) && name !== 'li' ? '\n\n' : '';

    // Whitespace at the edges of an inline element goes outside its markup (`**a** b`, not `**a **b`).
    let leading = '';
    let trailing = '';
    if (!BLOCK.has(name)) {
      let i = 0;
      while (i < content.length && isEdgeWs(content.charCodeAt(i))) i++;
      let j = content.length;
      while (j > i && isEdgeWs(content.charCodeAt(j - 1))) j--;
      if (i > 0 || j < content.length) {
        leading = content.slice(0, i);
        trailing = content.slice(j);
        content = content.trim();
      }
    }
    return leading + this.replacement(el, content) + trailing;
  }

  private replacement(el: Element, content: string): string {
    switch (el.name) {
      case 'p':
        return `\n\n${content}\n\n`;
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': {
        // A heading must stay on one line or it stops being a heading.
        const text = content.replace(/\s*\n+\s*/g, ' ').trim();
        return text ? `\n\n${'#'.repeat(Number(el.name[1]))} ${text}\n\n` : '';
      }
      case 'blockquote':
        return `\n\n${trimNewlines(content).replace(/^/gm, '> ')}\n\n`;
      case 'ul': case 'ol': {
        const parent = el.parent;
        if (parent && isTag(parent) && parent.name === 'li' && lastElementChild(parent) === el) return `\n${content}`;
        return `\n\n${content}\n\n`;
      }
      case 'li':
        return this.listItem(el, content);
      case 'a': {
        const href = el.attribs.href;
        if (!href) return content;
        // Block content inside a link (cards: <a><h3>…</h3><p>…</p></a>) would put newlines
        // inside [...] and break the link; flatten it to one line.
        const text = content.replace(/^[ \t]*#{1,6}[ \t]+/gm, '').trim().replace(/\s*\n+\s*/g, ' ');
        return `[${text}](${escapeLinkDestination(href)}${titlePart(el)})`;
      }
      case 'em': case 'i':
        return content.trim() ? `_${content}_` : '';
      case 'strong': case 'b':
        return content.trim() ? `**${content}**` : '';
      case 'del': case 's': case 'strike':
        return content.trim() ? `~~${content}~~` : '';
      case 'table': case 'tr': case 'th': case 'td': case 'thead': case 'tbody': case 'tfoot': case 'caption':
        return this.table(el, content);
      default:
        return BLOCK.has(el.name) ? `\n\n${content}\n\n` : content;
    }
  }

  private listItem(el: Element, content: string): string {
    let prefix = '- ';
    const parent = el.parent;
    if (parent && isTag(parent) && parent.name === 'ol') {
      const start = Number.parseInt(parent.attribs.start ?? '', 10);
      prefix = `${(Number.isFinite(start) ? start : 1) + elementIndex(el)}. `;
    }
    const isParagraph = content.endsWith('\n');
    const body = (trimNewlines(content) + (isParagraph ? '\n' : '')).replace(/\n/g, `\n${' '.repeat(prefix.length)}`);
    return prefix + body + (hasNextSibling(el) ? '\n' : '');
  }

  private table(el: Element, content: string): string {
    const mode = tableModeOf(el);
    if (el.name === 'caption') return `\n\n${content.trim()}\n\n`;
    if (mode === 'layout') return `\n\n${content}\n\n`;
    switch (el.name) {
      case 'td': case 'th':
        return tableCell(el, content);
      case 'tr':
        return tableRowMarkdown(el, content);
      case 'table':
        return tableMarkdown(content);
      default:
        return content;
    }
  }

  private pre(el: Element): string {
    const first = firstChild(el);
    const code = isTag(first) && first.name === 'code' ? first : null;
    return fencedCode(rawText(el), codeLanguage(el, code));
  }

  private image(el: Element): string {
    const src = (el.attribs.src ?? '').trim();
    if (!src) return '';
    const alt = escapeMarkdown(cleanAttribute(el.attribs.alt));
    if (this.opts.removeBase64Images && /^data:/i.test(src)) return `![${alt}](${BASE64_IMAGE_PLACEHOLDER})`;
    return `![${alt}](${escapeLinkDestination(src)}${titlePart(el)})`;
  }
}

/**
 * Blank-line clean-up outside fenced code blocks (whose blank lines are
 * content): whitespace-only lines become empty and 3+ newlines become 2.
 */
const FENCED_BLOCK = /^[ \t]*(`{3,}|~{3,})[^\n]*\n[\s\S]*?\n[ \t]*\1[ \t]*$/gm;

export function tidyMarkdown(md: string): string {
  const tidy = (s: string) => s.replace(/^[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n');
  if (!md.includes('```') && !md.includes('~~~')) return tidy(md).trim();
  let out = '';
  let last = 0;
  for (const m of md.matchAll(FENCED_BLOCK)) {
    out += tidy(md.slice(last, m.index)) + m[0];
    last = (m.index ?? 0) + m[0].length;
  }
  return (out + tidy(md.slice(last))).trim();
}

/** Markdown of a parsed subtree (normally a cleaned page's <body>). Collapses its whitespace in place. */
export function nodeToMarkdown(root: ParentNode, opts: MarkdownOptions): string {
  collapseWhitespace(root);
  const md = new Converter(opts).children(root, false);
  return tidyMarkdown(md.replace(/^[\t\r\n]+/, '').replace(/[\t\r\n\s]+$/, ''));
}

export function pageToMarkdown(page: Page, opts: MarkdownOptions): string {
  return nodeToMarkdown(page.body, opts);
}

export function htmlToMarkdown(html: string, opts: MarkdownOptions): string {
  if (!html) return '';
  return pageToMarkdown(parsePage(html), opts);
}
