import type { Element, ParentNode } from 'domhandler';
import { classWeight } from './boilerplate-names';
import { linkDensity, type Stats } from './content-stats';
import { isTag } from './dom';

/**
 * Candidate scoring for the main content, after Mozilla Readability's algorithm (its public
 * description and Apache-2.0 source; this is our own code): every paragraph of 25+ characters
 * gives its ancestors points for its length and commas — all to the parent, half to the
 * grandparent, a third, a sixth… further up — so the element that directly holds most of the
 * prose wins. A candidate starts from its tag (a <div> is a likelier container than a list)
 * and its class/id names, and its points are cut by its link density: menus and teaser lists
 * are made of links, articles are not.
 */

const PARAGRAPH_MIN_CHARS = 25;
/** Headings next to the content are its title and section heads. */
const HEADING_SIBLING = /^h[1-6]$/;
const ANCESTOR_LEVELS = 5;
/** Tags whose own text counts as a paragraph; a div/section counts when it holds no blocks. */
const PARAGRAPH_TAGS = new Set(['p', 'pre', 'td', 'blockquote']);
const INLINE_CONTAINERS = new Set(['div', 'section', 'article', 'span', 'font', 'center']);

function tagBase(name: string): number {
  switch (name) {
    case 'div': case 'article': case 'section': case 'main':
      return 5;
    case 'pre': case 'td': case 'blockquote':
      return 3;
    case 'address': case 'ol': case 'ul': case 'dl': case 'dd': case 'dt': case 'li': case 'form':
      return -3;
    case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': case 'th':
      return -5;
    default:
      return 0;
  }
}

function isParagraph(el: Element, s: Stats): boolean {
  if (s.text < PARAGRAPH_MIN_CHARS) return false;
  return PARAGRAPH_TAGS.has(el.name) || (INLINE_CONTAINERS.has(el.name) && s.inline);
}

/** Raw candidate scores (before the link-density cut). */
export function scoreCandidates(body: Element, stats: Map<Element, Stats>): Map<Element, number> {
  const scores = new Map<Element, number>();
  const visit = (el: Element) => {
    const s = stats.get(el);
    if (!s) return;
    if (el !== body && isParagraph(el, s)) {
      const points = 1 + s.commas + Math.min(Math.floor(s.text / 100), 3);
      let level = 0;
      for (let p: ParentNode | null = el.parent; p && isTag(p) && level < ANCESTOR_LEVELS; p = p.parent, level++) {
        if (p.name === 'html') break;
        let score = scores.get(p);
        if (score === undefined) score = tagBase(p.name) + classWeight(p);
        scores.set(p, score + points / (level === 0 ? 1 : level === 1 ? 2 : level * 3));
        if (p === body) break;
      }
      // A paragraph's own inner blocks do not vote again (a <p> holds no blocks; a <td> may).
      if (el.name !== 'td' && el.name !== 'blockquote') return;
    }
    for (const c of el.children) if (isTag(c)) visit(c);
  };
  visit(body);
  for (const [el, score] of scores) scores.set(el, score * (1 - linkDensity(stats.get(el))));
  return scores;
}

/**
 * The best candidate, then Readability's adjustments: an ancestor shared by several near-best
 * candidates wins (the content is split over sibling boxes); a parent scoring higher than the
 * candidate wins; a sole child is replaced by its parent. null when nothing scored.
 */
export function topCandidate(body: Element, scores: Map<Element, number>): Element | null {
  const ranked = [...scores.entries()].sort((a, b) => b[1] - a[1]);
  if (!ranked.length || ranked[0][1] <= 0) return null;
  let [top, topScore] = ranked[0];
  if (top === body) return body;

  // Near-best candidates elsewhere on the page (wrappers of the top one or boxes inside it
  // are the same content, not alternatives to it).
  const alternatives = ranked
    .slice(1, 5)
    .filter(([el, s]) => s / topScore >= 0.75 && !isAncestor(el, top) && !isAncestor(top, el))
    .map(([el]) => el);
  if (alternatives.length >= 3) {
    for (let p = top.parent; p && isTag(p) && p !== body; p = p.parent) {
      const n = alternatives.filter((a) => isAncestor(p as Element, a)).length;
      if (n >= 3) {
        top = p;
        break;
      }
    }
  }

  let lastScore = scores.get(top) ?? 0;
  const threshold = lastScore / 3;
  for (let p = top.parent; p && isTag(p) && p !== body; p = p.parent) {
    const s = scores.get(p);
    if (s === undefined) continue;
    if (s < threshold) break;
    if (s > lastScore) {
      top = p;
      break;
    }
    lastScore = s;
  }

  while (top.parent && isTag(top.parent) && top.parent !== body && elementChildren(top.parent).length === 1) top = top.parent;
  return top;
}

function isAncestor(outer: Element, inner: Element): boolean {
  for (let p: ParentNode | null = inner.parent; p; p = p.parent) if (p === outer) return true;
  return false;
}

function hasDescendant(el: ParentNode, name: string): boolean {
  for (const c of el.children) if (isTag(c) && (c.name === name || hasDescendant(c, name))) return true;
  return false;
}

function elementChildren(el: ParentNode): Element[] {
  return el.children.filter(isTag);
}

/**
 * The top candidate and those of its siblings that belong to the same story: siblings that
 * score at least a fifth of it (at least 10), and plain paragraphs of prose next to it
 * (Readability's sibling rule). In document order.
 */
export function mergeSiblings(top: Element, stats: Map<Element, Stats>, scores: Map<Element, number>): Element[] {
  const parent = top.parent;
  if (!parent || !isTag(parent)) return [top];
  const topScore = scores.get(top) ?? 0;
  const threshold = Math.max(10, topScore * 0.2);
  const topClass = top.attribs.class ?? '';
  // The story is an <article>: other <article>s next to it are other stories or comments.
  const topIsArticle = top.name === 'article' || hasDescendant(top, 'article');
  const kept: Element[] = [];
  const headings: Element[] = [];
  const siblings = elementChildren(parent);
  for (const sib of siblings) {
    if (sib === top) {
      kept.push(sib);
      continue;
    }
    if (topIsArticle && (sib.name === 'article' || hasDescendant(sib, 'article'))) continue;
    if (HEADING_SIBLING.test(sib.name)) {
      headings.push(sib);
      continue;
    }
    const bonus = topClass && sib.attribs.class === topClass ? topScore * 0.2 : 0;
    const score = scores.get(sib);
    if (score !== undefined && score + bonus >= threshold) {
      kept.push(sib);
      continue;
    }
    if (sib.name === 'p') {
      const s = stats.get(sib);
      if (!s) continue;
      const density = linkDensity(s);
      if ((s.text > 80 && density < 0.25) || (s.text > 0 && s.text <= 80 && density === 0 && /\.( |$)/.test(textOfShort(sib)))) kept.push(sib);
    }
  }
  // A heading stays when it opens what is kept: the title (h1/h2) above the story, a section
  // head before a kept sibling; one that only heads dropped boxes ("Related posts") goes with them.
  const keptSet = new Set(kept);
  const topIndex = siblings.indexOf(top);
  for (const h of headings) {
    const i = siblings.indexOf(h);
    let next = i + 1;
    while (next < siblings.length && headings.includes(siblings[next])) next++;
    if ((i < topIndex && (h.name === 'h1' || h.name === 'h2')) || keptSet.has(siblings[next])) keptSet.add(h);
  }
  return siblings.filter((el) => keptSet.has(el));
}

function textOfShort(el: ParentNode): string {
  let s = '';
  for (const c of el.children) {
    if (c.type === 'text') s += c.data;
    else if (isTag(c)) s += textOfShort(c);
  }
  return s.replace(/\s+/g, ' ');
}
