/**
 * The bridge's wire format, decoded and checked (pure: no page, no Playwright calls): a call
 * message, the kinds of argument methods.ts names, and the answer's value. See sandbox-script.ts
 * for the encoding on the sandbox's side.
 */
import type { Response } from 'playwright-core';
import { WdsError } from '@wds/errors';
import { playwrightMessage } from '../errors';
import { CALL_LIMIT, PageError, TooLarge } from './page-values';

export type Chain = [string, unknown[]][];
export interface Call {
  target: 'page' | 'keyboard' | 'mouse' | { loc: Chain };
  method: string;
  args: unknown[];
}
/** A function argument: its source, or a string expression. */
export type Fn = { src: string; isFunction: boolean };

export const fail = (msg: string): never => {
  throw new Error(msg);
};
export const isPlain = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
export const own = <T>(table: Record<string, T>, k: string): T | undefined => (Object.hasOwn(table, k) ? table[k] : undefined);

export function parseCall(raw: unknown): Call {
  if (!isPlain(raw) || typeof raw.method !== 'string' || !Array.isArray(raw.args)) fail('invalid call');
  const c = raw as { target: unknown; method: string; args: unknown[] };
  const t = c.target;
  if (t === 'page' || t === 'keyboard' || t === 'mouse') return { target: t, method: c.method, args: c.args };
  if (isPlain(t) && Array.isArray(t.loc)) return { target: { loc: t.loc as Chain }, method: c.method, args: c.args };
  return fail('invalid call target');
}

export function stringOf(v: unknown): string | undefined {
  return typeof v === 'string' && v.length <= CALL_LIMIT ? v : undefined;
}

/** A JSON argument (`evaluate(fn, arg)`…) within the call limit (the sandbox checks it before sending, this is for calls that bypass it). */
export function jsonArg(v: unknown, name: string): unknown {
  if (v !== undefined && (JSON.stringify(v)?.length ?? 0) > CALL_LIMIT) fail(`${name}: the argument is more than ${CALL_LIMIT} characters of JSON`);
  return v;
}

export function regexOf(v: unknown): RegExp | undefined {
  if (!isPlain(v) || !Array.isArray(v.$re)) return undefined;
  const [source, flags] = v.$re as unknown[];
  if (typeof source !== 'string' || typeof flags !== 'string' || source.length > 10_000) return undefined;
  try {
    return new RegExp(source, flags);
  } catch {
    return undefined;
  }
}

export function fnOf(v: unknown): Fn | undefined {
  if (typeof v === 'string') return stringOf(v) === undefined ? undefined : { src: v, isFunction: false };
  if (isPlain(v) && stringOf(v.$fn) !== undefined) return { src: v.$fn as string, isFunction: true };
  return undefined;
}

export function sizeOf(v: unknown): { width: number; height: number } | undefined {
  if (!isPlain(v)) return undefined;
  const ok = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 10_000;
  return ok(v.width) && ok(v.height) ? { width: v.width as number, height: v.height as number } : undefined;
}

export function selectValues(v: unknown): unknown {
  const one = (x: unknown) => typeof x === 'string' || (isPlain(x) && Object.keys(x).every((k) => ['value', 'label', 'index'].includes(k)));
  return (Array.isArray(v) ? v.every(one) : one(v)) ? v : undefined;
}

/** Option values are data: a function (or anything that is not JSON) is refused. */
export function plainData(x: unknown, what: string): unknown {
  if (isPlain(x) && ('$fn' in x || '$loc' in x)) fail(`${what} must be plain data`);
  return x;
}

/** `evaluate(fn, arg)` as one expression for the page; a string stays an expression (Playwright's rule). */
export function callExpression(f: Fn, arg: unknown): string {
  return f.isFunction ? `(${f.src})(${arg === undefined ? 'undefined' : JSON.stringify(arg)})` : f.src;
}

/** What a Playwright call returned, as plain data for the sandbox (page values arrive already bounded, as `{$json}`). */
export function toWire(v: unknown): unknown {
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

/** The message user code sees: ours as it is, Playwright's with its call log and stack cut. */
export function errorText(e: unknown): string {
  const own = e instanceof WdsError || e instanceof TooLarge || e instanceof PageError;
  return (own ? e.message : playwrightMessage(e)).slice(0, 2_000);
}

export function callName(c: Call): string {
  if (typeof c.target !== 'string') return `locator.${c.method}`;
  return c.target === 'page' ? `page.${c.method}` : `page.${c.target}.${c.method}`;
}
