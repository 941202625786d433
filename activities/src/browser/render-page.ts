import { mayStoreInCache, withLlmInputs, type ScrapeOptions } from '@wds/contracts';
import { loadScrapeJob, storeCachedPage, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { RenderRequest, RenderResult, ScreenshotOptions } from '@wds/browser';
import { buildDocumentAsync, type BuiltScrapeDocument, type PageContent } from '@wds/documents';
import { scrapeCacheKey } from '@wds/fetch';
import type { FileStore } from '@wds/storage';
import type { RenderPageInput, RenderPageResult } from '@wds/workflows/scrape';
import { finishScrapePage } from '../scrape/finish';
import { hideUrlFromLogs } from '../log-privacy';
import { scrapeOnePage, type PageDeps } from '../scrape/pipeline';
import { storeActionResults, storeScreenshot, type DocumentActions } from './files';
import { mayKeepPage, type PageKeeper } from '../interact/park';
import { openProfile, type ProfileSession } from './profile';

/** What a browser worker's activities need; the pool is created once per process by the worker. */
export interface BrowserActivityDeps extends PageDeps {
  renderer: { render(req: RenderRequest): Promise<RenderResult> };
  files: FileStore;
  /** Interact: the worker keeps each scrape's rendered page for a first interaction (../interact/park.ts). */
  interact?: PageKeeper;
}

export type BrowserDocument = BuiltScrapeDocument & { screenshot?: string; actions?: DocumentActions };

/**
 * The render a scrape's stored request asks for (the page, its emulation and actions): the scrape
 * itself and an interact session's replay of it. The caller adds what it captures.
 */
export function scrapeRenderRequest(
  o: ScrapeOptions & { url: string },
  r: { timeoutMs: number; allowPrivateNetwork: boolean; storageState?: unknown; signal?: AbortSignal },
): RenderRequest {
  return {
    url: o.url,
    headers: o.headers,
    timeoutMs: r.timeoutMs,
    waitFor: o.waitFor,
    mobile: o.mobile,
    location: o.location,
    blockAds: o.blockAds,
    skipTlsVerification: o.skipTlsVerification,
    allowPrivateNetwork: r.allowPrivateNetwork,
    actions: o.actions,
    storageState: r.storageState,
    signal: r.signal,
  };
}

/** The `screenshot` format's options, if requested (spec: string or object form). */
function screenshotOptions(o: ScrapeOptions): ScreenshotOptions | undefined {
  const f = o.formats.find((x) => x.type === 'screenshot') as { fullPage?: boolean; quality?: number; viewport?: { width: number; height: number } } | undefined;
  return f ? { fullPage: f.fullPage ?? false, quality: f.quality, viewport: f.viewport } : undefined;
}

/**
 * The rendered DOM as a page for format building: the HTML comes from page.content() (a JS
 * string), so it is UTF-8 whatever the original charset; the MIME type is kept when it is HTML.
 */
export function renderedPage(url: string, r: RenderResult): PageContent {
  const mime = /html|xml/.test(r.contentType) ? r.contentType : 'text/html';
  return { requestedUrl: url, finalUrl: r.finalUrl, statusCode: r.statusCode || 200, contentTypeHeader: `${mime}; charset=utf-8`, body: Buffer.from(r.html, 'utf8'), charset: 'utf-8' };
}

/**
 * One scrape job rendered by the browser: profile lease → render (actions, screenshot) →
 * files stored → formats from the final DOM → cache → profile write-back → job completed.
 */
export async function renderScrapeJob(deps: BrowserActivityDeps, input: RenderPageInput, signal?: AbortSignal): Promise<RenderPageResult> {
  const { jobId } = input;
  const job = await loadScrapeJob(deps.db, jobId);
  if (!job) throw new WdsError('NOT_FOUND', { message: `Scrape job ${jobId} not found` });
  if (job.status === 'completed') {
    // A retry after the write succeeded but the completion was lost: nothing to redo.
    return { jobId, statusCode: (job.document as BrowserDocument).metadata.statusCode };
  }
  const o = job.options as ScrapeOptions & { url: string };
  const budgetMs = input.deadlineMs - Date.now();
  if (budgetMs < 250) {
    throw new WdsError('REQUEST_TIMEOUT', { code: 'SCRAPE_TIMEOUT', retryable: false, message: `Request Timeout: no time was left of the ${o.timeout} ms timeout to render the page` });
  }

  const shown = hideUrlFromLogs(o);
  let profile: ProfileSession | undefined;
  let saved = false;
  let kept: RenderResult['page'];
  try {
    profile = o.profile ? await openProfile(deps.db, { teamId: job.teamId, profile: o.profile, owner: jobId, budgetMs }) : undefined;
    const screenshot = screenshotOptions(o);
    const branding = o.formats.some((f) => f.type === 'branding');
    let r: RenderResult;
    try {
      r = await deps.renderer.render({
        ...scrapeRenderRequest(o, { timeoutMs: budgetMs, allowPrivateNetwork: deps.allowPrivateNetwork, storageState: profile?.state, signal }),
        screenshot,
        captureStorageState: profile?.saving,
        branding,
        keepPage: !!deps.interact && mayKeepPage(o),
      });
    } catch (e) {
      // A URL that is a file download (a PDF…) cannot be rendered; unless the request needs the
      // page itself (actions, screenshot), the HTTP engine answers it.
      if (e instanceof WdsError && e.code === 'SCRAPE_BROWSER_DOWNLOAD' && !o.actions?.length && !screenshot && !branding) {
        return await httpFallback(deps, jobId, o, input.deadlineMs, signal);
      }
      throw e;
    }

    kept = r.page;
    const page = renderedPage(o.url, r);
    const built = await buildDocumentAsync(page, withLlmInputs(o, deps.llmAvailable), { scrapeId: jobId, engine: 'browser', cache: { state: 'miss' }, timeoutMs: Math.max(1, input.deadlineMs - Date.now()), signal, llm: deps.llmAvailable });
    const doc: BrowserDocument = built.document;
    const [shotUrl, actions] = await Promise.all([
      r.screenshot ? storeScreenshot(deps.files, jobId, r.screenshot) : undefined,
      r.actions && o.actions?.length ? storeActionResults(deps.files, jobId, r.actions) : undefined,
    ]);
    if (shotUrl) doc.screenshot = shotUrl;
    if (branding) doc.branding = r.branding ?? null;
    if (actions) doc.actions = actions;

    // A profile's page shows that profile's session: never shared through the cache.
    if (mayStoreInCache(o) && !o.profile && page.statusCode < 500) {
      await storeCachedPage(deps.db, scrapeCacheKey(o), {
        url: o.url, finalUrl: page.finalUrl, statusCode: page.statusCode, contentType: page.contentTypeHeader, charset: 'utf-8', body: page.body, engine: 'browser',
      });
    }
    if (profile?.saving) {
      await profile.save(r.storageState ?? { cookies: [], origins: [] });
      saved = true;
    }
    const finished = await finishScrapePage(deps.db, jobId, o, doc, built.creditsUsed, deps.llmAvailable);
    if (kept && deps.interact) await deps.interact.park({ scrapeId: jobId, teamId: job.teamId, page: kept, profile: o.profile });
    kept = undefined;
    return { jobId, statusCode: page.statusCode, ...finished };
  } finally {
    if (profile && !saved) await profile.release().catch(() => {});
    // A page kept for interact whose scrape did not complete is not worth keeping.
    if (kept) void kept.close();
    shown();
  }
}

async function httpFallback(deps: BrowserActivityDeps, jobId: string, o: ScrapeOptions & { url: string }, deadlineMs: number, signal?: AbortSignal): Promise<RenderPageResult> {
  const options = { ...o, waitFor: 0, timeout: Math.max(1, deadlineMs - Date.now()) };
  const page = await scrapeOnePage(deps, { url: o.url, options, scrapeId: jobId, signal });
  return { jobId, statusCode: page.statusCode, ...(await finishScrapePage(deps.db, jobId, o, page.document, page.creditsUsed, deps.llmAvailable)) };
}
