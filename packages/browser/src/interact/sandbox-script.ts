/**
 * The script that prepares a code sandbox page (sandbox.ts): it defines `page` — a stand-in for
 * Playwright's Page whose every method sends one JSON message to the bridge binding and awaits
 * the answer — and captures `console` output. It runs in Chromium, in the sandbox's own context,
 * never in Node; it is a string so the build cannot rewrite it.
 *
 * Wire format of a call: `{target, method, args}` where target is 'page', 'keyboard', 'mouse' or
 * `{loc: chain}` (a locator as the list of builder calls that made it, resolved on the target page
 * at each use). Functions travel as `{$fn: source}`, RegExps as `{$re: [source, flags]}`,
 * locators as `{$loc: chain}`. Answers are `{value, url, viewport}`; bytes come as `{$bytes}`.
 * `page.url()` and `page.viewportSize()` are synchronous, as in Playwright: they read what the
 * last answer said.
 */
import { sandboxSurface } from './methods';

/** Console output kept per call (each stream), in characters; the rest is counted, not kept. */
export const OUTPUT_LIMIT = 1 << 20;

const PRELUDE = String.raw`((surface, LIMIT) => {
  'use strict';
  const call = globalThis.__wdsBridge;
  try { delete globalThis.__wdsBridge; } catch (e) {}
  const state = { url: 'about:blank', viewport: null };
  let out = { stdout: '', stderr: '', truncated: false };
  const fmt = (v) => {
    if (typeof v === 'string') return v;
    try { const s = JSON.stringify(v); return s === undefined ? String(v) : s; } catch (e) { return String(v); }
  };
  const write = (stream) => (...a) => {
    const line = a.map(fmt).join(' ') + '\n';
    if (out[stream].length + line.length > LIMIT) { out.truncated = true; out[stream] += line.slice(0, Math.max(0, LIMIT - out[stream].length)); }
    else out[stream] += line;
  };
  for (const m of ['log', 'info', 'debug']) console[m] = write('stdout');
  for (const m of ['warn', 'error', 'trace']) console[m] = write('stderr');

  class Bytes {
    constructor(b64) { Object.defineProperty(this, 'b64', { value: b64 }); }
    toString(enc) { return enc === 'base64' ? this.b64 : atob(this.b64); }
    toJSON() { return this.b64; }
    get length() { return Math.floor(this.b64.length * 3 / 4) - (this.b64.endsWith('==') ? 2 : this.b64.endsWith('=') ? 1 : 0); }
  }

  const enc = (v, depth) => {
    if (depth > 20) throw new Error('argument nested too deeply');
    if (v === undefined) return null;
    if (typeof v === 'function') return { $fn: String(v) };
    if (v instanceof RegExp) return { $re: [v.source, v.flags] };
    if (v instanceof Locator) return { $loc: v._chain };
    if (Array.isArray(v)) return v.map((x) => enc(x, depth + 1));
    if (v && typeof v === 'object') {
      const o = {};
      for (const [k, x] of Object.entries(v)) if (x !== undefined) o[k] = enc(x, depth + 1);
      return o;
    }
    return v;
  };
  const encArgs = (args) => {
    const a = [...args];
    while (a.length && a[a.length - 1] === undefined) a.pop();
    return a.map((x) => enc(x, 0));
  };
  const dec = (v) => (v && typeof v === 'object' && typeof v.$bytes === 'string' ? new Bytes(v.$bytes) : v);
  const send = async (target, method, args) => {
    const r = await call({ target, method, args: encArgs(args) });
    state.url = r.url;
    state.viewport = r.viewport;
    return dec(r.value);
  };

  class Locator {
    constructor(chain) { Object.defineProperty(this, '_chain', { value: chain }); }
    async all() { const n = await this.count(); return Array.from({ length: n }, (_, i) => this.nth(i)); }
    toString() { return 'Locator ' + JSON.stringify(this._chain); }
  }
  for (const m of surface.locatorBuilders) Locator.prototype[m] = function (...a) { return new Locator([...this._chain, [m, encArgs(a)]]); };
  for (const m of surface.locator) Locator.prototype[m] = function (...a) { return send({ loc: this._chain }, m, a); };

  const page = {
    url: () => state.url,
    viewportSize: () => state.viewport,
    keyboard: {},
    mouse: {},
    async $(selector) {
      const l = new Locator([['locator', [selector]]]);
      return (await l.count()) > 0 ? l.first() : null;
    },
    async $$(selector) { return new Locator([['locator', [selector]]]).all(); },
  };
  for (const m of surface.page) page[m] = (...a) => send('page', m, a);
  for (const m of surface.pageBuilders) page[m] = (...a) => new Locator([[m, encArgs(a)]]);
  for (const m of surface.keyboard) page.keyboard[m] = (...a) => send('keyboard', m, a);
  for (const m of surface.mouse) page.mouse[m] = (...a) => send('mouse', m, a);
  // Playwright answers an ElementHandle or null; here a locator of the first match, or null.
  page.waitForSelector = async (selector, o) => ((await send('page', 'waitForSelector', [selector, o])) ? new Locator([['locator', [selector]], ['first', []]]) : null);
  Object.freeze(page.keyboard);
  Object.freeze(page.mouse);
  Object.freeze(page);

  Object.defineProperty(globalThis, '__wdsBegin', {
    value: (s) => {
      state.url = s.url;
      state.viewport = s.viewport;
      out = { stdout: '', stderr: '', truncated: false };
      globalThis.page = page;
    },
  });
  Object.defineProperty(globalThis, '__wdsOutput', { value: () => out });
})`;

/** The sandbox page's setup, with the method names the bridge accepts. */
export const SANDBOX_PRELUDE = `${PRELUDE}(${JSON.stringify(sandboxSurface())}, ${OUTPUT_LIMIT})`;
