/**
 * One render: a fresh context and page on a pooled browser, the request policy, navigation,
 * automatic settle, `waitFor`, actions and capture. Lifecycle (slots, browsers, crashes) is the
 * pool's business; this module only sees a `RenderJob` that can be failed from outside.
 *
 * The steps live in their own modules: `open-page.ts` (context setup), `settle.ts`, `actions.ts`,
 * `capture.ts`; `page-watch.ts` follows the page's traffic for all of them.
 */
import type { Page, Response } from 'playwright-core';
import { WdsError } from '@wds/errors';
import { runActions, type ActionHost } from './actions';
import { screenshot, capture } from './capture';
import { BrowserCodes, blockError, browserCrashedError, isClosedError, playwrightMessage, renderTimeoutError } from './errors';
import { checkAddress, type Resolve } from './network';
import { parseTarget } from './target';
import { openPage, type OpenPage, type RenderDeps } from './open-page';
import type { PageWatch } from './page-watch';
import { bounded, GRACE_MS } from './deadline';
import { RenderJob } from './render-job';
import { READY_STATE, settle } from './settle';
import type { ActionsResult, RenderRequest, RenderResult, RenderTimings } from './types';

export { RenderJob } from './render-job';
export { parseTarget } from './target';
export type { RenderDeps } from './open-page';


export function validateRequest(req: RenderRequest): URL {
  return parseTarget(req.url);
}

/** SSRF preflight of the top-level URL, before a browser slot is spent on it. */
export async function preflight(url: URL, req: RenderRequest, resolve: Resolve, isForbidden: (ip: string) => boolean): Promise<void> {
  if (req.allowPrivateNetwork) return;
  const v = await checkAddress(url, resolve, isForbidden);
  if (!v.ok) throw blockError(v);
}

export async function runRender(job: RenderJob, req: RenderRequest, url: URL, deps: RenderDeps, timings: RenderTimings): Promise<RenderResult> {
  job.phase = 'context setup';
  try {
    // The job fails from outside (deadline, abort, crash) while a step may still be waiting.
    return await Promise.race([renderSteps(job, req, url, deps, timings), job.failed]);
  } catch (e) {
    // Failed from outside after the page was handed over: the caller never gets it.
    void job.kept?.close();
    throw await renderFailure(e, job, req, deps);
  } finally {
    endRender(job, deps);
  }
}

/** The render, step by step; each step names the phase a timeout reports and records its time. */
async function renderSteps(job: RenderJob, req: RenderRequest, url: URL, deps: RenderDeps, timings: RenderTimings): Promise<RenderResult> {
  const step = <T>(phase: string, timing: keyof RenderTimings, run: () => Promise<T>) => timed(job, timings, phase, timing, run);
  const s = await step('context setup', 'contextMs', () => openPage(job, req, url, deps));
  const navResponse = await step('navigation', 'navigationMs', () => navigate(job, s.page, url, s.watch));
  s.watch.checkMainFrame();
  const navigated = performance.now();
  // `waitFor` counts from navigation, as a user reads it (and as a bare goto + wait does), and the
  // settle overlaps it: the quiet it waits for is measured page-side, so one probe after the wait
  // sees whether the page has been quiet long enough, and the page is captured as soon as both
  // hold. Polling the settle during the wait would only cost CPU.
  await step('waitFor', 'waitForMs', async () => {
    if (req.waitFor > 0) await job.sleep(Math.min(req.waitFor, job.remaining() + GRACE_MS));
  });
  // A static document (no scripts, nothing in flight) is final: with nothing to run after the
  // settle, its HTML comes back with the settle's probe.
  const wantStaticHtml = !req.actions?.length && !(req.waitFor > 0);
  const staticHtml = await step('settle', 'settleMs', () =>
    settle(s.page, job, s.watch.activity, deps, { afterLoad: true, wantStaticHtml, since: navigated }),
  );
  let actions: ActionsResult | undefined;
  if (req.actions) {
    const list = req.actions;
    actions = await step('actions', 'actionsMs', () => runActions(actionHost(job, s, deps), list));
  }
  const result = await step('capture', 'captureMs', () => capture(job, req, s, { navResponse, staticHtml }, actions, timings));
  if (req.keepPage) result.page = job.kept = deps.keep(s);
  return result;
}

async function timed<T>(job: RenderJob, timings: RenderTimings, phase: string, timing: keyof RenderTimings, run: () => Promise<T>): Promise<T> {
  job.phase = phase;
  const t0 = performance.now();
  const result = await run();
  timings[timing] = performance.now() - t0;
  return result;
}

/**
 * `goto` until `load`. A hanging subresource must not cost the whole render: a reserve of the
 * budget is kept, and if `load` has not come by then the render goes on with the parsed document.
 */
async function navigate(job: RenderJob, page: Page, url: URL, watch: PageWatch): Promise<Response | null> {
  const reserve = Math.min(2000, job.remaining() * 0.2);
  try {
    return await page.goto(url.href, { waitUntil: 'load', timeout: Math.max(1, job.remaining() - reserve) });
  } catch (e) {
    const failure = watch.navigationFailure(e, url);
    if (failure) throw failure;
    await untilParsed(job, page, watch);
    return null;
  }
}

/** `load` did not come: waits (up to the deadline) for at least a parsed document. */
async function untilParsed(job: RenderJob, page: Page, watch: PageWatch): Promise<void> {
  for (;;) {
    const ready = page.url() === 'about:blank' || !watch.mainResponse ? 'loading' : await page.evaluate(READY_STATE).catch(() => 'loading');
    if (ready !== 'loading') return;
    await job.sleep(100);
    if (job.failure !== undefined) throw job.failure;
  }
}

/** What the actions see of the render: its page, deadline, settle and main-frame check. */
function actionHost(job: RenderJob, { page, watch }: OpenPage, deps: RenderDeps): ActionHost {
  return {
    page,
    remaining: () => job.remaining(),
    settle: async () => void (await settle(page, job, watch.activity, deps, { afterLoad: false })),
    checkMainFrame: () => watch.checkMainFrame(),
    screenshot: (o) => screenshot(page, job, o),
    sleep: (ms) => job.sleep(ms),
    onAction: (i, type) => {
      job.phase = `action ${i} (${type})`;
    },
  };
}

/**
 * The error a failed render reports: the job's own failure (deadline, abort, crash) first; then
 * what the step raised, unless the deadline or the browser's death explains it better.
 */
async function renderFailure(e: unknown, job: RenderJob, req: RenderRequest, deps: RenderDeps): Promise<unknown> {
  if (job.failure !== undefined) return job.failure;
  if (e instanceof WdsError && e.code !== BrowserCodes.ACTION_ERROR) return e;
  if (job.remaining() <= 5) return renderTimeoutError(req.timeoutMs, job.phase);
  if (deps.browserDead() || isClosedError(e)) {
    // The crash may be reported a moment after the failed call: give the pool that moment.
    await job.sleep(150);
    if (job.failure !== undefined) return job.failure;
    if (deps.browserDead() || !deps.browser.isConnected()) return browserCrashedError('the browser disconnected during the render', e);
  }
  if (e instanceof WdsError) return e;
  return new WdsError('BAD_GATEWAY', {
    code: BrowserCodes.NAVIGATION_FAILED,
    retryable: true,
    message: `Browser render failed during ${job.phase}: ${playwrightMessage(e).slice(0, 300)}`,
    cause: e,
  });
}

/**
 * The render is over: its context is closed in the background (the result does not wait for the
 * renderer's teardown), unless its page was handed over (`keepPage`).
 */
function endRender(job: RenderJob, deps: RenderDeps): void {
  job.done = true;
  const ctx = job.context;
  if (ctx && !job.kept && !deps.browserDead()) job.closed = bounded(ctx.close(), deps.contextTimeoutMs, deps.onHung).catch(() => {});
}
