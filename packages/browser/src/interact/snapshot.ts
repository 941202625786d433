/**
 * What a model sees of a live page before it writes interact code for a prompt: the URL, the
 * title, the visible text and the interactive elements with a selector for each. Read by a
 * page-side script (a string, evaluated in the page like `executeJavascript`), bounded in size.
 */
import type { LivePage } from './live-page';

/** Characters of visible text in a snapshot; elements are listed up to MAX_ELEMENTS. */
const MAX_TEXT = 6_000;
const MAX_ELEMENTS = 80;

const SNAPSHOT_SCRIPT = `(() => {
  const visible = (el) => { const r = el.getBoundingClientRect(); const s = getComputedStyle(el); return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const css = (v) => (window.CSS && CSS.escape ? CSS.escape(v) : v.replace(/[^a-zA-Z0-9_-]/g, '\\\\$&'));
  const selectorOf = (el) => {
    if (el.id) return '#' + css(el.id);
    const tag = el.tagName.toLowerCase();
    for (const a of ['data-testid', 'name', 'aria-label', 'placeholder']) {
      const v = el.getAttribute(a);
      if (v) return tag + '[' + a + '="' + v.replace(/"/g, '\\\\"') + '"]';
    }
    const text = (el.innerText || '').trim();
    if (text && text.length <= 60 && ['a', 'button'].includes(tag)) return tag + ':has-text("' + text.replace(/"/g, '\\\\"') + '")';
    const parent = el.parentElement;
    const same = parent ? [...parent.children].filter((c) => c.tagName === el.tagName) : [el];
    return (parent && parent !== document.body ? selectorOf(parent) + ' > ' : '') + tag + (same.length > 1 ? ':nth-of-type(' + (same.indexOf(el) + 1) + ')' : '');
  };
  const els = [...document.querySelectorAll('a[href], button, input, select, textarea, [role=button], [role=link], [role=tab], [onclick], [contenteditable=true]')]
    .filter(visible).slice(0, ${MAX_ELEMENTS})
    .map((el) => {
      const d = { tag: el.tagName.toLowerCase(), selector: selectorOf(el) };
      const text = (el.innerText || el.value || '').trim().replace(/\\s+/g, ' ').slice(0, 80);
      if (text) d.text = text;
      for (const a of ['type', 'name', 'placeholder', 'href', 'role', 'aria-label']) { const v = el.getAttribute(a); if (v) d[a] = v.slice(0, 120); }
      return d;
    });
  const text = (document.body ? document.body.innerText : '').replace(/\\n{3,}/g, '\\n\\n').slice(0, ${MAX_TEXT});
  return { url: location.href, title: document.title, text, elements: els };
})()`;

export interface PageSnapshot {
  url: string;
  title: string;
  /** Visible text, cut at MAX_TEXT characters. */
  text: string;
  elements: Array<Record<string, string>>;
}

export async function snapshotPage(live: LivePage): Promise<PageSnapshot> {
  if (live.gone) throw live.gone;
  return (await live.page.evaluate(SNAPSHOT_SCRIPT)) as PageSnapshot;
}
