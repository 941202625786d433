import type { ChildNode, Element, ParentNode } from 'domhandler';
import { classWeight, hasBoilerplateName } from './boilerplate-names';
import { linkDensity, measure, type Stats } from './content-stats';
import { isTag, removeNode, removeNodes, replaceChildren, type Page } from './dom';
import { scoreCandidates, topCandidate, mergeSiblings } from './content-score';
import { tableModeOf } from './markdown-tables';

export { isBoilerplateToken } from './boilerplate-names';

/**
 * onlyMainContent: deterministic boilerplate removal (fixed rules, no model), in three steps.
 *  1. Chrome goes: landmarks (nav, aside, dialog, page-level header/footer, chrome roles),
 *     boxes whose class/id name boilerplate, hidden elements, and blocks made of links.
 *  2. The content is chosen by scoring (content-score.ts, after Readability): paragraphs vote
 *     for their ancestors by length and commas, link-heavy candidates lose, and the best one
 *     keeps its siblings that score well too. The page's <main>/<article> is never dropped
 *     wholesale: a candidate outside it loses to it.
 *  3. Inside the content, boxes that look like chrome by their make-up go (Readability's
 *     conditional cleaning): link lists, forms, image strips, tiny fragments.
 * A page with no paragraph long enough to score (a short page, a listing) keeps step 1 only.
 * Step 1 never removes <html>/<body>, <main>/[role=main] or the chosen <article>, nor anything
 * holding them; other <article>s go only inside an <aside>/<nav> (teasers), never for a class
 * name. Thresholds were checked against ../shared/bench/main-content (dev half).
 */

/** Always chrome, wherever they are (an <aside> in an article is a side box). */
const CHROME_TAGS = new Set(['nav', 'aside', 'dialog', 'button', 'select', 'textarea', 'figcaption']);
/** Chrome only when they belong to the page; inside content they are its own header/footer. */
const SCOPED_CHROME_TAGS = new Set(['header', 'footer']);
const CODE_TAGS = new Set(['pre', 'code', 'samp', 'kbd']);
const CHROME_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'dialog', 'alertdialog', 'menu', 'menubar', 'toolbar']);

const isMain = (el: Element) => el.name === 'main' || el.attribs.role === 'main';
const isArticle = (el: Element) => el.name === 'article';
const isContent = (el: Element) => isMain(el) || isArticle(el);

/** The element is or lies inside an <article>: the page's own statement that it is one piece. */
function inArticle(el: Element): boolean {
  for (let p: ParentNode | null = el; p && isTag(p); p = p.parent) if (isArticle(p)) return true;
  return false;
}

function isInsideContent(el: Element): boolean {
  for (let p = el.parent; p && isTag(p); p = p.parent) if (isContent(p)) return true;
  return false;
}

function isChromeLandmark(el: Element): boolean {
  if (CHROME_TAGS.has(el.name)) return true;
  const role = el.attribs.role?.trim().toLowerCase();
  if (role && CHROME_ROLES.has(role)) return true;
  if (SCOPED_CHROME_TAGS.has(el.name)) return !isInsideContent(el);
  return false;
}

/** Not rendered: a reader never sees it. */
function isHidden(el: Element): boolean {
  const a = el.attribs;
  if (a.hidden !== undefined || a['aria-hidden'] === 'true') return true;
  const style = a.style;
  return !!style && /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)/i.test(style);
}

/** A box with this share of the page's text is never chrome by its name, make-up or hiding. */
const HOLDS_PAGE_SHARE = 0.4;

/** Guesses (names, link blocks) taking more than this share of what the landmarks leave… */
const GUESSES_MAX_SHARE = 0.7;
/** …and leaving less non-link text than this are a misreading: only the landmarks go. */
const GUESSES_KEEP_TEXT = 1000;

/** Link blocks: at least this many links, this share of the text in links, no <p> of prose. */
const LINK_BLOCK_MIN_LINKS = 5;
const LINK_BLOCK_DENSITY = 0.6;
/** Containers that hold lists of links when they are menus, "most read" boxes, tag clouds… */
const LINK_BLOCK_TAGS = new Set(['ul', 'ol', 'div', 'section', 'table', 'dl', 'menu']);

/**
 * A block that is mostly links (menus, "most popular", teaser lists). Needs
 * several links and no paragraph of prose, so that content with a list of
 * links in it is never hit as a whole.
 */
function isLinkBlock(el: Element, s: Stats | undefined): boolean {
  if (!s || !LINK_BLOCK_TAGS.has(el.name) || s.links < LINK_BLOCK_MIN_LINKS || s.text === 0 || s.prose > 0) return false;
  return s.linkText / s.text >= LINK_BLOCK_DENSITY;
}

/** The outermost elements under `root` that satisfy `pred`, in document order. */
function outermost(root: ParentNode, pred: (el: Element) => boolean): Element[] {
  const out: Element[] = [];
  const walk = (node: ParentNode) => {
    for (const c of node.children) {
      if (!isTag(c)) continue;
      if (pred(c)) out.push(c);
      else walk(c);
    }
  };
  walk(root);
  return out;
}

function paragraphText(el: ParentNode, stats: Map<Element, Stats>): number {
  let n = 0;
  for (const c of el.children) {
    if (!isTag(c)) continue;
    if (c.name === 'p') n += stats.get(c)?.text ?? 0;
    else n += paragraphText(c, stats);
  }
  return n;
}

/**
 * Among several <article>s, the one that is clearly the page's story: most
 * paragraph text, at least 3x the runner-up (teaser cards and comments are
 * short and alike, so none of them dominates).
 */
function dominantArticle(articles: Element[], stats: Map<Element, Stats>): Element | null {
  const scored = articles.map((el) => ({ el, p: paragraphText(el, stats) })).sort((a, b) => b.p - a.p);
  const [best, second] = scored;
  if (best && best.p >= 500 && best.p >= 3 * (second?.p ?? 0)) return best.el;
  return null;
}

/**
 * The page's own statement of its content: its single <main> (narrowed to its dominant
 * <article> when it holds several, e.g. a story plus teaser cards), else its single <article>,
 * else a dominant one among several. An empty candidate (a shell waiting for JavaScript) is
 * not worth preferring.
 */
function semanticRoot(body: Element, stats: Map<Element, Stats>): Element | null {
  const hasText = (el: Element) => (stats.get(el)?.text ?? 0) > 0;
  const mains = outermost(body, isMain);
  if (mains.length === 1 && hasText(mains[0])) {
    const inner = outermost(mains[0], isArticle);
    return (inner.length > 1 && dominantArticle(inner, stats)) || mains[0];
  }
  const articles = outermost(body, isArticle);
  if (articles.length === 1) return hasText(articles[0]) ? articles[0] : null;
  return articles.length > 1 ? dominantArticle(articles, stats) : null;
}

/**
 * Step 1: landmarks, boilerplate names, hidden boxes, link blocks. Nothing that is or holds
 * <main>/<article>/[role=main] goes for its name or make-up; a landmark (an <aside> of teaser
 * <article>s, a page <header>) goes unless it holds the page's main or chosen article.
 */
function removeChrome(body: Element, stats: Map<Element, Stats>, semantic: Element | null): void {
  const holdsContent = new Set<Element>();
  const holdsMain = new Set<Element>();
  const mark = (el: Element, set: Set<Element>) => {
    for (let p: ParentNode | null = el; p && isTag(p); p = p.parent) set.add(p);
  };
  const protect = (node: ParentNode) => {
    for (const c of node.children) {
      if (!isTag(c)) continue;
      if (isContent(c)) mark(c, holdsContent);
      if (isMain(c)) mark(c, holdsMain);
      protect(c);
    }
  };
  protect(body);
  if (semantic) mark(semantic, holdsMain);

  const total = stats.get(body)!.text;
  // A box holding a large part of a substantial page's text is the content, not chrome: a
  // wrapper with an unlucky name (`menu-side-transition`), a product grid that is all links, a
  // wrapper hidden until a script fades it in. Menus and footers are a small part of a page.
  const holdsMostText = (el: Element) => total >= 1000 && (stats.get(el)?.text ?? 0) >= HOLDS_PAGE_SHARE * total;

  // Landmarks and hidden boxes go on the page's own word; names and link make-up are guesses,
  // and on a page made of links (a listing, a grid of cards, a link-heavy home page) those
  // guesses can take the content itself. When they would take most of what the landmarks
  // leave, only the landmarks go.
  const collect = (guesses: boolean) => {
    const doomed: Element[] = [];
    let guessed = 0;
    const visit = (el: Element) => {
      // Code is content through and through; its highlighter spans have classes
      // like `token comment` / `hljs-comment` that must not read as boilerplate.
      if (CODE_TAGS.has(el.name)) return;
      const hidden = isHidden(el) && !holdsMostText(el);
      if (!holdsMain.has(el) && (isChromeLandmark(el) || hidden)) {
        if (!holdsContent.has(el) || isSemanticLandmark(el)) { doomed.push(el); return; }
      }
      if (!holdsContent.has(el)) {
        if (isChromeLandmark(el) || hidden) { doomed.push(el); return; }
        if (guesses && !holdsMostText(el) && (hasBoilerplateName(el) || isLinkBlock(el, stats.get(el)))) {
          doomed.push(el);
          guessed += stats.get(el)?.text ?? 0;
          return;
        }
      }
      for (const c of el.children) if (isTag(c)) visit(c);
    };
    for (const c of body.children) if (isTag(c)) visit(c);
    return { doomed, guessed };
  };
  const first = collect(true);
  let lost = 0;
  let ownLeft = ownText(stats.get(body));
  for (const el of first.doomed) {
    lost += stats.get(el)?.text ?? 0;
    ownLeft -= ownText(stats.get(el));
  }
  // A page that keeps a fair amount of text of its own after the guesses (an article whose
  // comments and rails were named) is left as the guesses have it, and so is a short page.
  const landmarksLeave = total - (lost - first.guessed);
  const misread = total >= 1000 && first.guessed > GUESSES_MAX_SHARE * landmarksLeave && ownLeft < GUESSES_KEEP_TEXT;
  removeNodes(misread ? collect(false).doomed : first.doomed);
}

/** A landmark by its tag or role (not by class): the page's own word that the box is chrome. */
function isSemanticLandmark(el: Element): boolean {
  return el.name === 'aside' || el.name === 'nav' || el.attribs.role === 'complementary' || el.attribs.role === 'navigation';
}

const contains = (outer: Element, inner: Element) => {
  for (let p: ParentNode | null = inner; p; p = p.parent) if (p === outer) return true;
  return false;
};

const CONDITIONAL_TAGS = new Set(['div', 'section', 'table', 'ul', 'ol', 'dl', 'form', 'fieldset', 'figure', 'header', 'footer', 'center']);

function inFigure(el: Element): boolean {
  for (let p = el.parent; p && isTag(p); p = p.parent) if (p.name === 'figure') return true;
  return false;
}

/**
 * Step 3 (Readability's conditional cleaning): a box inside the content that by its make-up is
 * not text — many images and few paragraphs, form fields, a fragment too short to be prose,
 * mostly links, embeds — is dropped. Boxes with ten commas or more read as prose and stay, and
 * so do boxes holding a code sample.
 */
function isJunkBox(el: Element, s: Stats, scores: Map<Element, number>): boolean {
  const weight = classWeight(el);
  if (weight + (scores.get(el) ?? 0) < 0) return true;
  if (s.commas >= 10 || s.pres > 0) return false;
  const isList = el.name === 'ul' || el.name === 'ol' || (s.text > 0 && s.listText / s.text > 0.9);
  const density = linkDensity(s);
  const p = s.paragraphs;
  if (s.images > 1 && p / s.images < 0.5 && !inFigure(el)) return true;
  if (!isList && s.listItems - 100 > p) return true;
  if (s.inputs > Math.floor(p / 3)) return true;
  const headingDensity = s.text ? s.headingText / s.text : 0;
  if (!isList && headingDensity < 0.9 && s.text < 25 && (s.images === 0 || s.images > 2) && !inFigure(el)) return true;
  if (!isList && weight < 25 && density > 0.2) return true;
  if (weight >= 25 && density > 0.5) return true;
  if ((s.embeds === 1 && s.text < 75) || s.embeds > 1) return true;
  return false;
}

/** An author line is short: a name and a date. */
const POST_META_MAX_CHARS = 120;

function hasTime(el: Element): boolean {
  for (const c of el.children) if (isTag(c) && (c.name === 'time' || hasTime(c))) return true;
  return false;
}

/** One of several siblings of the same tag and class: an item of a thread, a grid, a list. */
function isRepeatedItem(el: Element): boolean {
  const parent = el.parent;
  if (!parent || !isTag(parent)) return false;
  const cls = el.attribs.class ?? '';
  let same = 0;
  for (const c of parent.children) if (isTag(c) && c.name === el.name && (c.attribs.class ?? '') === cls && ++same >= 2) return true;
  return false;
}

/**
 * A post's author line (a name and a <time>) inside one of several repeated posts: a thread
 * keeps who wrote each post and when, however little text that is. A lone article's dateline
 * is not protected by this.
 */
function isPostMeta(el: Element, s: Stats): boolean {
  if (s.text > POST_META_MAX_CHARS || !hasTime(el)) return false;
  for (let p = el.parent; p && isTag(p) && p.name !== 'body'; p = p.parent) if (isRepeatedItem(p)) return true;
  return false;
}

function cleanConditionally(content: Element[], stats: Map<Element, Stats>, scores: Map<Element, number>): void {
  // A box holding a good part of the content's text is the content, whatever its make-up
  // (text between <br>s and many photos is still the story).
  let total = 0;
  for (const el of content) total += stats.get(el)?.text ?? 0;
  const doomed: Element[] = [];
  const visit = (el: Element, top: boolean) => {
    // Code and data tables are content through and through (short cells are still data).
    if (CODE_TAGS.has(el.name) || (el.name === 'table' && tableModeOf(el) === 'data')) return;
    const s = stats.get(el);
    if (!top && s && CONDITIONAL_TAGS.has(el.name) && s.text < 0.4 * total && isJunkBox(el, s, scores) && !isPostMeta(el, s)) { doomed.push(el); return; }
    // A paragraph that is one link ("You may also like: …" lists written as <p>s) is a pointer
    // to another page, not text of this one.
    if (!top && s && el.name === 'p' && s.links > 0 && s.linkText > 0.8 * s.text) { doomed.push(el); return; }
    for (const c of el.children) if (isTag(c)) visit(c, false);
  };
  for (const el of content) visit(el, true);
  // Cleaning that would take most of the content is misreading it (a page of testimonials,
  // a grid of cards: many small boxes that each look like chrome): the content stays whole.
  let lost = 0;
  for (const el of doomed) lost += stats.get(el)?.text ?? 0;
  if (lost > 0.5 * total) return;
  removeNodes(doomed);
}

export interface ContentChoice {
  semantic: Element | null;
  /** The scored top candidate after the semantic rule; null when nothing scored. */
  top: Element | null;
  /** What stays in the body, before conditional cleaning. */
  kept: Element[];
}

/** Steps 1-2: removes chrome, then picks the content (exported for diagnostics). */
export function chooseContent(body: Element): ContentChoice & { stats: Map<Element, Stats>; scores: Map<Element, number>; fallback: boolean } {
  const before = measure(body);
  const semantic = semanticRoot(body, before);
  removeChrome(body, before, semantic);
  const stats = measure(body);
  const scores = scoreCandidates(body, stats);
  let top = topCandidate(body, scores);

  // The page's <main>/<article> is its own statement of the content: a candidate outside it
  // loses to it, and one that wraps it (plus chrome around it) narrows to it unless most of
  // the candidate's text lies outside it (an <article> holding only the headline).
  if (semantic && top && !contains(semantic, top)) {
    if (!contains(top, semantic)) top = semantic;
    else if ((stats.get(semantic)?.text ?? 0) >= 0.5 * (stats.get(top)?.text ?? 0)) top = semantic;
  }
  let kept = !top ? (semantic ? [semantic] : [body]) : top === body ? [body] : mergeSiblings(top, stats, scores);
  // The first choice is poor when it holds a small part of the page's text that is not links:
  // the densest block of a page made of many (a service page's sections, a thread's posts, a
  // product's description beside its specs) is one of them. Then the content is the smallest
  // box that holds most of that text (trafilatura's fallback when its first extraction is short).
  let fallback = false;
  if (top && poorChoice({ top, kept }, body, stats)) {
    kept = [smallestHolding(body, stats)];
    fallback = true;
  }
  return { semantic, top, kept, stats, scores, fallback };
}

const ownText = (s: Stats | undefined) => (s ? s.text - s.linkText : 0);
/** Below this share of the page's non-link text, the chosen content is too little of the page. */
const POOR_SHARE = 0.45;
/** The fallback box holds at least this share of the page's non-link text. */
const HOLDING_SHARE = 0.7;
/** Pages with less non-link text than this are left to the first choice (short pages vary). */
const POOR_MIN_TEXT = 500;

function poorChoice({ top, kept }: { top: Element; kept: Element[] }, body: Element, stats: Map<Element, Stats>): boolean {
  let all = ownText(stats.get(body));
  // A story in an <article> is measured against the page less the other <article>s: those are
  // other pieces (teaser cards, other stories), not content the story missed.
  if (inArticle(top)) for (const a of outermost(body, isArticle)) if (!contains(a, top)) all -= ownText(stats.get(a));
  if (all < POOR_MIN_TEXT) return false;
  let mine = 0;
  for (const el of kept) mine += ownText(stats.get(el));
  return mine < POOR_SHARE * all;
}

function smallestHolding(body: Element, stats: Map<Element, Stats>): Element {
  const need = HOLDING_SHARE * ownText(stats.get(body));
  let el = body;
  for (;;) {
    let next: Element | null = null;
    for (const c of el.children) if (isTag(c) && ownText(stats.get(c)) >= need) next = c;
    if (!next) return el;
    el = next;
  }
}

/** Remove boilerplate from the page in place. */
export function keepMainContent(page: Page): void {
  const body = page.body;
  const { top, kept, stats, scores, fallback } = chooseContent(body);
  if (top && !fallback) cleanConditionally(kept, stats, scores);
  if (kept[0] !== body) replaceChildren(body, kept.map(detach));
}

function detach<T extends ChildNode>(el: T): T {
  removeNode(el);
  return el;
}
