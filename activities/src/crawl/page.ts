import { changeTrackingOf, needsLlm } from '@wds/contracts';
import { deferPage, failPage, finishPage, finishPageCountingLinks, handToBrowser, storeCacheEntry, type ClaimedUrl, type Db, type FrontierEntry } from '@wds/db';
import type { PolitenessHints } from '@wds/fetch';
import { threatVerdict } from '@wds/fetch';
import { crawlPageStored } from '@wds/metrics';
import type { PageContent } from '@wds/documents';
import { createScope, type CrawlScope, type RobotsRules } from '@wds/crawl';
import { planEngine } from '@wds/workflows/scrape';
import type { BatchRun, PageHandler, PageOutcome } from '../frontier/batch-runner';
import { withInlineRetries } from '../frontier/page-retries';
import type { BrowserAvailability } from '../browser/availability';
import { pageRendering, type PageRendering } from '../browser/escalation';
import { scrapeOrEscalate, type PageDeps, type PageResult } from '../scrape/pipeline';
import { trackCrawlPage } from '../changes/track-document';
import { webhookFor } from '../webhooks/emit';
import type { createRobotsCache } from './discovery';
import type { LoadedJob } from './job-options';
import type { OriginEngines } from './origin-engines';
import { hideUrlsFromLogs } from '../log-privacy';
import { jobPageWriter, type PageWriter } from './page-writer';
import { cacheHints } from './cache-hints';
import { duplicateOf } from './duplicates';

export interface CrawlPageDeps extends PageDeps {
  /** Whether a worker serves wds-browser (absent: never; pages that need the browser then fail, as single scrapes answer 503). */
  browserAvailable?: BrowserAvailability;
}

const scopes = new Map<string, CrawlScope>();
function scopeOf(job: LoadedJob): CrawlScope | null {
  if (job.kind !== 'crawl' || !job.crawl || !job.url) return null;
  let s = scopes.get(job.id);
  if (!s) {
    if (scopes.size > 500) scopes.delete(scopes.keys().next().value!);
    s = createScope(job.url, job.crawl);
    scopes.set(job.id, s);
  }
  return s;
}

/** Whether a page's links are followed (crawls, not sitemap-only; external pages are leaves). */
export const followsLinks = (job: LoadedJob, u: ClaimedUrl) => !!scopeOf(job) && job.crawl?.sitemap !== 'only' && !u.external;

/** What a fetch worker keeps across a job's batches: robots.txt rules and what its origins' pages need (per job and origin). */
export interface CrawlMemory {
  robotsFor: ReturnType<typeof createRobotsCache>;
  origins: OriginEngines;
}

/**
 * The fetch-side page handler of crawls and batch scrapes: robots check, the engine choice of a
 * single scrape (workflows/src/scrape/engine.ts) per page, then either the HTTP engine — cache
 * allowed — storing the page, or a hand-over to the browser engine: up front when the options
 * need the browser (actions, screenshot, branding, mobile, profile; waitFor while a browser worker
 * is there), or after the fetch when the HTML looks script-rendered. Once the job has seen enough
 * script-rendered pages of an origin and no static one (./origin-engines.ts), that origin's pages
 * skip the fetch: a cache miss goes to the browser at once. A handed-over page is rendered by the
 * job's browser window on wds-browser (./browser-page.ts).
 */
export function crawlPageHandler(deps: CrawlPageDeps, { robotsFor, origins }: CrawlMemory, job: LoadedJob): PageHandler {
  const writer = jobPageWriter(deps.db, job.id, webhookFor(job, 'page'));
  const hints = cacheHints(deps.db, job.scrape);
  const handle: PageHandler = async (u, run) => {
    const robots = await robotsOf(job, u, robotsFor, run.signal);
    if (robots && !robots.isAllowed(u.url)) {
      await failPage(deps.db, job.id, u.key, 'robots', 'URL blocked by robots.txt');
      return 'skipped';
    }
    const politeness = crawlDelayHint(robots);
    const plan = planEngine(job.scrape, (await deps.browserAvailable?.()) ?? false);
    if (plan.engine === 'unavailable') {
      const message = `Service Unavailable: this page needs the browser engine (${plan.reasons.join(', ')}), and no worker serves the wds-browser queue. Start a worker with WDS_WORKER_QUEUES including wds-browser.`;
      await failPage(deps.db, job.id, u.key, 'failed', message);
      return 'failed';
    }
    if (plan.engine === 'browser') return (await handToBrowser(deps.db, job.id, u.key)) ? 'browser' : 'skipped';
    const origin = plan.escalateIfClientRendered ? new URL(u.url).origin : null;
    const browserOnMiss = !!origin && (await origins.browserFirst(job.id, origin));
    return withInlineRetries(deps.db, job.id, u, run, async () => {
      let seen: PageRendering | undefined;
      const escalate = origin ? async (p: PageContent, ms: number) => (seen = await pageRendering(p, ms)) === 'script' : undefined;
      const cacheKnownMiss = (await hints?.knownMiss(u)) ?? false;
      const page = await scrapeOrEscalate(
        deps,
        { url: u.url, options: job.scrape, scrapeId: u.pageId, signal: run.signal, useCache: true, cacheKnownMiss, collectLinks: followsLinks(job, u), sleep: run.sleep, browserOnMiss, deferCacheWrite: true, politeness, onBackoff: mayDefer(u) ? 'defer' : undefined },
        escalate,
      );
      if ('backedOff' in page) return deferForBackoff(deps.db, job.id, u, page);
      if (origin && seen) await origins.learn(job.id, origin, seen);
      if ('needsBrowser' in page) return (await handToBrowser(deps.db, job.id, u.key)) ? 'browser' : 'skipped';
      return storeCrawlPage(deps, job, u, page, { writer });
    });
  };
  return Object.assign(keepingUrlsPrivate(job, handle), { claimed: hints?.claimed });
}

/** Zero data retention: a page's URL stays out of log lines and stored failures while its handler runs (fetch and browser pages). */
export function keepingUrlsPrivate(job: LoadedJob, handle: PageHandler): PageHandler {
  if (!job.scrape.zeroDataRetention) return handle;
  return async (u, run) => {
    const shown = hideUrlsFromLogs([u.url]);
    try {
      return await handle(u, run);
    } finally {
      shown();
    }
  };
}

/** The robots.txt rules a crawl page obeys; null for batch pages and crawls that ignore robots. */
export async function robotsOf(job: LoadedJob, u: ClaimedUrl, robotsFor: ReturnType<typeof createRobotsCache>, signal: AbortSignal): Promise<RobotsRules | null> {
  const c = job.crawl;
  if (!c || c.ignoreRobotsTxt) return null;
  return robotsFor(job.id, new URL(u.url).origin, c.robotsUserAgent, signal);
}

/** robots.txt Crawl-delay raises the origin's interval for the pages of a crawl that respects robots. */
export const crawlDelayHint = (robots: RobotsRules | null): PolitenessHints | undefined => (robots?.crawlDelay ? { minIntervalMs: robots.crawlDelay * 1000 } : undefined);

/**
 * Claims after which a page whose site still answers 429/503 is stored with that answer instead
 * of waiting again: a site that never lets up must not keep a crawl running for ever. Seven
 * windows of the default backoff (1 s doubling per step, ±50%) are about three minutes at most;
 * Retry-After can make each up to WDS_ORIGIN_BACKOFF_MAX_MS.
 */
const MAX_BACKOFF_CLAIMS = 8;
export const mayDefer = (u: ClaimedUrl) => u.attempts < MAX_BACKOFF_CLAIMS;

/** A page whose site answered 429/503 and backs off: given back to the frontier until the backoff ends, not failed. */
export async function deferForBackoff(db: Db, jobId: string, u: ClaimedUrl, page: { statusCode: number; retryAtMs: number }): Promise<PageOutcome> {
  const why = page.statusCode === 429 ? '429 Too Many Requests' : `${page.statusCode} Service Unavailable`;
  await deferPage(db, jobId, u.key, page.retryAtMs - Date.now(), `${new URL(u.url).origin} answered ${why}; the page waits for its backoff`);
  return 'skipped';
}

/**
 * Stores a scraped or rendered page: the document, its credits, its page event (with its webhook
 * delivery) and the links in scope go in one statement, idempotent per (job, URL key), so a
 * retried batch never stores a page twice. When the scrape options ask for model-made formats,
 * the document is stored as pending LLM work instead (no credits, no event yet): an LLM batch on
 * wds-llm completes it (../llm/crawl-pages.ts), so no model call ever runs here. With
 * `run` (browser pages) the URLs new to the frontier are reported to the batch; fetched pages
 * go through their job's `writer` (./page-writer.ts), which stores them in groups, with the page
 * cache row the fetch left to it (`cacheEntry`: written here on the other paths).
 */
export async function storeCrawlPage(deps: PageDeps, job: LoadedJob, u: ClaimedUrl, page: PageResult, via: { run: BatchRun } | { writer: PageWriter }): Promise<PageOutcome> {
  // A crawl page repeating a stored one (its text, or the canonical URL it names) ends here: not
  // stored, not billed, its links not followed (./duplicates.ts).
  if (!u.discoveryOnly && (await duplicateOf(deps.db, job, u.key, page))) {
    if (page.cacheEntry) await storeCacheEntry(deps.db, page.cacheEntry);
    return 'skipped';
  }
  const scope = scopeOf(job);
  const links: FrontierEntry[] = [];
  if (scope) {
    // The canonical URL a page names is one more link (a page reached under many URLs is then stored under its own).
    for (const l of page.canonical ? [...(page.links ?? []), page.canonical] : (page.links ?? [])) {
      const a = scope.admit(l, { depth: u.depth, external: u.external });
      // Threat protection: blocked links found mid-crawl are skipped, the crawl goes on (Firecrawl's docs).
      if (a.ok && !threatVerdict(a.url, job.scrape.threatProtection)) links.push({ url: a.url, key: a.key, depth: a.depth, external: a.external });
    }
  }
  // A page whose formats need the model is stored as pending LLM work: the LLM window ends it
  // (and answers its changeTracking); otherwise changeTracking is answered here, and its version
  // recorded by the statement storing the page.
  const pendingLlm = needsLlm(job.scrape);
  const tracked = !u.discoveryOnly && !pendingLlm && changeTrackingOf(job.scrape) ? await trackCrawlPage(deps.db, job, u, page.document, { fetched: page.fetched }) : null;
  const document = u.discoveryOnly
    ? undefined
    : { body: tracked?.document ?? page.document, credits: page.creditsUsed, webhook: webhookFor(job, 'page'), pendingLlm, versions: tracked?.writes };
  let stored: boolean;
  const grouped = !('run' in via) && !pendingLlm && !tracked;
  if (page.cacheEntry && !grouped) await storeCacheEntry(deps.db, page.cacheEntry);
  if ('run' in via) {
    const r = await finishPageCountingLinks(deps.db, job.id, u.key, { links, document });
    if (r.linksAdded) via.run.addedLinks(r.linksAdded);
    stored = r.stored;
  } else if (grouped) {
    // The common page (no model step, no change tracking) goes with its batch's siblings in one statement.
    stored = await via.writer.store({ key: u.key, links, document: document && { body: document.body, credits: document.credits }, cache: page.cacheEntry });
  } else {
    stored = await finishPage(deps.db, job.id, u.key, { links, document });
  }
  if (!stored || !document) return 'skipped';
  if (pendingLlm) return 'pending';
  crawlPageStored(job.kind, page.creditsUsed);
  return 'stored';
}
