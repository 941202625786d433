import { pageKeyOf, siteOfKey } from '@wds/changes';
import { changeTrackingOf } from '@wds/contracts';
import { createScope } from '@wds/crawl';
import { enqueueRememberedUrls, knownSitePages, type Db } from '@wds/db';
import { loadCrawlOptions } from '../crawl/job-options';

/** Pages a crawl takes from memory at most (its page limit still applies when they are claimed). */
const MAX_REMEMBERED = 10_000;

/**
 * A crawl with change tracking, once its linked frontier is exhausted: the site's pages the team
 * tracks under the same tag (page_versions) that no page of this crawl linked to are added to the
 * frontier as `hidden` — fetched like any page, so one that now answers 404/410 is reported
 * `removed`, one still there `hidden`. Only pages in the crawl's scope (child paths, include/exclude
 * rules, depth); nothing for crawls without the format or under zero data retention (no URLs kept).
 * Idempotent: a second call finds them in the frontier and adds nothing. Returns how many were added.
 */
export async function rememberSitePages(db: Db, jobId: string): Promise<number> {
  const job = await loadCrawlOptions(db, jobId);
  if (!job?.url || !job.crawl || job.zeroDataRetention) return 0;
  const ct = changeTrackingOf(job.scrape);
  if (!ct) return 0;
  const known = await knownSitePages(db, { teamId: job.teamId, tag: ct.tag ?? '', site: siteOfKey(pageKeyOf(job.url)), limit: MAX_REMEMBERED });
  if (!known.length) return 0;
  const scope = createScope(job.url, job.crawl);
  const entries = known.flatMap((k) => {
    const a = scope.admit(k.url, { depth: 0, external: false });
    return a.ok && !a.external ? [{ url: a.url, key: a.key }] : [];
  });
  return enqueueRememberedUrls(db, jobId, entries);
}
