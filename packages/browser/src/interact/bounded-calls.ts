/**
 * The bridged calls that bring a page value back to Node, made so that the page bounds the value
 * before it crosses (page-values.ts): evaluations, element reads, `title`, `content`, and
 * screenshots (area checked before Chromium captures, bytes after). Playwright's own
 * `textContent`, `innerHTML`, `content`… would hand over the whole string first; these answer
 * the same values from page functions instead.
 */
import { randomUUID } from 'node:crypto';
import type { CDPSession, Locator, Page, PageScreenshotOptions } from 'playwright-core';
import { playwrightMessage } from '../errors';
import {
  boundedExpression,
  boundedPredicate,
  CONTENT,
  ELEMENT_READS,
  jsonValue,
  pageFailure,
  SHOT_BYTE_LIMIT,
  shotFits,
  tooLargeBytes,
  tooLargeShot,
  type ShotArea,
} from './page-values';

/** Page-side helpers (real functions of this module, never user code): hold an element under a random global name. */
const KEEP = (el: unknown, k: string) => void Object.defineProperty(globalThis, k, { value: el, configurable: true });
const DROP = (k: string) => void delete (globalThis as Record<string, unknown>)[k];

/** `call` (a page expression) evaluated in the page; its value as `{$json}` for the sandbox, or undefined. */
export async function evaluateBounded(page: Page, call: string): Promise<unknown> {
  try {
    return jsonValue(await page.evaluate(boundedExpression(call)));
  } catch (e) {
    throw pageFailure(playwrightMessage(e)) ?? e;
  }
}

/** `waitForFunction` on `call`; its truthy value as `{$json}`. */
export async function waitForBounded(page: Page, call: string, options: object | undefined): Promise<unknown> {
  try {
    return await (await page.waitForFunction(boundedPredicate(call), undefined, options)).jsonValue();
  } catch (e) {
    throw pageFailure(playwrightMessage(e)) ?? e;
  }
}

/** Puts the element(s) a call resolves to under `key` in the page (KEEP is the page function to pass). */
export type Hold = (keep: typeof KEEP, key: string) => Promise<unknown>;

/** Runs `(${fn})(element(s), arg)` in the page on what `hold` put aside, bounded; then lets go of it. */
export async function onHeld(page: Page, hold: Hold, fn: string, arg: unknown): Promise<unknown> {
  const key = `__wds_el_${randomUUID().replaceAll('-', '')}`;
  await hold(KEEP, key);
  try {
    return await evaluateBounded(page, `(${fn})(globalThis[${JSON.stringify(key)}], ${arg === undefined ? 'undefined' : JSON.stringify(arg)})`);
  } finally {
    await page.evaluate(DROP, key).catch(() => {});
  }
}

/** Whether `method` is an element read answered by a page function here. */
export function isElementRead(method: string): boolean {
  return Object.hasOwn(ELEMENT_READS, method);
}

/**
 * An element read (`textContent`, `innerHTML`, `getAttribute`, `allTextContents`…) on `loc`: one
 * element waits like Playwright's locator calls (strict, up to `timeout`), the `all…` ones take
 * every match at once.
 */
export function readElement(page: Page, loc: Locator, method: string, arg: unknown, timeout?: number): Promise<unknown> {
  const hold: Hold = method.startsWith('all') ? (keep, k) => loc.evaluateAll(keep, k) : (keep, k) => loc.evaluate(keep, k, { timeout });
  return onHeld(page, hold, ELEMENT_READS[method]!, arg);
}

/** `page.title()` and `page.content()`, bounded. */
export function readDocument(page: Page, what: 'title' | 'content'): Promise<unknown> {
  return evaluateBounded(page, what === 'title' ? 'document.title' : CONTENT);
}

type ShotOptions = Pick<PageScreenshotOptions, 'fullPage' | 'clip' | 'scale'>;

/** A screenshot of the page or of an element, refused before the capture when its area is too large and after it when its bytes are. */
export async function boundedScreenshot(live: ShotSource, target: Page | Locator, opts: PageScreenshotOptions): Promise<Buffer> {
  const page = live.page;
  const area = await shotArea(live, target, opts);
  const what = target === page ? 'page.screenshot' : 'locator.screenshot';
  if (area && !shotFits(area)) throw tooLargeShot(what, area);
  const bytes = await target.screenshot(opts);
  if (bytes.length > SHOT_BYTE_LIMIT) throw tooLargeBytes(bytes.length);
  return bytes;
}

/** What a bounded screenshot needs of the live page. */
export interface ShotSource {
  page: Page;
  deviceScale: number;
  cdp(): Promise<CDPSession>;
}

/** The CSS area a screenshot will cover and its scale; sizes come from the browser (layout metrics, box model), which the page cannot misreport. */
async function shotArea(live: ShotSource, target: Page | Locator, opts: ShotOptions): Promise<ShotArea | undefined> {
  const page = live.page;
  const scale = opts.scale === 'css' ? 1 : live.deviceScale;
  if (target !== page) {
    const box = await (target as Locator).boundingBox({ timeout: 1_000 }).catch(() => null);
    return box ? { width: box.width, height: box.height, scale } : undefined;
  }
  if (opts.clip) return { width: opts.clip.width, height: opts.clip.height, scale };
  if (opts.fullPage) {
    const m = (await (await live.cdp()).send('Page.getLayoutMetrics')) as { cssContentSize: { width: number; height: number } };
    return { width: m.cssContentSize.width, height: m.cssContentSize.height, scale };
  }
  const v = page.viewportSize();
  return v ? { ...v, scale } : undefined;
}
