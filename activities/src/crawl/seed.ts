import { enqueueUrls, type FrontierEntry } from '@wds/db';
import { createScope, crawlUrlKey, canonicalCrawlUrl } from '@wds/crawl';
import { collectSitemapUrls, createRobotsCache, type DiscoveryDeps } from './discovery';
import { loadJobOptions, type LoadedJob } from './job-options';
import { hideUrlsFromLogs } from '../log-privacy';
import { recordJobEvent } from '../webhooks/emit';

/**
 * A crawl's first step: the start URL and (per `sitemap`) the sitemap's URLs enter the
 * frontier at depth 0. A start URL outside includePaths is still fetched, for its links only.
 */
export async function seedJob(deps: DiscoveryDeps, robotsFor: ReturnType<typeof createRobotsCache>, jobId: string, signal?: AbortSignal): Promise<number> {
  const job = await loadJobOptions(deps.db, jobId);
  if (job.kind === 'batch' || !job.crawl || !job.url) {
    await recordJobEvent(deps.db, job, 'started');
    return 0;
  }
  const shown = job.scrape.zeroDataRetention ? hideUrlsFromLogs([job.url]) : () => {};
  try {
    return await seedCrawl(deps, robotsFor, { ...job, crawl: job.crawl, url: job.url }, signal);
  } finally {
    shown();
  }
}

type CrawlJob = LoadedJob & { crawl: NonNullable<LoadedJob['crawl']>; url: string };

async function seedCrawl(deps: DiscoveryDeps, robotsFor: ReturnType<typeof createRobotsCache>, job: CrawlJob, signal?: AbortSignal): Promise<number> {
  const c = job.crawl;
  const scope = createScope(job.url, c);
  const start = new URL(job.url);
  const entries: FrontierEntry[] = [
    {
      url: canonicalCrawlUrl(start, c),
      key: crawlUrlKey(start, c),
      depth: 0,
      external: false,
      discoveryOnly: scope.passesPathRules(start) !== null,
    },
  ];
  if (c.sitemap !== 'skip') {
    const robots = await robotsFor(job.id, start.origin, c.robotsUserAgent, signal);
    const fromSitemap = await collectSitemapUrls(deps, start.origin, robots.sitemaps, Math.min(c.limit * 2, 200_000), signal);
    for (const u of fromSitemap) {
      // Sitemap URLs sit at depth 0, like the start URL (Firecrawl's maxDiscoveryDepth rule).
      const a = scope.admit(u, { depth: -1, external: false });
      if (a.ok) entries.push({ url: a.url, key: a.key, depth: 0, external: a.external });
    }
  }
  const n = await enqueueUrls(deps.db, job.id, entries);
  await recordJobEvent(deps.db, job, 'started');
  return n;
}
