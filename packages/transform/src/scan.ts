import type { AnyNode, Element } from 'domhandler';
import { isTag } from './dom';

/**
 * Everything the page-level outputs need from the original tree, gathered in one walk:
 * metadata (meta tags, title, lang, icon), the <base href>, and the raw link and image
 * references in document order. Reading them separately cost one selector pass each.
 * `<noscript>` and `<template>` are skipped: a browser with scripting on (and parse5, which
 * the transform used before) sees their content as text, not as elements of the page.
 */
export interface PageScan {
  metas: Element[];
  /** The first <title> outside inline SVG (whose <title> is a tooltip). */
  title: Element | null;
  lang: string | undefined;
  iconHref: string | undefined;
  baseHref: string | undefined;
  /** href of the first <link rel="canonical">, as written. */
  canonicalHref: string | undefined;
  /** href of every <a href>, as written. */
  hrefs: string[];
  /** Every <img> with a src or srcset. */
  images: Element[];
}

const SKIPPED = new Set(['noscript', 'template']);

export function scanPage(root: AnyNode): PageScan {
  const s: PageScan = { metas: [], title: null, lang: undefined, iconHref: undefined, baseHref: undefined, canonicalHref: undefined, hrefs: [], images: [] };
  const walk = (node: AnyNode, inSvg: boolean) => {
    if (!('children' in node)) return;
    for (const c of node.children) {
      if (!isTag(c)) continue;
      const a = c.attribs;
      switch (c.name) {
        case 'a':
          if (a.href !== undefined) s.hrefs.push(a.href);
          break;
        case 'img':
          if (a.src !== undefined || a.srcset !== undefined) s.images.push(c);
          break;
        case 'meta':
          s.metas.push(c);
          break;
        case 'title':
          if (!inSvg && !s.title) s.title = c;
          break;
        case 'html':
          if (s.lang === undefined && a.lang !== undefined) s.lang = a.lang;
          break;
        case 'link':
          if (s.iconHref === undefined && a.rel && /(?:^|\s)icon(?:\s|$)/i.test(a.rel) && a.href !== undefined) s.iconHref = a.href;
          else if (s.canonicalHref === undefined && a.rel && /(?:^|\s)canonical(?:\s|$)/i.test(a.rel) && a.href?.trim()) s.canonicalHref = a.href.trim();
          break;
        case 'base':
          if (s.baseHref === undefined && a.href !== undefined) s.baseHref = a.href;
          break;
        default:
          if (SKIPPED.has(c.name)) continue;
      }
      if (c.children.length) walk(c, inSvg || c.name === 'svg');
    }
  };
  walk(root, false);
  return s;
}
