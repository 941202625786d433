import type { Element } from 'domhandler';

/**
 * What class and id names say about a box. Matching is by word (`siteHeader__nav-2` is site,
 * header, nav, 2), never by substring: `[class*=nav]` matches `<body class="nav-below-header">`
 * and deletes whole pages.
 */

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
  'pagination', 'pager', 'replies', 'rss', 'skyscraper', 'shoutbox',
  // About the article rather than of it: captions and photo credits, bylines, datelines, tag lists.
  'caption', 'captions', 'credit', 'credits', 'dateline', 'timestamp', 'tags', 'tagcloud',
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

function classify(token: string): boolean {
  if (TAXONOMY_PREFIX.test(token)) return false;
  const ws = words(token);
  if (!ws.length || ws.some((w) => STATE_WORDS.has(w))) return false;
  if (ws.some((w) => STRONG_WORDS.has(w))) return true;
  if (ws.some((w) => WEAK_WORDS.has(w))) return !ws.some((w) => CONTENT_WORDS.has(w));
  return false;
}

const verdicts = new Map<string, boolean>();

/** True when one class/id token names a boilerplate box. Memoised: pages repeat their class names. */
export function isBoilerplateToken(token: string): boolean {
  let v = verdicts.get(token);
  if (v === undefined) {
    v = classify(token);
    if (verdicts.size > 50_000) verdicts.clear();
    verdicts.set(token, v);
  }
  return v;
}

export function hasBoilerplateName(el: Element): boolean {
  const names = `${el.attribs.class ?? ''} ${el.attribs.id ?? ''}`;
  for (const token of names.split(/\s+/)) {
    if (token && isBoilerplateToken(token)) return true;
  }
  return false;
}


/** Words that make a box more likely the content (Readability's positive names, as words). */
const POSITIVE_WORDS = new Set(['article', 'body', 'content', 'entry', 'hentry', 'main', 'page', 'post', 'text', 'blog', 'story', 'prose', 'richtext']);
/** Words that make it less likely (Readability's negative names, as words). */
const NEGATIVE_WORDS = new Set([
  'comment', 'comments', 'contact', 'footer', 'footnote', 'foot', 'masthead', 'meta', 'outbrain', 'promo', 'related',
  'share', 'sharing', 'shoutbox', 'sidebar', 'skyscraper', 'sponsor', 'shopping', 'tags', 'tool', 'tools', 'widget',
  'widgets', 'ad', 'ads', 'banner', 'combx', 'hidden', 'popular', 'trending', 'recommended', 'teaser', 'teasers', 'newsletter',
]);

const weightCache = new Map<string, number>();

function tokenWeight(names: string): number {
  let w = weightCache.get(names);
  if (w !== undefined) return w;
  let pos = false;
  let neg = false;
  for (const token of names.split(/\s+/)) {
    if (!token || TAXONOMY_PREFIX.test(token)) continue;
    for (const word of words(token)) {
      if (POSITIVE_WORDS.has(word)) pos = true;
      else if (NEGATIVE_WORDS.has(word)) neg = true;
    }
  }
  w = (pos ? 25 : 0) - (neg ? 25 : 0);
  if (weightCache.size > 50_000) weightCache.clear();
  weightCache.set(names, w);
  return w;
}

/** Readability's class weight: +25 when class or id name the content, -25 when they name chrome (each). */
export function classWeight(el: Element): number {
  const cls = el.attribs.class;
  const id = el.attribs.id;
  return (cls ? tokenWeight(cls) : 0) + (id ? tokenWeight(id) : 0);
}
