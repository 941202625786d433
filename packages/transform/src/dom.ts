import { parseDocument } from 'htmlparser2';
import { Document, Element, Text, type AnyNode, type ChildNode, type ParentNode } from 'domhandler';

/**
 * The one parse of a page. htmlparser2 builds the same domhandler tree cheerio works on, about
 * 7× faster than parse5 on the benchmark pages (packages/transform/README.md); it does not run
 * the HTML5 tree-construction algorithm, so `normalize` puts back the parts of it the rest of
 * the transform relies on: one <html> with a <body>, stray content after </body> inside the
 * body, and no newline right after <pre> (the spec drops it).
 */
export interface Page {
  doc: Document;
  html: Element;
  body: Element;
}

export const isTag = (n: AnyNode | null | undefined): n is Element => !!n && (n.type === 'tag' || n.type === 'script' || n.type === 'style');
export const isText = (n: AnyNode | null | undefined): n is Text => !!n && n.type === 'text';

/** Elements that belong in <head>; where a page puts them in the body they are still not content. */
const HEAD_TAGS = new Set(['title', 'meta', 'link', 'base', 'style', 'script', 'noscript', 'template']);

function findChild(parent: ParentNode, name: string): Element | undefined {
  for (const c of parent.children) if (isTag(c) && c.name === name) return c;
  return undefined;
}

function setChildren(parent: ParentNode, children: ChildNode[]): void {
  parent.children = children;
  for (let i = 0; i < children.length; i++) {
    const c = children[i];
    c.parent = parent;
    c.prev = children[i - 1] ?? null;
    c.next = children[i + 1] ?? null;
  }
}

/** Deeper than this, elements are flattened into their ancestor at this depth (Blink caps at 512). */
export const MAX_DEPTH = 400;

/** Every descendant of `el`, in document order, each emptied of children. */
function flatten(el: ParentNode): ChildNode[] {
  const out: ChildNode[] = [];
  const stack: ChildNode[] = [...el.children].reverse();
  while (stack.length) {
    const n = stack.pop()!;
    out.push(n);
    if ('children' in n && n.children.length) {
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
      (n as ParentNode).children = [];
    }
  }
  return out;
}

/**
 * One iterative walk over the document: drops the newline right after <pre>/<textarea>/<listing>
 * (the spec does), and flattens nesting deeper than MAX_DEPTH, so that the recursive walks of
 * the transform cannot run out of stack on a hostile page.
 */
function normalizeBody(root: Element): void {
  const stack: [ParentNode, number][] = [[root, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (depth >= MAX_DEPTH && node.children.some((c) => 'children' in c && c.children.length)) setChildren(node, flatten(node));
    for (const c of node.children) {
      if (!isTag(c)) continue;
      if (c.name === 'pre' || c.name === 'textarea' || c.name === 'listing') {
        const first = c.children[0];
        if (isText(first) && first.data.startsWith('\n')) first.data = first.data.slice(1);
        else if (isText(first) && first.data.startsWith('\r\n')) first.data = first.data.slice(2);
      }
      if (c.children.length) stack.push([c, depth + 1]);
    }
  }
}

/** Gives the tree the html > (head, body) shape a browser would, moving nodes as parse5 does. */
function normalize(doc: Document): Page {
  let html = findChild(doc, 'html');
  if (!html) {
    // A fragment or a page without <html>: everything but the doctype goes inside a new one.
    const kept = doc.children.filter((c) => c.type === 'directive');
    html = new Element('html', {});
    setChildren(html, doc.children.filter((c) => c.type !== 'directive'));
    setChildren(doc, [...kept, html]);
  } else {
    // Nodes before/after <html> at the root (comments, text, a trailing script) move into it.
    const outside = doc.children.filter((c) => c !== html && c.type !== 'directive');
    if (outside.length) {
      const before = doc.children.slice(0, doc.children.indexOf(html)).filter((c) => c.type !== 'directive');
      const after = doc.children.slice(doc.children.indexOf(html) + 1);
      setChildren(html, [...before, ...html.children, ...after]);
      setChildren(doc, [...doc.children.filter((c) => c.type === 'directive'), html]);
    }
  }
  let body = findChild(html, 'body');
  if (!body) {
    // No <body> tag: what is not <head> (or a head-only element before the content) is the body.
    body = new Element('body', {});
    const head: ChildNode[] = [];
    const content: ChildNode[] = [];
    let contentStarted = false;
    for (const c of html.children) {
      if (isTag(c) && (c.name === 'head' || (HEAD_TAGS.has(c.name) && !contentStarted))) head.push(c);
      else {
        content.push(c);
        if (isTag(c)) contentStarted = true;
      }
    }
    setChildren(body, content);
    setChildren(html, [...head, body]);
  } else {
    // Content after </body> (or before <body> but outside <head>) belongs to the body, as in a browser.
    const i = html.children.indexOf(body);
    const after = html.children.slice(i + 1);
    if (after.some((c) => isTag(c) || (isText(c) && c.data.trim()))) {
      setChildren(body, [...body.children, ...after]);
      setChildren(html, html.children.slice(0, i + 1));
    }
  }
  normalizeBody(html);
  return { doc, html, body };
}

export function parsePage(html: string): Page {
  // The HTML parsing spec reads a NUL in attribute values, raw text and comments as U+FFFD;
  // htmlparser2 keeps it, and the URL parser would then strip it from the end of an href.
  const text = html.includes('\0') ? html.replaceAll('\0', '\ufffd') : html;
  return normalize(parseDocument(text, { decodeEntities: true }));
}

/** Detach a node from its parent (domhandler keeps sibling links, so they are fixed here). */
export function removeNode(node: ChildNode): void {
  const parent = node.parent;
  if (!parent) return;
  const i = parent.children.indexOf(node);
  if (i >= 0) parent.children.splice(i, 1);
  if (node.prev) node.prev.next = node.next;
  if (node.next) node.next.prev = node.prev;
  node.parent = node.prev = node.next = null;
}

/** Detach many nodes: one pass per parent instead of a search per node. */
export function removeNodes(nodes: ChildNode[]): void {
  const byParent = new Map<ParentNode, Set<ChildNode>>();
  for (const n of nodes) {
    if (!n.parent) continue;
    let set = byParent.get(n.parent);
    if (!set) byParent.set(n.parent, (set = new Set()));
    set.add(n);
  }
  for (const [parent, doomed] of byParent) {
    setChildren(parent, parent.children.filter((c) => !doomed.has(c)));
    for (const n of doomed) n.parent = n.prev = n.next = null;
  }
}

/** Replace a parent's children in one go (cheaper than many removeNode calls on a long list). */
export function replaceChildren(parent: ParentNode, children: ChildNode[]): void {
  setChildren(parent, children);
}

/** Text content, whitespace as in the source. */
export function textOf(node: AnyNode): string {
  if (isText(node)) return node.data;
  if (!('children' in node)) return '';
  let s = '';
  for (const c of node.children) s += textOf(c);
  return s;
}

/** Nearest ancestor element with this name (not the node itself). */
export function ancestorNamed(node: AnyNode, name: string): Element | null {
  for (let p = node.parent; p; p = p.parent) if (isTag(p) && p.name === name) return p;
  return null;
}
