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
import { CALL_LIMIT } from './page-values';

/** Console output kept per call (each stream), in characters; the rest is counted, not kept. */
export const OUTPUT_LIMIT = 1 << 20;

const PRELUDE = String.raw`((surface, LIMIT, CALL_LIMIT) => {
  'use strict';
  const call = globalThis.__wdsBridge;
  try { delete globalThis.__wdsBridge; } catch (e) {}
  // The code may replace any built-in; what bounds the answer is taken before it runs.
  const str = String;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const is = Object.is;
  const cut = Function.prototype.call.bind(String.prototype.slice);
  const define = (name, value) => Object.defineProperty(globalThis, name, { value });
  const state = { url: 'about:blank', viewport: null };
  let out = { stdout: '', stderr: '', truncated: false };
  let kept;
  let failure;
  const fmt = (v) => {
    if (typeof v === 'string') return v;
    try { const s = stringify(v); return typeof s === 'string' ? s : str(v); } catch (e) { try { return str(v); } catch (e2) { return '[unprintable]'; } }
  };
  const bounded = (s, limit) => {
    if (s.length <= limit) return s;
    out.truncated = true;
    return cut(s, 0, limit);
  };
  const write = (stream) => (...a) => {
    let line = '';
    for (let i = 0; i < a.length; i++) line += (i ? ' ' : '') + fmt(a[i]);
    line += '\n';
    const room = LIMIT - out[stream].length;
    if (line.length > room) { out.truncated = true; out[stream] += cut(line, 0, room > 0 ? room : 0); }
    else out[stream] += line;
  };
  for (const m of ['log', 'info', 'debug']) console[m] = write('stdout');
  for (const m of ['warn', 'error', 'trace']) console[m] = write('stderr');
  // Uncaught errors of timers the code left behind stay in the page (not reported through CDP).
  addEventListener('error', (e) => e.preventDefault());
  addEventListener('unhandledrejection', (e) => e.preventDefault());

  /** The result as the answer shows it: strings as they are, other values as JSON, undefined as null. */
  const show = (v) => {
    if (v === undefined) return null;
    if (v === null) return 'null';
    if (typeof v === 'number') return is(v, -0) ? '-0' : str(v);
    if (typeof v === 'object') return fmt(v);
    try { return str(v); } catch (e) { return '[unprintable]'; }
  };
  const describe = (e) => {
    try { const s = e !== null && typeof e === 'object' && typeof e.stack === 'string' ? e.stack : str(e); return typeof s === 'string' ? s : 'Uncaught exception'; } catch (x) { return 'Uncaught exception'; }
  };
  define('__wdsKeep', (v) => { kept = v; });
  define('__wdsRun', async (fn) => {
    try {
      const v = await fn();
      if (v !== undefined) kept = v;
    } catch (e) {
      failure = describe(e);
    }
  });

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
  const dec = (v) => {
    if (!v || typeof v !== 'object') return v;
    if (typeof v.$bytes === 'string') return new Bytes(v.$bytes);
    if (typeof v.$json === 'string') return parse(v.$json);
    return v;
  };
  const send = async (target, method, args) => {
    const wire = encArgs(args);
    const size = stringify(wire).length;
    if (size > CALL_LIMIT) throw new Error(method + ': the arguments are ' + size + ' characters of JSON, more than the ' + CALL_LIMIT + ' one page call may take');
    const r = await call({ target, method, args: wire });
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

  define('__wdsBegin', (s) => {
    state.url = s.url;
    state.viewport = s.viewport;
    out = { stdout: '', stderr: '', truncated: false };
    kept = undefined;
    failure = undefined;
    globalThis.page = page;
  });
  // The call's output, result and exception, each bounded here: this is all that crosses.
  define('__wdsOutput', () => {
    const result = show(kept);
    return {
      stdout: out.stdout,
      stderr: out.stderr,
      result: typeof result === 'string' ? bounded(result, LIMIT) : null,
      error: failure === undefined ? undefined : bounded(failure, 10000),
      truncated: out.truncated,
    };
  });
})`;

/** The sandbox page's setup, with the method names the bridge accepts. */
export const SANDBOX_PRELUDE = `${PRELUDE}(${JSON.stringify(sandboxSurface())}, ${OUTPUT_LIMIT}, ${CALL_LIMIT})`;
