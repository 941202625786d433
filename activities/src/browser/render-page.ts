import { effectiveWaitFor, mayStoreInCache, withLlmInputs, type ScrapeOptions } from '@wds/contracts';
import { loadScrapeJob, storeCachedPage } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { LivePage, RenderRequest, RenderResult, ScreenshotOptions } from '@wds/browser';
import { buildDocumentAsync, outputsVariant, type BuiltScrapeDocument, type PageContent } from '@wds/documents';
import { assertUrlAllowed, threatUrlCheck } from '@wds/fetch';
import type { FileStore } from '@wds/storage';
import type { RenderPageInput, RenderPageResult } from '@wds/workflows/scrape';
import { finishScrapePage } from '../scrape/finish';
import { hideUrlFromLogs } from '../log-privacy';
import { pageCacheKey, scrapeOnePage, type PageDeps, type PageResult } from '../scrape/pipeline';
import { mayKeepPage, type PageKeeper } from '../interact/park';
import { storeActionResults, storeScreenshot, type DocumentActions } from './files';
import { openProfile, type ProfileSession } from './profile';
import type { GatedRenderResult, Renderer } from './gated-renderer';
import type { PolitenessHints } from '@wds/fetch';

/** What a browser worker's activities need; the pool is created once per process by the worker. */
export interface BrowserActivityDeps extends PageDeps {
  /** The pool behind the politeness gate (./gated-renderer.ts). */
  renderer: Renderer;
  files: FileStore;
  /** Interact: the worker keeps each scrape's rendered page for a first interaction (../interact/park.ts). */
  interact?: PageKeeper;
}

export type BrowserDocument = BuiltScrapeDocument & { screenshot?: string; actions?: DocumentActions };

/**
 * The render a page's request asks for (the page, its emulation and actions): scrape jobs, crawl
 * pages and an interact session's replay of a scrape. The caller adds what it captures.
 */
export function scrapeRenderRequest(
  o: ScrapeOptions & { url: string },
  r: { timeoutMs: number; allowPrivateNetwork: boolean; storageState?: unknown; signal?: AbortSignal },
): RenderRequest {
  return {
    url: o.url,
    headers: o.headers,
    timeoutMs: r.timeoutMs,
    waitFor: effectiveWaitFor(o),
    mobile: o.mobile,
    location: o.location,
    blockAds: o.blockAds,
    skipTlsVerification: o.skipTlsVerification,
    allowPrivateNetwork: r.allowPrivateNetwork,
    actions: o.actions,
    storageState: r.storageState,
    signal: r.signal,
    // Threat protection on each main-frame navigation, redirect hops included (the final URL is checked again after the render).
    checkUrl: threatUrlCheck(o.threatProtection),
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

/** One page for the browser engine: what a scrape job or a crawl page asks of it. */
export interface BrowserPageRequest {
  url: string;
  options: ScrapeOptions;
  /** The page's scrape id: its document's metadata.scrapeId and the folder of its files. */
  scrapeId: string;
  /** Epoch ms the page must be done by (retries share it). */
  deadlineMs: number;
  signal?: AbortSignal;
  /** Crawls: the page's links, for discovery, even when `links` is not a requested format. */
  collectLinks?: boolean;
  /** A profile's browser state to load, and whether to return the state at the end (a saving session). */
  storageState?: unknown;
  captureStorageState?: boolean;
  /** Keep the rendered page open (interact): `live` is then the caller's to park or close. */
  keepPage?: boolean;
  /** What the render adds to its origin's politeness budget (a crawl's robots.txt Crawl-delay). */
  politeness?: PolitenessHints;
}

export interface BrowserPageResult {
  page: PageResult;
  /** False when the URL was a download and the HTTP engine answered instead (no browser state then). */
  rendered: boolean;
  storageState?: unknown;
  /** The page, still open (`keepPage`). */
  live?: LivePage;
}

/**
 * One page by the browser engine, as scrape jobs and crawl pages share it: render (actions,
 * screenshot, profile state) → files stored as signed links → formats from the final DOM →
 * cache. A URL that is a file download (a PDF…) cannot be rendered: unless the request needs the
 * page itself (actions, screenshot, branding), the HTTP engine answers it.
 */
export async function renderBrowserPage(deps: BrowserActivityDeps, req: BrowserPageRequest): Promise<BrowserPageResult> {
  const o = req.options;
  assertUrlAllowed(req.url, o.threatProtection);
  const screenshot = screenshotOptions(o);
  const branding = o.formats.some((f) => f.type === 'branding');
  let r: GatedRenderResult;
  try {
    r = await deps.renderer.render({
      politeness: req.politeness,
      ...scrapeRenderRequest({ ...o, url: req.url }, { timeoutMs: Math.max(1, req.deadlineMs - Date.now()), allowPrivateNetwork: deps.allowPrivateNetwork, storageState: req.storageState, signal: req.signal }),
      screenshot,
      captureStorageState: req.captureStorageState,
      branding,
      keepPage: req.keepPage,
    });
  } catch (e) {
    if (e instanceof WdsError && e.code === 'SCRAPE_BROWSER_DOWNLOAD' && !o.actions?.length && !screenshot && !branding) {
      const options = { ...o, waitFor: 0, timeout: Math.max(1, req.deadlineMs - Date.now()) };
      return { page: await scrapeOnePage(deps, { url: req.url, options, scrapeId: req.scrapeId, signal: req.signal, collectLinks: req.collectLinks }), rendered: false };
    }
    throw e;
  }

  try {
    return { ...(await pageFromRender(deps, req, r, branding)), live: r.page };
  } catch (e) {
    void r.page?.close();
    throw e;
  }
}

/** The rendered DOM → formats, files as signed links, the cache entry. */
async function pageFromRender(deps: BrowserActivityDeps, req: BrowserPageRequest, r: GatedRenderResult, branding: boolean): Promise<BrowserPageResult> {
  const o = req.options;
  // Threat protection: where the browser ended up after redirects is checked again; nothing of a blocked page is returned.
  assertUrlAllowed(r.finalUrl, o.threatProtection);
  const page = renderedPage(req.url, r);
  const built = await buildDocumentAsync(page, withLlmInputs(o, deps.llmAvailable), {
    scrapeId: req.scrapeId,
    engine: 'browser',
    cache: { state: 'miss' },
    collectLinks: req.collectLinks,
    timeoutMs: Math.max(1, req.deadlineMs - Date.now()),
    signal: req.signal,
    llm: deps.llmAvailable,
  });
  const doc: BrowserDocument = built.document;
  if (r.politenessWaitMs) doc.metadata.politenessWaitMs = r.politenessWaitMs;
  const [shotUrl, actions] = await Promise.all([
    r.screenshot ? storeScreenshot(deps.files, req.scrapeId, r.screenshot) : undefined,
    r.actions && o.actions?.length ? storeActionResults(deps.files, req.scrapeId, r.actions) : undefined,
  ]);
  if (shotUrl) doc.screenshot = shotUrl;
  if (branding) doc.branding = r.branding ?? null;
  if (actions) doc.actions = actions;

  // A profile's page shows that profile's session: never shared through the cache.
  if (mayStoreInCache(o) && !o.profile && page.statusCode < 500 && page.statusCode !== 429) {
    await storeCachedPage(deps.db, pageCacheKey(o, req.url), {
      url: req.url, finalUrl: page.finalUrl, statusCode: page.statusCode, contentType: page.contentTypeHeader, charset: 'utf-8', body: page.body, engine: 'browser',
      outputs: built.outputs && { variant: outputsVariant(withLlmInputs(o, deps.llmAvailable)), formats: built.outputs },
    });
  }
  return { page: { ...built, document: doc, statusCode: page.statusCode }, rendered: true, storageState: r.storageState };
}

/**
 * One scrape job rendered by the browser: profile lease → the page (renderBrowserPage) →
 * profile write-back → job completed.
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
  let kept: LivePage | undefined;
  try {
    profile = o.profile ? await openProfile(deps.db, { teamId: job.teamId, profile: o.profile, owner: jobId, budgetMs }) : undefined;
    const keepPage = !!deps.interact && mayKeepPage(o);
    const r = await renderBrowserPage(deps, { url: o.url, options: o, scrapeId: jobId, deadlineMs: input.deadlineMs, signal, storageState: profile?.state, captureStorageState: profile?.saving, keepPage });
    kept = r.live;
    if (profile?.saving && r.rendered) {
      await profile.save(r.storageState ?? { cookies: [], origins: [] });
      saved = true;
    }
    const finished = await finishScrapePage(deps.db, jobId, o, r.page.document, r.page.creditsUsed, deps.llmAvailable, r.page.fetched);
    if (kept && deps.interact) await deps.interact.park({ scrapeId: jobId, teamId: job.teamId, page: kept, profile: o.profile });
    kept = undefined;
    return { jobId, statusCode: r.page.statusCode, ...finished };
  } finally {
    if (profile && !saved) await profile.release().catch(() => {});
    // A page kept for interact whose scrape did not complete is not worth keeping.
    if (kept) void kept.close();
    shown();
  }
}
