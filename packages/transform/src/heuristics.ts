/**
 * When is the HTTP engine's HTML not the page a reader would see? `looksClientRendered` is the
 * escalation test: true means "render this URL in the browser instead".
 *
 * It is deliberately conservative about escalating pages that already carry real text, because a
 * browser render costs an order of magnitude more than the HTTP fetch: an empty app root or a
 * "please enable JavaScript" notice only counts while the visible text is short.
 */

/** Below this many visible characters a page with scripts is treated as a shell. */
const NEAR_EMPTY_CHARS = 200;
/** An empty app root / JS-required notice only escalates pages with less visible text than this. */
const SHORT_PAGE_CHARS = 1000;

const APP_ROOT_IDS = ['root', 'app', '__next', '__nuxt', '___gatsby', 'svelte', 'q-app', 'main-app', 'react-root', 'app-root'];
const EMPTY_ROOT_RE = new RegExp(
  `<(div|main|section)\\b[^>]*\\bid\\s*=\\s*["']?(?:${APP_ROOT_IDS.join('|')})["']?(?:\\s[^>]*)?>\\s*(?:<!--[\\s\\S]*?-->\\s*)*</\\1\\s*>`,
  'i',
);
/** Angular's `<app-root></app-root>` and similar custom-element roots. */
const EMPTY_CUSTOM_ROOT_RE = /<(app-root|ng-app)\b[^>]*>\s*<\/\1\s*>/i;
const NOSCRIPT_RE = /<noscript\b[^>]*>([\s\S]*?)<\/noscript\s*>/gi;
const JS_REQUIRED_RE =
  /(enable|activate|turn on|switch on|allow)\s+(your\s+)?javascript|javascript\s+(is\s+)?(required|disabled|must be enabled|needs to be enabled|is not enabled|is turned off)|requires?\s+javascript|without\s+javascript|need\s+javascript|javascript\s+aktivieren|activer\s+(le\s+)?javascript/i;

/** Visible text length of the body: scripts, styles, templates, noscript and tags removed. */
function visibleTextLength(html: string): number {
  const bodyStart = html.search(/<body\b/i);
  let s = bodyStart === -1 ? html : html.slice(bodyStart);
  s = s
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|noscript|template|svg)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(nbsp|#160|#xa0);/gi, ' ')
    .replace(/\s+/g, '');
  return s.length;
}

/** Scripts that can render content: external scripts or inline code (not JSON / templates). */
function hasExecutableScript(html: string): boolean {
  const re = /<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    const attrs = m[1] ?? '';
    const type = /\btype\s*=\s*["']?([^"'\s>]+)/i.exec(attrs)?.[1]?.toLowerCase();
    if (type && !/^(module|text\/javascript|application\/javascript|text\/ecmascript|application\/ecmascript)$/.test(type)) continue;
    if (/\bsrc\s*=/i.test(attrs) || (m[2] ?? '').trim().length > 0) return true;
  }
  return false;
}

export function looksClientRendered(html: string): boolean {
  if (!html) return false;
  const text = visibleTextLength(html);
  const scripts = hasExecutableScript(html);
  if (scripts && text < NEAR_EMPTY_CHARS) return true;
  if (text >= SHORT_PAGE_CHARS) return false;
  if (EMPTY_ROOT_RE.test(html) || EMPTY_CUSTOM_ROOT_RE.test(html)) return true;
  NOSCRIPT_RE.lastIndex = 0;
  for (let m = NOSCRIPT_RE.exec(html); m; m = NOSCRIPT_RE.exec(html)) {
    if (JS_REQUIRED_RE.test(m[1] ?? '')) return true;
  }
  return false;
}
