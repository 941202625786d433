/**
 * The spec's browser actions, run in order against the render's page. Every failure becomes
 * `BAD_REQUEST` / SCRAPE_ACTION_ERROR naming the action's 0-based index and type; timeouts,
 * crashes and aborts are raised by the render job around this code, not here.
 */
import { Script } from 'node:vm';
import { errors as pwErrors, type Page } from 'playwright-core';
import type { Action } from '@wds/contracts';
import { WdsError } from '@wds/errors';
import { actionError, playwrightMessage } from './errors';
import type { ActionsResult, Capture, ScreenshotOptions } from './types';

/** How long a click/scroll target may take to appear before "no element matches". */
const SELECTOR_APPEAR_MS = 3000;
/** How long a matched element may stay non-actionable (hidden, covered, disabled) before failing. */
const CLICK_TIMEOUT_MS = 10_000;
/** Per element, in `all: true` mode, before falling back to a DOM click. */
const CLICK_ALL_TIMEOUT_MS = 2000;

export interface ActionHost {
  page: Page;
  /** ms until the render's deadline. Playwright calls get a little more, so the deadline fires first. */
  remaining(): number;
  /** Automatic settle after a page-changing action. */
  settle(): Promise<void>;
  /** Throws when the main frame ended up somewhere it may not be (file:, blocked host…). */
  checkMainFrame(): void;
  screenshot(opts: ScreenshotOptions): Promise<Capture>;
  sleep(ms: number): Promise<void>;
  /** Called before each action (names the phase in timeout errors). */
  onAction?(index: number, type: string): void;
}

const GRACE_MS = 1000;

// Page-side callbacks run in the browser; the repo compiles without the DOM lib.
declare const window: { scrollY: number; innerHeight: number; scrollBy(o: { top: number; behavior: string }): void };

function budget(host: ActionHost, cap?: number): number {
  const r = Math.max(1, host.remaining());
  return cap === undefined ? r + GRACE_MS : Math.min(r + GRACE_MS, cap);
}

/**
 * JavaScript source to evaluate for an executeJavascript action. The script is taken as an
 * expression when it parses as one (`document.title`), otherwise as a function body
 * (`const n = 1; return n`); `await` works in both. Parsing is checked with V8 in Node (no code
 * runs there); the page gets the wrapped source through CDP, which page CSP does not block.
 */
export function wrapScript(script: string): string {
  const asExpression = `(async () => (${script}\n))`;
  let isExpression = true;
  try {
    new Script(asExpression);
  } catch {
    isExpression = false;
  }
  const call = isExpression ? `${asExpression}()` : `(async () => {${script}\n})()`;
  return `(async () => {
  const v = await ${call};
  const type = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
  let value;
  if (v === undefined) value = null;
  else if (typeof v === 'bigint' || typeof v === 'symbol' || typeof v === 'function') value = String(v);
  else if (typeof Node !== 'undefined' && v instanceof Node) value = v.outerHTML ?? v.textContent;
  else {
    try { value = JSON.parse(JSON.stringify(v) ?? 'null'); } catch (e) { value = String(v); }
  }
  return { type, value };
})()`;
}

async function firstMatch(host: ActionHost, selector: string, index: number, type: string) {
  const loc = host.page.locator(selector).first();
  try {
    await loc.waitFor({ state: 'attached', timeout: budget(host, SELECTOR_APPEAR_MS) });
  } catch (e) {
    if (e instanceof pwErrors.TimeoutError) throw actionError(index, type, `no element matches "${selector}"`, e);
    throw actionError(index, type, playwrightMessage(e), e);
  }
  return loc;
}

type ActionOf<T extends Action['type']> = Extract<Action, { type: T }>;

/** Runs one action; page-changing ones are followed by the automatic settle. */
async function runOne(host: ActionHost, a: Action, i: number, out: ActionsResult): Promise<void> {
  const { page } = host;
  switch (a.type) {
    case 'wait':
      if (a.selector !== undefined) await page.waitForSelector(a.selector, { state: 'visible', timeout: budget(host) });
      else await host.sleep(Math.min(a.milliseconds ?? 0, host.remaining() + GRACE_MS));
      return;
    case 'screenshot':
      host.checkMainFrame();
      out.screenshots.push(await host.screenshot({ fullPage: a.fullPage ?? false, quality: a.quality, viewport: a.viewport }));
      return;
    case 'click':
      await click(host, a, i);
      await host.settle();
      return;
    case 'write':
      await page.keyboard.type(a.text);
      return;
    case 'press':
      await page.keyboard.press(a.key);
      await host.settle();
      return;
    case 'scroll':
      await scroll(host, a, i);
      await host.settle();
      return;
    case 'scrape':
      host.checkMainFrame();
      out.scrapes.push({ url: page.url(), html: await page.content() });
      return;
    case 'executeJavascript':
      out.javascriptReturns.push(await executeJavascript(host, a));
      await host.settle();
      return;
    case 'pdf':
      host.checkMainFrame();
      out.pdfs.push(
        await page.pdf({ format: a.format ?? 'Letter', landscape: a.landscape ?? false, scale: a.scale ?? 1, printBackground: true }),
      );
      return;
    default: {
      const t = (a as { type?: unknown }).type;
      throw actionError(i, String(t), 'unknown action type');
    }
  }
}

/** `all: true` clicks every match and never fails on none; otherwise the first match must appear and be clickable. */
async function click(host: ActionHost, a: ActionOf<'click'>, i: number): Promise<void> {
  if (!a.all) {
    const loc = await firstMatch(host, a.selector, i, a.type);
    await loc.click({ timeout: budget(host, CLICK_TIMEOUT_MS) });
    return;
  }
  const loc = host.page.locator(a.selector);
  const n = await loc.count();
  for (let k = 0; k < n; k++) {
    const el = loc.nth(k);
    try {
      await el.click({ timeout: budget(host, CLICK_ALL_TIMEOUT_MS) });
    } catch {
      // Hidden, covered or gone (an earlier click re-rendered the list): best effort.
      await el.evaluate((e) => (e as unknown as { click(): void }).click(), undefined, { timeout: budget(host, CLICK_ALL_TIMEOUT_MS) }).catch(() => {});
    }
  }
}

/** One viewport (or element) height up or down. */
async function scroll(host: ActionHost, a: ActionOf<'scroll'>, i: number): Promise<void> {
  const { page } = host;
  const sign = a.direction === 'up' ? -1 : 1;
  if (a.selector !== undefined) {
    const loc = await firstMatch(host, a.selector, i, a.type);
    await loc.evaluate(
      (e, s) => e.scrollBy({ top: s * (e.clientHeight || window.innerHeight), behavior: 'instant' }),
      sign,
      { timeout: budget(host) },
    );
    return;
  }
  const moved = await page.evaluate((s) => {
    const before = window.scrollY;
    window.scrollBy({ top: s * window.innerHeight, behavior: 'instant' });
    return window.scrollY !== before;
  }, sign);
  if (!moved) {
    // The document itself does not scroll (app shells scroll an inner element): send a
    // wheel event to the middle of the viewport so whatever scrolls there does.
    const vp = page.viewportSize() ?? { width: 800, height: 600 };
    await page.mouse.move(vp.width / 2, vp.height / 2);
    await page.mouse.wheel(0, sign * vp.height);
  }
}

async function executeJavascript(host: ActionHost, a: ActionOf<'executeJavascript'>): Promise<{ type: string; value: unknown }> {
  try {
    return (await host.page.evaluate(wrapScript(a.script))) as { type: string; value: unknown };
  } catch (e) {
    // A script that navigates away destroys its own context: that is a result, not an error.
    if (/Execution context was destroyed|navigat/i.test(playwrightMessage(e))) return { type: 'undefined', value: null };
    throw e;
  }
}

export async function runActions(host: ActionHost, actions: Action[]): Promise<ActionsResult> {
  const out: ActionsResult = { screenshots: [], scrapes: [], javascriptReturns: [], pdfs: [] };
  for (let i = 0; i < actions.length; i++) {
    const a = actions[i]!;
    host.onAction?.(i, a.type);
    try {
      await runOne(host, a, i, out);
      host.checkMainFrame();
    } catch (e) {
      if (e instanceof WdsError) throw e;
      throw actionError(i, a.type, playwrightMessage(e), e);
    }
  }
  return out;
}
