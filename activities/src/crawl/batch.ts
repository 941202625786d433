import { Context } from '@temporalio/activity';
import { claimUrls, failPage, finishPage, jobStatus, type ClaimedUrl, type FrontierEntry } from '@wds/db';
import { toWdsError } from '@wds/errors';
import { crawlPageStored } from '@wds/metrics';
import { createScope, type CrawlScope } from '@wds/crawl';
import type { ProcessBatchInput, ProcessBatchResult } from '@wds/workflows/crawl';
import { scrapeOnePage, type PageDeps } from '../scrape/pipeline';
import { jobEvent } from '../webhooks/emit';
import type { createRobotsCache } from './discovery';
import { loadJobOptions, type LoadedJob } from './job-options';

/**
 * One batch of a crawl or batch scrape: lease up to `batchSize` URLs, scrape them with bounded
 * concurrency, store each document once, enqueue the links found, and return counts only.
 * Heartbeats every second double as the cancellation check (job row status), so a cancelled
 * job starts no new fetch and aborts the ones in flight.
 */
const HEARTBEAT_MS = 1_000;
/** How soon an idle slot asks again while sibling slots may still discover links. */
const CLAIM_RETRY_MS = 50;
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

export async function processBatch(
  deps: PageDeps,
  robotsFor: ReturnType<typeof createRobotsCache>,
  input: ProcessBatchInput,
): Promise<ProcessBatchResult> {
  const ctx = Context.current();
  const { jobId } = input;
  const owner = `${ctx.info.workflowExecution?.runId ?? ctx.info.workflowType}:${ctx.info.activityId}`;
  const job = await loadJobOptions(deps.db, jobId);
  if ((await jobStatus(deps.db, jobId)) !== 'scraping') return { claimed: 0, succeeded: 0, failed: 0, stopped: true };

  const leaseMs = Math.max(120_000, job.scrape.timeout * 3);
  const abort = new AbortController();
  const onCancel = () => abort.abort();
  ctx.cancellationSignal.addEventListener('abort', onCancel);
  let done = 0;
  const beat = setInterval(() => {
    ctx.heartbeat({ done });
    jobStatus(deps.db, jobId).then((s) => s !== 'scraping' && abort.abort(), () => {});
  }, HEARTBEAT_MS);

  const scope = scopeOf(job);
  const c = job.crawl;
  const followLinks = !!scope && c?.sitemap !== 'only';
  let succeeded = 0;
  let failed = 0;

  // URLs are claimed as slots free up, not all at once: links found by this batch's own pages
  // are picked up while it runs, so a deep, narrow site does not wait a batch round per level.
  let budget = input.batchSize;
  let claimed = 0;
  let busy = 0;
  const buffer: ClaimedUrl[] = [];
  let claiming: Promise<void> | null = null; // one claim query at a time per batch
  let firstClaim = true;
  async function take(): Promise<ClaimedUrl | null> {
    for (;;) {
      if (abort.signal.aborted) return null;
      if (buffer.length) return buffer.shift()!;
      if (budget <= 0) return null;
      if (!claiming) {
        claiming = claimUrls(deps.db, jobId, owner, Math.min(budget, input.concurrency), leaseMs, { retakeOwn: firstClaim })
          .then((got) => {
            budget -= got.length;
            claimed += got.length;
            buffer.push(...got);
          })
          .finally(() => (claiming = null));
        firstClaim = false;
      }
      await claiming;
      if (buffer.length) continue;
      // Nothing to claim: end unless a sibling slot is still scraping (it may discover more).
      if (busy === 0) return null;
      await new Promise((r) => setTimeout(r, CLAIM_RETRY_MS));
    }
  }

  async function one(u: ClaimedUrl) {
    if (c && !c.ignoreRobotsTxt) {
      const rules = await robotsFor(jobId, new URL(u.url).origin, c.robotsUserAgent, abort.signal);
      if (!rules.isAllowed(u.url)) {
        await failPage(deps.db, jobId, u.key, 'robots', 'URL blocked by robots.txt');
        return;
      }
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const page = await scrapeOnePage(deps, {
          url: u.url,
          options: job.scrape,
          scrapeId: u.pageId,
          signal: abort.signal,
          useCache: true,
          collectLinks: followLinks && !u.external,
          sleep: (ms) => ctx.sleep(ms),
        });
        const links: FrontierEntry[] = [];
        if (scope) {
          for (const l of page.links ?? []) {
            const a = scope.admit(l, { depth: u.depth, external: u.external });
            if (a.ok) links.push({ url: a.url, key: a.key, depth: a.depth, external: a.external });
          }
        }
        const document = u.discoveryOnly ? undefined : { body: page.document, credits: page.creditsUsed, event: jobEvent(job, 'page', [page.document]) ?? undefined };
        if ((await finishPage(deps.db, jobId, u.key, { links, document })) && document) {
          succeeded++;
          crawlPageStored(job.kind, page.creditsUsed);
        }
        return;
      } catch (e) {
        if (abort.signal.aborted) return; // cancelled: the job's end marks what is left
        const err = toWdsError(e);
        if (err.retryable && attempt < INLINE_RETRIES) {
          await ctx.sleep(300 * (attempt + 1));
          continue;
        }
        await failPage(deps.db, jobId, u.key, 'failed', err.message);
        failed++;
        return;
      }
    }
  }

  try {
    const slots = Array.from({ length: Math.max(1, input.concurrency) }, async () => {
      for (let u = await take(); u; u = await take()) {
        busy++;
        try {
          if (input.delayMs > 0 && done > 0) await ctx.sleep(input.delayMs).catch(() => {});
          if (!abort.signal.aborted) await one(u);
        } finally {
          busy--;
        }
        done++;
      }
    });
    await Promise.all(slots);
  } finally {
    clearInterval(beat);
    ctx.cancellationSignal.removeEventListener('abort', onCancel);
  }
  return { claimed, succeeded, failed, stopped: abort.signal.aborted };
}
