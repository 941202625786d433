import type { CheerioAPI } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';

/**
 * Deterministic boilerplate removal for onlyMainContent (fixed rules, no
 * model): keep the page's single <main>/<article> subtree when there is one,
 * then drop landmark chrome, elements whose class/id name boilerplate, and
 * blocks that are mostly links. The content itself (<main>, <article>,
 * [role=main]) and its ancestors are never removed, nor are <html>/<body>.
 * Thresholds were checked against /work/shared/bench/main-content.
 */

const MAIN_SELECTOR = 'main, [role=main]';
const CONTENT_SELECTOR = 'main, article, [role=main]';

/** Always chrome, wherever they are (an <aside> in an article is a side box). */
const CHROME_TAGS = new Set(['nav', 'aside', 'dialog']);
/** Chrome only when they belong to the page; inside content they are its own header/footer. */
const SCOPED_CHROME_TAGS = new Set(['header', 'footer']);
const CODE_TAGS = new Set(['pre', 'code', 'samp', 'kbd']);
const CHROME_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'dialog', 'alertdialog']);

/**
 * Class/id words that mark boilerplate whatever else the name says
 * (`related-articles`, `post-share`, `cookie-banner`).
 */
const STRONG_WORDS = new Set([
  'ad', 'ads', 'adv', 'advert', 'adverts', 'advertisement', 'advertising', 'adsense', 'adslot', 'adsbygoogle',
  'dfp', 'sponsor', 'sponsored', 'promo', 'promoted', 'outbrain', 'taboola',
  'cookie', 'cookies', 'cookiebar', 'consent', 'gdpr',
  'social', 'share', 'shares', 'sharing', 'sharebar', 'sharethis', 'addthis',
  'popup', 'modal', 'newsletter', 'subscribe', 'subscription',
  'comment', 'comments', 'disqus', 'related', 'recommended', 'breadcrumb', 'breadcrumbs',
  'sidebar', 'menu', 'navbar', 'nav', 'navigation',
]);

/**
 * Words that mark page chrome only when the name does not also say it is part
 * of the content: `site-header` goes, `article-header`/`entry-footer` stay.
 */
const WEAK_WORDS = new Set(['header', 'footer', 'banner', 'masthead', 'topbar', 'toolbar', 'skip', 'skiplink']);
const CONTENT_WORDS = new Set([
  'article', 'post', 'entry', 'story', 'content', 'body', 'text', 'hentry', 'blog', 'title', 'headline',
]);
/**
 * Names describing a state or layout rather than a box (`has-sidebar`,
 * `no-comments`, `comments-open`): these sit on wrappers and <body>.
 */
const STATE_WORDS = new Set([
  'has', 'no', 'with', 'without', 'is', 'show', 'hide', 'enable', 'enabled', 'disable', 'disabled',
  'open', 'closed', 'count', 'active', 'layout', 'template',
]);
/** Taxonomy classes (WordPress `tag-cookies`, `category-advertising`) name the topic, not the box. */
const TAXONOMY_PREFIX = /^(?:tag|category|cat|topic|section|format|type|status|postid|post-id|author|page-id|parent-pageid)-/i;

/** Split a class/id token into lower-case words: `siteHeader__nav-2` → site, header, nav, 2. */
function words(token: string): string[] {
  return token
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** True when one class/id token names a boilerplate box. */
export function isBoilerplateToken(token: string): boolean {
  if (TAXONOMY_PREFIX.test(token)) return false;
  const ws = words(token);
  if (!ws.length || ws.some((w) => STATE_WORDS.has(w))) return false;
  if (ws.some((w) => STRONG_WORDS.has(w))) return true;
  if (ws.some((w) => WEAK_WORDS.has(w))) return !ws.some((w) => CONTENT_WORDS.has(w));
  return false;
}

function hasBoilerplateName(el: Element): boolean {
  const names = `${el.attribs.class ?? ''} ${el.attribs.id ?? ''}`;
  for (const token of names.split(/\s+/)) {
    if (token && isBoilerplateToken(token)) return true;
  }
  return false;
}

function isInsideContent(el: Element): boolean {
  for (let p = el.parent; p && p.type !== 'root'; p = p.parent) {
    const e = p as Element;
    if (e.tagName === 'main' || e.tagName === 'article' || e.attribs?.role === 'main') return true;
  }
  return false;
}

function isChromeLandmark(el: Element): boolean {
  if (CHROME_TAGS.has(el.tagName)) return true;
  const role = el.attribs.role?.trim().toLowerCase();
  if (role && CHROME_ROLES.has(role)) return true;
  if (SCOPED_CHROME_TAGS.has(el.tagName)) return !isInsideContent(el);
  return false;
}

function textLength(node: AnyNode): number {
  if (node.type === 'text') return node.data.replace(/\s+/g, ' ').trim().length;
  if ('children' in node) {
    let n = 0;
    for (const c of node.children) n += textLength(c);
    return n;
  }
  return 0;
}

/** Link blocks: at least this many links, this share of the text in links, no <p> of prose (this long). */
const LINK_BLOCK_MIN_LINKS = 5;
const LINK_BLOCK_DENSITY = 0.6;
const PROSE_MIN_CHARS = 20;

interface Stats {
  /** Visible text length (whitespace-collapsed). */
  text: number;
  /** Part of `text` inside links. */
  linkText: number;
  links: number;
  /** Paragraphs of real prose (not mostly links) inside. */
  prose: number;
}

/** One bottom-up pass, so that per-element sizes cost O(n) for the whole page. */
function measure(el: Element, stats: Map<Element, Stats>, inLink: boolean): Stats {
  const isLink = el.tagName === 'a' && el.attribs.href !== undefined;
  const s: Stats = { text: 0, linkText: 0, links: isLink ? 1 : 0, prose: 0 };
  for (const c of el.children) {
    if (c.type === 'text') {
      const n = c.data.replace(/\s+/g, ' ').trim().length;
      s.text += n;
      if (inLink || isLink) s.linkText += n;
    } else if (c.type === 'tag') {
      const cs = measure(c as Element, stats, inLink || isLink);
      s.text += cs.text;
      s.linkText += cs.linkText;
      s.links += cs.links;
      s.prose += cs.prose;
    }
  }
  if (el.tagName === 'p' && s.text >= PROSE_MIN_CHARS && s.linkText < 0.5 * s.text) s.prose++;
  stats.set(el, s);
  return s;
}

/** Containers that hold lists of links when they are menus, "most read" boxes, tag clouds… */
const LINK_BLOCK_TAGS = new Set(['ul', 'ol', 'div', 'section', 'table', 'dl', 'menu']);

/**
 * A block that is mostly links (menus, "most popular", teaser lists). Needs
 * several links and no paragraph of prose, so that content with a list of
 * links in it is never hit as a whole.
 */
function isLinkBlock(el: Element, s: Stats | undefined): boolean {
  if (!s || !LINK_BLOCK_TAGS.has(el.tagName) || s.links < LINK_BLOCK_MIN_LINKS || s.text === 0 || s.prose > 0) return false;
  return s.linkText / s.text >= LINK_BLOCK_DENSITY;
}

/** The outermost elements of a selection (drops ones nested inside another). */
function outermost($: CheerioAPI, selector: string): Element[] {
  const all = $(selector).toArray() as Element[];
  const set = new Set<AnyNode>(all);
  return all.filter((el) => !$(el).parents().toArray().some((p) => set.has(p)));
}

function paragraphTextLength($: CheerioAPI, el: Element): number {
  let n = 0;
  $(el).find('p').each((_, p) => { n += textLength(p); });
  return n;
}

/**
 * Among several <article>s, the one that is clearly the page's story: most
 * paragraph text, at least 3x the runner-up (teaser cards and comments are
 * short and alike, so none of them dominates).
 */
function dominantArticle($: CheerioAPI, articles: Element[]): Element | null {
  const scored = articles.map((el) => ({ el, p: paragraphTextLength($, el) })).sort((a, b) => b.p - a.p);
  const [best, second] = scored;
  if (best && best.p >= 500 && best.p >= 3 * (second?.p ?? 0)) return best.el;
  return null;
}

/**
 * The subtree to keep: the page's single <main> (narrowed to its dominant
 * <article> when it holds several, e.g. a story plus teaser cards), else its
 * single <article>, else a dominant one among several. An empty candidate
 * (a shell waiting for JavaScript) is not worth preferring.
 */
function preferredRoot($: CheerioAPI): Element | null {
  const hasText = (el: Element) => textLength(el) > 0;
  const mains = outermost($, MAIN_SELECTOR);
  if (mains.length === 1 && hasText(mains[0])) {
    const inner = outermost($, 'article').filter((a) => $(a).closest(mains[0]).length > 0);
    return (inner.length > 1 && dominantArticle($, inner)) || mains[0];
  }
  const articles = outermost($, 'article');
  if (articles.length === 1) return hasText(articles[0]) ? articles[0] : null;
  return articles.length > 1 ? dominantArticle($, articles) : null;
}

/** Remove boilerplate from the document in place. */
export function keepMainContent($: CheerioAPI): void {
  const body = $('body').first();
  if (!body.length) return;
  const root = preferredRoot($);
  if (root) {
    $(root).remove();
    body.empty().append(root);
  }

  // Content elements and everything containing them are off-limits.
  const protectedEls = new Set<Element>();
  $(CONTENT_SELECTOR).each((_, el) => {
    protectedEls.add(el);
    for (const p of $(el).parents().toArray()) protectedEls.add(p);
  });

  const stats = new Map<Element, Stats>();
  const total = measure(body[0], stats, false).text;
  // A class-matched box holding most of a substantial page is the content
  // wrapper with an unlucky name, not boilerplate.
  const holdsMostText = (el: Element) => total >= 1000 && (stats.get(el)?.text ?? 0) >= 0.6 * total;

  const doomed: Element[] = [];
  const visit = (el: Element) => {
    // Code is content through and through; its highlighter spans have classes
    // like `token comment` / `hljs-comment` that must not read as boilerplate.
    if (CODE_TAGS.has(el.tagName)) return;
    if (!protectedEls.has(el)) {
      if (isChromeLandmark(el)) { doomed.push(el); return; }
      if (hasBoilerplateName(el) && !holdsMostText(el)) { doomed.push(el); return; }
      if (isLinkBlock(el, stats.get(el)) && !holdsMostText(el)) { doomed.push(el); return; }
    }
    for (const c of el.children) if (c.type === 'tag') visit(c as Element);
  };
  for (const c of body[0].children) if (c.type === 'tag') visit(c as Element);
  for (const el of doomed) $(el).remove();
}
