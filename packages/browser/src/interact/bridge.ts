/**
 * The Node side of the sandbox's `page` proxy: one JSON message in, one Playwright call on the
 * session's page out. Everything is checked against the tables in methods.ts — the method, the
 * number and kind of arguments, every option name — so the only effect user code can have is a
 * listed call on its own page. Functions the code passes (`page.evaluate(fn)`, `$eval`,
 * `locator.evaluate`…) are never compiled or run in Node: their source is sent to the page as a
 * string expression, as `executeJavascript` does. Every call is bounded by the interaction's
 * deadline (its own `timeout` option included), and the bridge refuses calls once the
 * interaction is over (a timed-out script's late promises).
 */
import type { Locator, Page, PageScreenshotOptions } from 'playwright-core';
import { parseTarget } from '../target';
import {
  callExpression,
  callName,
  errorText,
  fail,
  fnOf,
  isPlain,
  jsonArg,
  own,
  parseCall,
  plainData,
  regexOf,
  selectValues,
  sizeOf,
  stringOf,
  toWire,
  type Call,
  type Fn,
} from './bridge-args';
import { boundedScreenshot, evaluateBounded, isElementRead, onHeld, readDocument, readElement, waitForBounded, type ShotSource } from './bounded-calls';
import type { PageWatch } from '../page-watch';
import { KEYBOARD_METHODS, LOCATOR_BUILDERS, LOCATOR_METHODS, MOUSE_METHODS, PAGE_BUILDERS, PAGE_METHODS, type MethodSpec } from './methods';
import { CALL_LIMIT, TooLarge } from './page-values';

export interface BridgeAnswer {
  value: unknown;
  url: string;
  viewport: { width: number; height: number } | null;
}

const MAX_CHAIN = 50;
/** Methods after which the main frame must still show an allowed document (else URL_BLOCKED). */
const NAVIGATING = new Set(['goto', 'reload', 'goBack', 'goForward', 'waitForURL', 'setContent']);
/** Page reads of an element by selector: `page.textContent(selector, …)` is `locator(selector).first()`'s unless `strict`. */
const PAGE_READS = new Set(['textContent', 'innerText', 'innerHTML', 'inputValue', 'getAttribute']);

/** What the bridge acts on: the session's page, its watch and what screenshots need (a LivePage is one). */
export interface BridgedPage extends ShotSource {
  readonly page: Page;
  readonly watch: PageWatch;
}

export class Bridge {
  private open = true;
  /** Refusals of this interaction (a value or screenshot too large): the answer's stderr lists them even when the code caught them. */
  readonly notes: string[] = [];

  constructor(
    private readonly live: BridgedPage,
    /** performance.now() by which the interaction ends. */
    private readonly deadline: number,
  ) {}

  /** No further calls: the interaction ended (its answer is out, or it timed out). */
  close(): void {
    this.open = false;
  }

  private get page(): Page {
    return this.live.page;
  }

  private remaining(): number {
    return Math.max(1, this.deadline - performance.now());
  }

  async dispatch(raw: unknown): Promise<BridgeAnswer> {
    if (!this.open) fail('this interaction is over (it timed out or returned); later page calls are refused');
    const call = parseCall(raw);
    try {
      if (NAVIGATING.has(call.method)) this.live.watch.resetMainFrameBlock();
      const value = await this.withinDeadline(this.invoke(call), call.method);
      if (typeof call.target === 'string' && NAVIGATING.has(call.method)) this.live.watch.checkMainFrame();
      return { value: toWire(value), url: this.page.url(), viewport: this.page.viewportSize() };
    } catch (e) {
      const text = `${callName(call)}: ${errorText(e)}`;
      if (e instanceof TooLarge) this.notes.push(`[wds] ${text}`);
      // The code sees the message, not the worker's stack (file paths of this process).
      const err = new Error(text);
      err.stack = `Error: ${text}`;
      throw err;
    }
  }

  private async withinDeadline<T>(p: Promise<T>, method: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    p.catch(() => {});
    try {
      return await Promise.race([
        p,
        new Promise<never>((_, rej) => {
          timer = setTimeout(() => rej(new Error(`${method}: the interaction's timeout was reached`)), this.remaining());
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async invoke(c: Call): Promise<unknown> {
    if (c.target === 'page') return this.onPage(c.method, c.args);
    if (c.target === 'keyboard' || c.target === 'mouse') {
      const table = c.target === 'keyboard' ? KEYBOARD_METHODS : MOUSE_METHODS;
      const spec = own(table, c.method) ?? fail(`page.${c.target}.${c.method} is not available in interact code`);
      const args = this.checkArgs(spec, c.args, `page.${c.target}.${c.method}`);
      const target = this.page[c.target] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      return target[c.method]!(...args);
    }
    return this.onLocator(this.locatorOf(c.target.loc, 0), c.method, c.args);
  }

  private async onPage(method: string, raw: unknown[]): Promise<unknown> {
    const spec = own(PAGE_METHODS, method) ?? fail(`page.${method} is not available in interact code`);
    const args = this.checkArgs(spec, raw, `page.${method}`);
    const page = this.page;
    switch (method) {
      case 'goto': {
        const url = parseTarget(args[0] as string);
        try {
          return await page.goto(url.href, args[1] as object);
        } catch (e) {
          // The SSRF proxy's refusal (or a DNS/TLS/connection failure) in the scrape's own words.
          throw this.live.watch.navigationFailure(e, url) ?? e;
        }
      }
      case 'waitForTimeout':
        return page.waitForTimeout(Math.min(Math.max(0, args[0] as number), this.remaining()));
      case 'waitForSelector':
        return (await page.waitForSelector(args[0] as string, args[1] as object)) !== null;
      case 'evaluate':
        return evaluateBounded(page, callExpression(args[0] as Fn, args[1]));
      case 'waitForFunction':
        return waitForBounded(page, callExpression(args[0] as Fn, args[1]), args[2] as object);
      case '$eval':
        return onHeld(page, (keep, k) => page.$eval(args[0] as string, keep, k), (args[1] as Fn).src, args[2]);
      case '$$eval':
        return onHeld(page, (keep, k) => page.$$eval(args[0] as string, keep, k), (args[1] as Fn).src, args[2]);
      case 'title':
      case 'content':
        return readDocument(page, method);
      case 'screenshot':
        return boundedScreenshot(this.live, page, (args[0] ?? {}) as PageScreenshotOptions);
      default:
        if (PAGE_READS.has(method)) return this.pageRead(method, args);
        return (page as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...args);
    }
  }

  /** `page.textContent(selector, options)` and the other reads by selector, answered by a page function. */
  private pageRead(method: string, args: unknown[]): Promise<unknown> {
    const withName = method === 'getAttribute';
    const o = (args[withName ? 2 : 1] ?? {}) as { strict?: boolean; timeout?: number };
    const all = this.page.locator(args[0] as string);
    return readElement(this.page, o.strict ? all : all.first(), method, withName ? args[1] : undefined, o.timeout);
  }

  private async onLocator(loc: Locator, method: string, raw: unknown[]): Promise<unknown> {
    const spec = own(LOCATOR_METHODS, method) ?? fail(`locator.${method} is not available in interact code`);
    const args = this.checkArgs(spec, raw, `locator.${method}`);
    const page = this.page;
    if (method === 'evaluate') return onHeld(page, (keep, k) => loc.evaluate(keep, k, args[2] as { timeout?: number }), (args[0] as Fn).src, args[1]);
    if (method === 'evaluateAll') return onHeld(page, (keep, k) => loc.evaluateAll(keep, k), (args[0] as Fn).src, args[1]);
    if (method === 'screenshot') return boundedScreenshot(this.live, loc, (args[0] ?? {}) as PageScreenshotOptions);
    if (isElementRead(method)) {
      const withName = method === 'getAttribute';
      return readElement(page, loc, method, withName ? args[0] : undefined, ((args[withName ? 1 : 0] ?? {}) as { timeout?: number }).timeout);
    }
    return (loc as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...args);
  }

  /** A locator from the builder calls that made it in the sandbox, each checked like a method call. */
  private locatorOf(chain: unknown, depth: number): Locator {
    if (depth > 5 || !Array.isArray(chain) || chain.length === 0 || chain.length > MAX_CHAIN) fail('invalid locator');
    let cur: unknown = this.page;
    (chain as unknown[]).forEach((step, i) => {
      if (!Array.isArray(step) || typeof step[0] !== 'string' || !Array.isArray(step[1])) fail('invalid locator');
      const [name, raw] = step as [string, unknown[]];
      if (i === 0 && !(PAGE_BUILDERS as readonly string[]).includes(name)) fail(`page.${name} does not make a locator`);
      const spec = own(LOCATOR_BUILDERS, name) ?? fail(`locator.${name} is not available in interact code`);
      const args = this.checkArgs(spec, raw, `locator.${name}`, depth);
      cur = (cur as Record<string, (...a: unknown[]) => unknown>)[name]!(...args);
    });
    return cur as Locator;
  }

  /** Checks (and decodes) the arguments against the method's spec; options get the interaction's remaining time as their timeout cap. */
  private checkArgs(spec: MethodSpec, raw: unknown[], name: string, depth = 0): unknown[] {
    if (raw.length > spec.args.length) fail(`${name}: too many arguments`);
    const out: unknown[] = [];
    spec.args.forEach((k, i) => {
      const optional = k.endsWith('?');
      const kind = optional ? k.slice(0, -1) : k;
      const v = raw[i];
      if (kind === 'j') {
        out[i] = jsonArg(v, name);
        return;
      }
      if (v === undefined || v === null) {
        if (kind === 'o' && spec.opts?.includes('timeout')) out[i] = { timeout: this.remaining() };
        else if (!optional) fail(`${name}: argument ${i + 1} is required`);
        else out[i] = undefined;
        return;
      }
      out[i] = this.decodeArg(kind, v, spec, name, depth);
    });
    while (out.length && out[out.length - 1] === undefined) out.pop();
    return out;
  }

  private decodeArg(kind: string, v: unknown, spec: MethodSpec, name: string, depth: number): unknown {
    switch (kind) {
      case 's':
        return stringOf(v) ?? fail(`${name}: expected a string of at most ${CALL_LIMIT} characters`);
      case 'n':
        return typeof v === 'number' && Number.isFinite(v) ? v : fail(`${name}: expected a number`);
      case 'b':
        return typeof v === 'boolean' ? v : fail(`${name}: expected true or false`);
      case 'x':
      case 'u':
        return typeof v === 'string' ? v : regexOf(v) ?? fail(`${name}: expected a string or a RegExp`);
      case 'f':
        return fnOf(v) ?? fail(`${name}: expected a function`);
      case 'l':
        return this.locatorOf(isPlain(v) ? v.$loc : undefined, depth + 1);
      case 'z':
        return sizeOf(v) ?? fail(`${name}: expected {width, height}`);
      case 'v':
        return selectValues(v) ?? fail(`${name}: expected option values`);
      case 'o':
        return this.options(v, spec.opts ?? [], name, depth);
      default:
        return fail(`${name}: unsupported argument`);
    }
  }

  private options(v: unknown, allowed: readonly string[], name: string, depth: number): Record<string, unknown> {
    if (!isPlain(v)) fail(`${name}: options must be an object`);
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (!allowed.includes(k)) fail(`${name}: option "${k}" is not available in interact code`);
      if (k === 'has' || k === 'hasNot') o[k] = this.locatorOf(isPlain(x) ? x.$loc : undefined, depth + 1);
      else o[k] = regexOf(x) ?? plainData(x, `${name}: option "${k}"`);
    }
    // 0 means "no timeout" to Playwright: never past the interaction's own end.
    if (allowed.includes('timeout')) {
      const t = typeof o.timeout === 'number' && o.timeout > 0 ? o.timeout : Infinity;
      o.timeout = Math.min(t, this.remaining());
    }
    return o;
  }
}
