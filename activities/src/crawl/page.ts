import { needsLlm } from '@wds/contracts';
import { failPage, finishPage, type ClaimedUrl, type FrontierEntry } from '@wds/db';
import { toWdsError } from '@wds/errors';
import { crawlPageStored } from '@wds/metrics';
import { createScope, type CrawlScope } from '@wds/crawl';
import type { BatchRun, PageHandler, PageOutcome } from '../frontier/batch-runner';
import { scrapeOnePage, type PageDeps } from '../scrape/pipeline';
import { webhookFor } from '../webhooks/emit';
import type { createRobotsCache } from './discovery';
import type { LoadedJob } from './job-options';
import { hideUrlsFromLogs } from '../log-privacy';

/** Retries of a page inside its batch for transient failures, before it is recorded as failed. */
const INLINE_RETRIES = 2;

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

/**
 * The page handler of crawls and batch scrapes: robots check, scrape (cache allowed), then the
 * document, its credits, its page event (with its webhook delivery) and the links in scope are
 * stored in one statement, idempotent per (job, URL key), so a retried batch never stores a
 * page twice. When the scrape options ask for model-made formats, the document is stored as
 * pending LLM work instead (no credits, no event yet): an LLM batch on wds-llm completes it
 * (../llm/crawl-pages.ts), so no model call ever runs in the fetch queue.
 */
export function crawlPageHandler(deps: PageDeps, robotsFor: ReturnType<typeof createRobotsCache>, job: LoadedJob): PageHandler {
  const scope = scopeOf(job);
  const followLinks = !!scope && job.crawl?.sitemap !== 'only';
  const handle: PageHandler = async (u, run) => {
    if (!(await robotsAllow(job, u, robotsFor, run.signal))) {
      await failPage(deps.db, job.id, u.key, 'robots', 'URL blocked by robots.txt');
      return 'skipped';
    }
    for (let attempt = 0; ; attempt++) {
      try {
        return await scrapeAndStore(deps, job, scope, u, run, followLinks && !u.external);
      } catch (e) {
        if (run.signal.aborted) return 'skipped'; // cancelled: the job's end marks what is left
        const err = toWdsError(e);
        if (err.retryable && attempt < INLINE_RETRIES) {
          await run.sleep(300 * (attempt + 1));
          continue;
        }
        await failPage(deps.db, job.id, u.key, 'failed', err.message);
        return 'failed';
      }
    }
  };
  if (!job.scrape.zeroDataRetention) return handle;
  // Zero data retention: the page's URL stays out of log lines and stored failures.
  return async (u, run) => {
    const shown = hideUrlsFromLogs([u.url]);
    try {
      return await handle(u, run);
    } finally {
      shown();
    }
  };
}

async function robotsAllow(job: LoadedJob, u: ClaimedUrl, robotsFor: ReturnType<typeof createRobotsCache>, signal: AbortSignal): Promise<boolean> {
  const c = job.crawl;
  if (!c || c.ignoreRobotsTxt) return true;
  const rules = await robotsFor(job.id, new URL(u.url).origin, c.robotsUserAgent, signal);
  return rules.isAllowed(u.url);
}

async function scrapeAndStore(deps: PageDeps, job: LoadedJob, scope: CrawlScope | null, u: ClaimedUrl, run: BatchRun, collectLinks: boolean): Promise<PageOutcome> {
  const page = await scrapeOnePage(deps, { url: u.url, options: job.scrape, scrapeId: u.pageId, signal: run.signal, useCache: true, collectLinks, sleep: run.sleep });
  const links: FrontierEntry[] = [];
  if (scope) {
    for (const l of page.links ?? []) {
      const a = scope.admit(l, { depth: u.depth, external: u.external });
      if (a.ok) links.push({ url: a.url, key: a.key, depth: a.depth, external: a.external });
    }
  }
  // A page whose formats need the model is stored as pending LLM work: the LLM window ends it.
  const pendingLlm = needsLlm(job.scrape);
  const document = u.discoveryOnly ? undefined : { body: page.document, credits: page.creditsUsed, webhook: webhookFor(job, 'page'), pendingLlm };
  const stored = await finishPage(deps.db, job.id, u.key, { links, document });
  if (!stored || !document) return 'skipped';
  if (pendingLlm) return 'pending';
  crawlPageStored(job.kind, page.creditsUsed);
  return 'stored';
}
