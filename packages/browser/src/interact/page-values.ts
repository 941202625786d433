/**
 * What one bridged call may carry between the session's page and the worker's Node process.
 * A page value reaches Node through CDP whole, whatever its size (`page.evaluate(() =>
 * 'A'.repeat(1e8))` once cost the worker 100 MB of string and +440 MB of RSS), so the size is
 * decided in the page, before anything crosses: the value is serialized to JSON there, and a
 * JSON text longer than CALL_LIMIT is refused in the page (the call fails saying so) instead of
 * sent. What crosses is a primitive string whose length the page cannot fake.
 *
 * Screenshots are made by Chromium, not by page script: their area is checked before the capture
 * (sizes come from the browser, not from the page), their bytes after it — so what a screenshot
 * makes the worker hold is bounded by its area, not by a few MiB.
 *
 * Everything here that runs in the page is a string (the build must not rewrite it) and reads no
 * page global it could not do without: a page that replaces `JSON.stringify` gets a wrong value,
 * never a large one.
 */

/** Characters of JSON one page call may return to the worker, or take from the code as arguments. */
export const CALL_LIMIT = 4 * 1024 * 1024;
/**
 * Pixels one screenshot may cover (device pixels: the area times the scale factor squared),
 * checked before the capture: a desktop page 8,700 CSS px tall, a full-page capture of a 100,000
 * px page is refused. Chromium's PNG of that many pixels is typically 1-8 MB, at worst (noise) 4
 * bytes a pixel: what the worker may hold for a moment before the byte limit refuses it.
 */
export const SHOT_PIXEL_LIMIT = 4096 * 4096;
/** Bytes of one screenshot, checked after the capture. */
export const SHOT_BYTE_LIMIT = 8 * 1024 * 1024;
/** Characters of a page-side error message that cross. */
const ERROR_LIMIT = 2_000;

const TOO_LARGE = 'WDS_TOO_LARGE:';
const PAGE_ERROR = 'WDS_PAGE_ERROR:';

/** Page side: `v` as JSON text of at most CALL_LIMIT characters (undefined stays undefined), else a thrown refusal. */
export const SERIALIZE = `((v) => {
  let s;
  try { s = JSON.stringify(v); } catch (e) { try { s = JSON.stringify(String(v)); } catch (e2) { s = undefined; } }
  if (typeof s !== 'string') return undefined;
  if (s.length > ${CALL_LIMIT}) throw '${TOO_LARGE}' + s.length;
  return s;
})`;

/**
 * Page side: an exception as a bounded primitive string (its message, never the page's own
 * objects). A longer message is replaced, not cut: cutting would call a String method the page
 * may have replaced.
 */
const ERROR_TEXT = `((e) => {
  let m;
  try { m = e instanceof Error ? String(e.name) + ': ' + String(e.message) : String(e); } catch (x) { m = 'a value that cannot be printed was thrown'; }
  if (typeof m !== 'string') return '${PAGE_ERROR}error';
  return '${PAGE_ERROR}' + (m.length <= ${ERROR_LIMIT} ? m : 'an error whose message is ' + m.length + ' characters long (more than ${ERROR_LIMIT}) was thrown');
})`;

/** An expression for `page.evaluate` that awaits `call` in the page and resolves to its bounded JSON text (or undefined). */
export function boundedExpression(call: string): string {
  return `(async () => { let v; try { v = await (${call}\n); } catch (e) { throw ${ERROR_TEXT}(e); } return ${SERIALIZE}(v); })()`;
}

/**
 * A `waitForFunction` predicate around `call`: the same truthiness, and a truthy value comes back
 * as `{$json}` (bounded JSON text) rather than the value itself.
 */
export function boundedPredicate(call: string): string {
  return `(() => {
    const wrap = (x) => (x ? { $json: ${SERIALIZE}(x) } : x);
    const v = (${call}\n);
    return v && typeof v.then === 'function' ? v.then(wrap) : wrap(v);
  })()`;
}

/** What the bridge hands the sandbox for bounded JSON text: decoded there, not in Node. */
export function jsonValue(text: unknown): unknown {
  return typeof text === 'string' ? { $json: text } : undefined;
}

/** A refusal the caller sees as the call's error (and in stderr). */
export class TooLarge extends Error {}
/** What the page threw, as its message (no page object crossed). */
export class PageError extends Error {}

export function tooLargeValue(chars: number): TooLarge {
  return new TooLarge(
    `refused: the value is ${chars} characters of JSON, more than the ${CALL_LIMIT} (4 MiB) one page call may return to the worker; return less (a slice, or only the fields you need)`,
  );
}

/** The page's own failure or refusal, from what Playwright reports of a thrown marker string. */
export function pageFailure(message: string): TooLarge | PageError | undefined {
  const large = new RegExp(`${TOO_LARGE}(\\d+)`).exec(message);
  if (large) return tooLargeValue(Number(large[1]));
  const i = message.indexOf(PAGE_ERROR);
  return i === -1 ? undefined : new PageError(message.slice(i + PAGE_ERROR.length));
}

/** The page's `document` as HTML (Playwright's `page.content()`), evaluated in the page. */
export const CONTENT = `(() => {
  let s = '';
  if (document.doctype) s = new XMLSerializer().serializeToString(document.doctype);
  if (document.documentElement) s += document.documentElement.outerHTML;
  return s;
})()`;

/** Element reads as page functions of the element (or, for the `all…` ones, of the list), as Playwright's same-named calls answer. */
export const ELEMENT_READS: Record<string, string> = {
  textContent: '(el) => el.textContent',
  innerHTML: `(el) => { if (!(el instanceof Element)) throw new Error('Node is not an element'); return el.innerHTML; }`,
  innerText: `(el) => { if (!(el instanceof HTMLElement)) throw new Error('Node is not an HTMLElement'); return el.innerText; }`,
  inputValue: `(el) => {
    if (!(el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement)) throw new Error('Node is not an <input>, <textarea> or <select> element');
    return el.value;
  }`,
  getAttribute: '(el, name) => el.getAttribute(name)',
  allTextContents: `(els) => els.map((e) => e.textContent || '')`,
  allInnerTexts: '(els) => els.map((e) => e.innerText)',
};

export interface ShotArea {
  width: number;
  height: number;
  /** Device pixels per CSS pixel. */
  scale: number;
}

export function tooLargeShot(what: string, a: ShotArea): TooLarge {
  const px = Math.round(a.width * a.height * a.scale * a.scale);
  return new TooLarge(
    `refused: ${what} would cover ${px} pixels (${Math.round(a.width)}×${Math.round(a.height)} CSS px at scale ${a.scale}), more than the ${SHOT_PIXEL_LIMIT} one screenshot may; use clip, a smaller viewport or scale: 'css'`,
  );
}

export function tooLargeBytes(bytes: number): TooLarge {
  return new TooLarge(`refused: the screenshot is ${bytes} bytes, more than the ${SHOT_BYTE_LIMIT} (8 MiB) one may be; use clip or type: 'jpeg' with a quality`);
}

export function shotFits(a: ShotArea): boolean {
  return a.width * a.height * a.scale * a.scale <= SHOT_PIXEL_LIMIT;
}
