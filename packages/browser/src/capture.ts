/**
 * The last step of a render: the main frame's document as it is now (HTML, response headers,
 * storage state, screenshot) becomes the result. Screenshots are also taken by actions.
 */
import type { Page, Response } from 'playwright-core';
import { captureBranding } from './branding';
import type { OpenPage } from './open-page';
import { GRACE_MS } from './deadline';
import type { RenderJob } from './render-job';
import type { ActionsResult, Capture, RenderRequest, RenderResult, RenderTimings, ScreenshotOptions } from './types';

/** What navigation and settle left for the capture. */
export interface Loaded {
  /** goto's response (null when `load` did not come in time). */
  navResponse: Response | null;
  /** The HTML of a static document, already read by the settle's probe. */
  staticHtml?: string;
}

export async function capture(
  job: RenderJob,
  req: RenderRequest,
  { page, context, watch }: OpenPage,
  loaded: Loaded,
  actions: ActionsResult | undefined,
  timings: RenderTimings,
): Promise<RenderResult> {
  watch.checkMainFrame();
  const resp: Response | null = watch.mainResponse ?? loaded.navResponse;
  const [html, headers, storageState] = await Promise.all([
    loaded.staticHtml ?? page.content(),
    resp ? responseHeaders(job, resp) : ({} as Record<string, string>),
    req.captureStorageState ? context.storageState() : undefined,
  ]);
  // After the HTML is read: the branding script inserts (and removes) probe elements.
  const branding = req.branding ? await captureBranding(page, job.remaining()) : undefined;
  const shot = req.screenshot ? await screenshot(page, job, req.screenshot) : undefined;
  const contentType = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const result: RenderResult = {
    finalUrl: page.url(),
    statusCode: resp?.status() ?? 0,
    headers,
    contentType,
    html,
    blocked: watch.blocked(),
    timings,
  };
  if (shot) result.screenshot = shot;
  if (branding) result.branding = branding;
  if (actions) result.actions = actions;
  if (storageState !== undefined) result.storageState = storageState;
  return result;
}

/** All response headers (cookies included); the provisional ones if the browser takes over a second for them. */
function responseHeaders(job: RenderJob, resp: Response): Promise<Record<string, string>> {
  return Promise.race([resp.allHeaders(), job.sleep(1000).then(() => resp.headers())]).catch(() => resp.headers());
}

export async function screenshot(page: Page, job: RenderJob, o: ScreenshotOptions): Promise<Capture> {
  if (o.viewport) await page.setViewportSize({ width: o.viewport.width, height: o.viewport.height });
  const jpeg = o.quality !== undefined;
  const bytes = await page.screenshot({
    fullPage: o.fullPage,
    type: jpeg ? 'jpeg' : 'png',
    ...(jpeg ? { quality: o.quality } : {}),
    timeout: job.remaining() + GRACE_MS,
  });
  return { bytes, mime: jpeg ? 'image/jpeg' : 'image/png' };
}
