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
import { randomUUID } from 'node:crypto';
import type { Locator, Page, Response } from 'playwright-core';
import { WdsError } from '@wds/errors';
import { playwrightMessage } from '../errors';
import { parseTarget } from '../render';
import type { LivePage } from './live-page';
import { KEYBOARD_METHODS, LOCATOR_BUILDERS, LOCATOR_METHODS, MOUSE_METHODS, PAGE_BUILDERS, PAGE_METHODS, type MethodSpec } from './methods';

type Chain = [string, unknown[]][];
interface Call {
  target: 'page' | 'keyboard' | 'mouse' | { loc: Chain };
  method: string;
  args: unknown[];
}
/** A function argument: its source, or a string expression. */
type Fn = { src: string; isFunction: boolean };

export interface BridgeAnswer {
  value: unknown;
  url: string;
  viewport: { width: number; height: number } | null;
}

const MAX_CHAIN = 50;
const MAX_STRING = 5_000_000;
/** Methods after which the main frame must still show an allowed document (else URL_BLOCKED). */
const NAVIGATING = new Set(['goto', 'reload', 'goBack', 'goForward', 'waitForURL', 'setContent']);

const fail = (msg: string): never => {
  throw new Error(msg);
};
const isPlain = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const own = <T>(table: Record<string, T>, k: string): T | undefined => (Object.hasOwn(table, k) ? table[k] : undefined);

/** Page-side helpers (real functions of this module, never user code): hold an element under a random global name. */
const KEEP = (el: unknown, k: string) => void Object.defineProperty(globalThis, k, { value: el, configurable: true });
const DROP = (k: string) => void delete (globalThis as Record<string, unknown>)[k];

export class Bridge {
  private open = true;

  constructor(
    private readonly live: LivePage,
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
      throw new Error(`${callName(call)}: ${errorText(e)}`);
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
        return page.evaluate(callExpression(args[0] as Fn, args[1]));
      case 'waitForFunction':
        return (await page.waitForFunction(callExpression(args[0] as Fn, args[1]), undefined, args[2] as object)).jsonValue();
      case '$eval':
      case '$$eval': {
        const key = `__wds_el_${randomUUID().replaceAll('-', '')}`;
        if (method === '$eval') await page.$eval(args[0] as string, KEEP, key);
        else await page.$$eval(args[0] as string, KEEP, key);
        return this.onHeld(key, args[1] as Fn, args[2]);
      }
      default:
        return (page as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...args);
    }
  }

  private async onLocator(loc: Locator, method: string, raw: unknown[]): Promise<unknown> {
    const spec = own(LOCATOR_METHODS, method) ?? fail(`locator.${method} is not available in interact code`);
    const args = this.checkArgs(spec, raw, `locator.${method}`);
    if (method === 'evaluate' || method === 'evaluateAll') {
      const key = `__wds_el_${randomUUID().replaceAll('-', '')}`;
      if (method === 'evaluate') await loc.evaluate(KEEP, key, args[2] as { timeout?: number });
      else await loc.evaluateAll(KEEP, key);
      return this.onHeld(key, args[0] as Fn, args[1]);
    }
    return (loc as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...args);
  }

  /** Runs the code's function in the page on the element(s) held under `key`, then lets go of them. */
  private async onHeld(key: string, f: Fn, arg: unknown): Promise<unknown> {
    try {
      return await this.page.evaluate(`(${f.src})(globalThis[${JSON.stringify(key)}], ${argExpression(arg)})`);
    } finally {
      await this.page.evaluate(DROP, key).catch(() => {});
    }
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
        out[i] = v;
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
        return typeof v === 'string' && v.length <= MAX_STRING ? v : fail(`${name}: expected a string`);
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

function parseCall(raw: unknown): Call {
  if (!isPlain(raw) || typeof raw.method !== 'string' || !Array.isArray(raw.args)) fail('invalid call');
  const c = raw as { target: unknown; method: string; args: unknown[] };
  const t = c.target;
  if (t === 'page' || t === 'keyboard' || t === 'mouse') return { target: t, method: c.method, args: c.args };
  if (isPlain(t) && Array.isArray(t.loc)) return { target: { loc: t.loc as Chain }, method: c.method, args: c.args };
  return fail('invalid call target');
}

function regexOf(v: unknown): RegExp | undefined {
  if (!isPlain(v) || !Array.isArray(v.$re)) return undefined;
  const [source, flags] = v.$re as unknown[];
  if (typeof source !== 'string' || typeof flags !== 'string' || source.length > 10_000) return undefined;
  try {
    return new RegExp(source, flags);
  } catch {
    return undefined;
  }
}

function fnOf(v: unknown): Fn | undefined {
  if (typeof v === 'string') return { src: v, isFunction: false };
  if (isPlain(v) && typeof v.$fn === 'string' && v.$fn.length <= MAX_STRING) return { src: v.$fn, isFunction: true };
  return undefined;
}

function sizeOf(v: unknown): { width: number; height: number } | undefined {
  if (!isPlain(v)) return undefined;
  const ok = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 10_000;
  return ok(v.width) && ok(v.height) ? { width: v.width as number, height: v.height as number } : undefined;
}

function selectValues(v: unknown): unknown {
  const one = (x: unknown) => typeof x === 'string' || (isPlain(x) && Object.keys(x).every((k) => ['value', 'label', 'index'].includes(k)));
  return (Array.isArray(v) ? v.every(one) : one(v)) ? v : undefined;
}

/** Option values are data: a function (or anything that is not JSON) is refused. */
function plainData(x: unknown, what: string): unknown {
  if (isPlain(x) && ('$fn' in x || '$loc' in x)) fail(`${what} must be plain data`);
  return x;
}

/** The JS expression of an argument passed to a page function (JSON: the binding delivered plain data). */
function argExpression(arg: unknown): string {
  return arg === undefined ? 'undefined' : JSON.stringify(arg);
}

/** `evaluate(fn, arg)` as one expression for the page; a string stays an expression (Playwright's rule). */
function callExpression(f: Fn, arg: unknown): string {
  return f.isFunction ? `(${f.src})(${argExpression(arg)})` : f.src;
}

/** What a Playwright call returned, as plain data for the sandbox. */
function toWire(v: unknown): unknown {
  if (v === undefined || v === null || typeof v !== 'object') return v;
  if (Buffer.isBuffer(v)) return { $bytes: v.toString('base64') };
  if (typeof (v as Response).status === 'function' && typeof (v as Response).url === 'function') {
    const r = v as Response;
    return { url: r.url(), status: r.status() };
  }
  try {
    return JSON.parse(JSON.stringify(v)) as unknown;
  } catch {
    return String(v);
  }
}

/** The message user code sees: Playwright's (its call log and stack cut), a WdsError's message. */
function errorText(e: unknown): string {
  return (e instanceof WdsError ? e.message : playwrightMessage(e)).slice(0, 2_000);
}

function callName(c: Call): string {
  if (typeof c.target !== 'string') return `locator.${c.method}`;
  return c.target === 'page' ? `page.${c.method}` : `page.${c.target}.${c.method}`;
}
