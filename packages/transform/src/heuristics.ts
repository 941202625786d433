/**
 * When is the HTTP engine's HTML not the page a reader would see? `looksClientRendered` is the
 * escalation test: true means "render this URL in the browser instead".
 *
 * It is deliberately conservative about escalating pages that already carry real text, because a
 * browser render costs an order of magnitude more than the HTTP fetch: an empty app root or a
 * "please enable JavaScript" notice only counts while the visible text is short.
 *
 * Linear by construction: the page is read once, left to right, by a small tokenizer that only
 * ever searches forward from where it stands (`indexOf`) and jumps past what it found. An element
 * or comment that is never closed runs to the end of the document, as in a browser, so no opener
 * is scanned for twice. (The regex version it replaces was quadratic: 240 KB of `<!--` openers
 * took 19.5 s.) Regexes here only run on one tag's attributes or one noscript's text, and are
 * linear on those.
 */

/** Below this many visible characters a page with scripts is treated as a shell. */
const NEAR_EMPTY_CHARS = 200;
/** An empty app root / JS-required notice only escalates pages with less visible text than this. */
const SHORT_PAGE_CHARS = 1000;

const APP_ROOT_IDS = new Set(['root', 'app', '__next', '__nuxt', '___gatsby', 'svelte', 'q-app', 'main-app', 'react-root', 'app-root']);
const APP_ROOT_TAGS = new Set(['div', 'main', 'section']);
/** Angular's `<app-root></app-root>` and similar custom-element roots. */
const CUSTOM_ROOT_TAGS = new Set(['app-root', 'ng-app']);
/** Elements whose content is never visible text; skipped whole, up to their end tag. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg']);
const EXECUTABLE_TYPES = new Set(['module', 'text/javascript', 'application/javascript', 'text/ecmascript', 'application/ecmascript']);
const JS_REQUIRED_RE =
  /(enable|activate|turn on|switch on|allow)\s+(your\s+)?javascript|javascript\s+(is\s+)?(required|disabled|must be enabled|needs to be enabled|is not enabled|is turned off)|requires?\s+javascript|without\s+javascript|need\s+javascript|javascript\s+aktivieren|activer\s+(le\s+)?javascript/i;
const TYPE_ATTR_RE = /(?:^|[\s"'/])type\s*=\s*["']?([^"'\s>]+)/i;
const SRC_ATTR_RE = /(?:^|[\s"'/])src\s*=/i;
const ID_ATTR_RE = /(?:^|[\s"'/])id\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/i;

/** What one pass over a page finds. */
interface Findings {
  /** Non-space characters of visible text after `<body>` (of the whole page when there is none). */
  text: number;
  scripts: boolean;
  emptyRoot: boolean;
  jsRequiredNotice: boolean;
}

/** JavaScript's `\s`, which the visible-text count ignores. */
function isSpace(c: number): boolean {
  return (
    c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}

const isNameStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
/** A tag name ends at whitespace, `/` or `>` (HTML's tokenizer rule). */
const endsName = (c: number) => c === 47 || c === 62 || isSpace(c);

/** `&nbsp;`, `&#160;`, `&#xa0;` at i: the length of the entity (it counts as a space), or 0. */
function nbspEntityAt(html: string, i: number): number {
  for (const e of ['&nbsp;', '&#160;', '&#xa0;']) {
    if (html.length - i >= e.length && html.slice(i, i + e.length).toLowerCase() === e) return e.length;
  }
  return 0;
}

/** Index of the end tag `</name` (any case, then whitespace, `/` or `>`) at or after `from`, or -1. */
function findEndTag(html: string, name: string, from: number): number {
  for (let i = html.indexOf('</', from); i !== -1; i = html.indexOf('</', i + 2)) {
    const after = i + 2 + name.length;
    if (html.slice(i + 2, after).toLowerCase() === name && (after === html.length || endsName(html.charCodeAt(after)))) return i;
  }
  return -1;
}

/** Position just after whitespace and comments starting at i (a comment never closed runs to the end). */
function skipSpaceAndComments(html: string, i: number, comments: boolean): number {
  for (;;) {
    while (i < html.length && isSpace(html.charCodeAt(i))) i++;
    if (!comments || !html.startsWith('<!--', i)) return i;
    const end = html.indexOf('-->', i + 4);
    if (end === -1) return html.length;
    i = end + 3;
  }
}

/** An end tag `</name\s*>` exactly at i. */
function endTagAt(html: string, name: string, i: number): boolean {
  if (!html.startsWith('</', i) || html.slice(i + 2, i + 2 + name.length).toLowerCase() !== name) return false;
  let j = i + 2 + name.length;
  while (j < html.length && isSpace(html.charCodeAt(j))) j++;
  return html.charCodeAt(j) === 62;
}

function scan(html: string): Findings {
  const f: Findings = { text: 0, scripts: false, emptyRoot: false, jsRequiredNotice: false };
  let beforeBody = 0;
  let sawBody = false;
  // Where the next '>' is (-1: none left): cached so a run of '<' without '>' is not rescanned.
  let gt = -2;
  let i = 0;
  while (i < html.length) {
    const c = html.charCodeAt(i);
    if (c !== 60 /* < */) {
      if (c === 38 /* & */) {
        const n = nbspEntityAt(html, i);
        if (n) {
          i += n;
          continue;
        }
      }
      if (!isSpace(c)) {
        if (sawBody) f.text++;
        else beforeBody++;
      }
      i++;
      continue;
    }
    if (html.startsWith('<!--', i)) {
      const end = html.indexOf('-->', i + 4);
      if (end === -1) break;
      i = end + 3;
      continue;
    }
    if (gt !== -1 && gt <= i) gt = html.indexOf('>', i);
    if (gt === -1) {
      // No '>' anywhere after this: the rest is text, as the old `<[^>]*>` reading had it.
      if (!isSpace(c)) {
        if (sawBody) f.text++;
        else beforeBody++;
      }
      i++;
      continue;
    }
    const tagEnd = gt; // the tag is html[i..tagEnd]
    if (!isNameStart(html.charCodeAt(i + 1))) {
      i = tagEnd + 1; // an end tag, <!doctype>, <?…>: no text
      continue;
    }
    let n = i + 1;
    while (n < tagEnd && !endsName(html.charCodeAt(n))) n++;
    const name = html.slice(i + 1, n).toLowerCase();
    const attrs = html.slice(n, tagEnd);
    i = tagEnd + 1;
    if (name === 'body' && !sawBody) sawBody = true;
    if (!f.emptyRoot && (APP_ROOT_TAGS.has(name) || CUSTOM_ROOT_TAGS.has(name))) {
      const id = ID_ATTR_RE.exec(attrs);
      const isRoot = CUSTOM_ROOT_TAGS.has(name) || APP_ROOT_IDS.has(id?.[1] ?? id?.[2] ?? id?.[3] ?? '');
      // Whatever this look-ahead passes over is only space and comments: the main loop reads it
      // once more at most, so the pass stays linear.
      if (isRoot && endTagAt(html, name, skipSpaceAndComments(html, i, APP_ROOT_TAGS.has(name)))) f.emptyRoot = true;
    }
    if (!SKIPPED.has(name) || (name === 'svg' && attrs.endsWith('/'))) continue; // <svg/> is empty; <script/> is not
    const close = findEndTag(html, name, i);
    const content = html.slice(i, close === -1 ? html.length : close);
    if (name === 'script' && !f.scripts) {
      const type = TYPE_ATTR_RE.exec(attrs)?.[1]?.toLowerCase();
      if ((!type || EXECUTABLE_TYPES.has(type)) && (SRC_ATTR_RE.test(attrs) || content.trim().length > 0)) f.scripts = true;
    }
    if (name === 'noscript' && !f.jsRequiredNotice && JS_REQUIRED_RE.test(content)) f.jsRequiredNotice = true;
    if (close === -1) break; // never closed: it runs to the end of the document
    i = close;
  }
  if (!sawBody) f.text = beforeBody;
  return f;
}

export function looksClientRendered(html: string): boolean {
  if (!html) return false;
  const f = scan(html);
  if (f.scripts && f.text < NEAR_EMPTY_CHARS) return true;
  if (f.text >= SHORT_PAGE_CHARS) return false;
  return f.emptyRoot || f.jsRequiredNotice;
}
