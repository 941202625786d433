import type { Element } from 'domhandler';
import { isTag, isText } from './dom';

/**
 * Per-element sizes for main-content extraction, computed bottom-up in one pass over the tree
 * (O(n) for the page, where asking each element for its text would be O(n·depth)).
 */
export interface Stats {
  /** Visible text length, whitespace collapsed. */
  text: number;
  /** Part of `text` inside links. */
  linkText: number;
  /** Part of `text` inside headings. */
  headingText: number;
  /** Part of `text` inside list items. */
  listText: number;
  commas: number;
  links: number;
  /** <p> elements of prose (at least PROSE_MIN_CHARS, less than half links). */
  prose: number;
  paragraphs: number;
  images: number;
  listItems: number;
  inputs: number;
  embeds: number;
  /** <pre> blocks inside (code samples are content however short). */
  pres: number;
  /** No block-level element inside: the element is itself a paragraph of text. */
  inline: boolean;
}

export const PROSE_MIN_CHARS = 20;

const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
/** Elements that break a text flow into blocks (a div holding none of them reads as a paragraph). */
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'dd', 'details', 'div', 'dl', 'dt', 'fieldset', 'figure', 'footer', 'form',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'ul',
]);
const EMBEDS = new Set(['iframe', 'embed', 'object', 'video', 'audio']);
const INPUTS = new Set(['input', 'select', 'textarea', 'button']);

/** Length of the text with whitespace runs counted as one character and edges trimmed. */
export function collapsedLength(s: string): number {
  let n = 0;
  let inWs = true;
  let pendingWs = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 0xa0) {
      if (!inWs) pendingWs = true;
      inWs = true;
    } else {
      if (pendingWs) n++;
      pendingWs = false;
      inWs = false;
      n++;
    }
  }
  return n;
}

function countCommas(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // , ، ، ⹁ ⸴ ⹌ ﹐ ， 、
    if (c === 44 || c === 0x60c || c === 0xfe50 || c === 0xff0c || c === 0x3001 || c === 0x2e41 || c === 0x2e34 || c === 0x2e4c) n++;
  }
  return n;
}

export function measure(root: Element): Map<Element, Stats> {
  const stats = new Map<Element, Stats>();
  const visit = (el: Element, inLink: boolean, inHeading: boolean, inList: boolean): Stats => {
    const name = el.name;
    const isLink = name === 'a' && el.attribs.href !== undefined;
    const s: Stats = {
      text: 0, linkText: 0, headingText: 0, listText: 0, commas: 0, links: isLink ? 1 : 0, prose: 0, paragraphs: 0,
      images: name === 'img' ? 1 : 0, listItems: name === 'li' ? 1 : 0, inputs: INPUTS.has(name) ? 1 : 0,
      embeds: EMBEDS.has(name) ? 1 : 0, pres: name === 'pre' ? 1 : 0, inline: true,
    };
    const link = inLink || isLink;
    const heading = inHeading || HEADINGS.has(name);
    const list = inList || name === 'li';
    for (const c of el.children) {
      if (isText(c)) {
        const n = collapsedLength(c.data);
        if (!n) continue;
        s.text += n;
        s.commas += countCommas(c.data);
        if (link) s.linkText += n;
        if (heading) s.headingText += n;
        if (list) s.listText += n;
      } else if (isTag(c)) {
        const cs = visit(c, link, heading, list);
        s.text += cs.text;
        s.linkText += cs.linkText;
        s.headingText += cs.headingText;
        s.listText += cs.listText;
        s.commas += cs.commas;
        s.links += cs.links;
        s.prose += cs.prose;
        s.paragraphs += cs.paragraphs;
        s.images += cs.images;
        s.listItems += cs.listItems;
        s.inputs += cs.inputs;
        s.embeds += cs.embeds;
        s.pres += cs.pres;
        if (!cs.inline || BLOCKS.has(c.name)) s.inline = false;
      }
    }
    if (name === 'p') {
      s.paragraphs++;
      if (s.text >= PROSE_MIN_CHARS && s.linkText < 0.5 * s.text) s.prose++;
    }
    stats.set(el, s);
    return s;
  };
  visit(root, false, false, false);
  return stats;
}

export const linkDensity = (s: Stats | undefined) => (s && s.text ? s.linkText / s.text : 0);
