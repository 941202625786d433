import { Context } from '@temporalio/activity';
import type { MapRequest } from '@wds/contracts';
import { cachedUrlsOfHost, chargeCredits, completeMapJob, loadMapJob, searchSitePages, type IndexReader } from '@wds/db';
import { WdsError } from '@wds/errors';
import { baseDomain, canonicalCrawlUrl, crawlUrlKey, parseRobots } from '@wds/crawl';
import { fetchPage, decodeBody } from '@wds/fetch';
import { transformHtmlAsync } from '@wds/transform';
import type { JobRef } from '@wds/workflows/common';
import { collectSitemapUrls, fetchRobotsBody, type DiscoveryDeps } from '../crawl/discovery';
import { asActivity } from '../failures';
import type { MapActivities } from '@wds/workflows/map';

/**
 * Map: a site's URLs from its sitemaps, the links of its start page, and pages of the site the
 * service has already seen (the page cache), filtered and ranked by `search`. One request,
 * no crawl.
 */
export interface MapDeps extends DiscoveryDeps {
  /** `search` also ranks other teams' shareable indexed pages (WDS_SEARCH_SHARED_INDEX), not only the requesting team's. */
  sharedSearchIndex?: boolean;
}

export function createMapActivities(deps: MapDeps): MapActivities {
  return {
    mapSite: ({ jobId }: JobRef) =>
      asActivity(async () => {
        const job = await loadMapJob(deps.db, jobId);
        if (!job) throw new WdsError('NOT_FOUND', { message: `Map job ${jobId} not found` });
        const o = job.options as MapRequest;
        const links = await mapSite(deps, o, Context.current().cancellationSignal, { teamId: job.teamId, shared: !!deps.sharedSearchIndex });
        await completeMapJob(deps.db, jobId, links);
        // One credit per call, as Firecrawl bills /map; the key makes a retried activity bill once.
        await chargeCredits(deps.db, { teamId: job.teamId, jobId, kind: 'map', amount: MAP_CREDITS, key: `map:${jobId}` });
        return { count: links.length };
      }),
  };
}

/** What a map costs, whatever it finds. */
export const MAP_CREDITS = 1;

const LINKS_ONLY = { links: true, markdown: false, html: false, images: false };

/**
 * `index`: whose pages in the own search index rank a `search` (the team's, and with `shared`
 * what other teams' pages a shared index may show; undefined = no index ranking, only URL matching).
 */
export async function mapSite(deps: DiscoveryDeps, o: MapRequest, signal?: AbortSignal, index?: IndexReader): Promise<{ url: string; title?: string }[]> {
  const start = new URL(o.url);
  const startHost = start.hostname.toLowerCase().replace(/^www\./, '');
  const site = baseDomain(startHost);
  const inScope = (u: URL) => {
    const h = u.hostname.toLowerCase().replace(/^www\./, '');
    return h === startHost || (o.includeSubdomains && (h === site || h.endsWith(`.${site}`)));
  };

  const found: string[] = [o.url];
  let title: string | undefined;
  if (o.sitemap !== 'skip') {
    const robots = parseRobots(start.origin, await fetchRobotsBody(deps, start.origin, signal));
    found.push(...(await collectSitemapUrls(deps, start.origin, robots.sitemaps, Math.min(o.limit * 4, 400_000), signal)));
  }
  if (o.sitemap !== 'only') {
    try {
      const timeoutMs = o.timeout ?? 30_000;
      const page = await fetchPage({ url: o.url, timeoutMs, skipTlsVerification: true, allowPrivateNetwork: deps.allowPrivateNetwork, maxBodyBytes: deps.maxBodyBytes, signal });
      const html = decodeBody(page.body, page.headers['content-type']).text;
      // Parsed on a transform thread (when the process has them), under the request's timeout.
      const t = await transformHtmlAsync(html, page.finalUrl, { onlyMainContent: false, removeBase64Images: false, want: LINKS_ONLY }, timeoutMs);
      found.push(...(t.links ?? []));
      title = typeof t.metadata.title === 'string' ? t.metadata.title : undefined;
    } catch (e) {
      if (e instanceof WdsError && e.kind === 'URL_BLOCKED') throw e;
      // An unreachable start page still leaves the sitemap's URLs.
    }
    const origins = [start.origin, `${start.protocol}//www.${startHost}`, `${start.protocol}//${startHost}`];
    found.push(...(await cachedUrlsOfHost(deps.db, [...new Set(origins)], o.limit)));
  }

  const seen = new Set<string>();
  const links: string[] = [];
  for (const raw of found) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      continue;
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !inScope(u)) continue;
    const url = canonicalCrawlUrl(u, { ignoreQueryParameters: o.ignoreQueryParameters });
    const key = crawlUrlKey(url, { ignoreQueryParameters: o.ignoreQueryParameters });
    if (seen.has(key)) continue;
    seen.add(key);
    links.push(url);
  }
  let ranked = o.search ? rankBySearch(links, o.search) : links;
  const titles = new Map<string, string>();
  if (o.search && index) {
    // Pages of the site whose text matches, best first, ahead of URL matches: the own index knows
    // what the pages say, not only what their URLs spell (and adds indexed pages discovery missed).
    const hits = await searchSitePages(deps.db, {
      ...index,
      hosts: [startHost],
      subdomainsOf: o.includeSubdomains ? site : null,
      query: o.search,
      limit: Math.min(o.limit, 1_000),
    }).catch(() => []);
    const keyOf = (url: string) => crawlUrlKey(url, { ignoreQueryParameters: o.ignoreQueryParameters });
    const first: string[] = [];
    const keys = new Set<string>();
    for (const h of hits) {
      let u: URL;
      try {
        u = new URL(h.url);
      } catch {
        continue;
      }
      if (!inScope(u)) continue;
      const url = canonicalCrawlUrl(u, { ignoreQueryParameters: o.ignoreQueryParameters });
      const key = keyOf(url);
      if (keys.has(key)) continue;
      keys.add(key);
      first.push(url);
      if (h.title) titles.set(key, h.title);
    }
    ranked = [...first, ...ranked.filter((u) => !keys.has(keyOf(u)))];
  }
  return ranked.slice(0, o.limit).map((url) => {
    const t = url === o.url && title ? title : titles.get(crawlUrlKey(url, { ignoreQueryParameters: o.ignoreQueryParameters }));
    return t ? { url, title: t } : { url };
  });
}

/** URLs containing more of the search terms come first; the rest keep their order after them. */
export function rankBySearch(urls: string[], search: string): string[] {
  const terms = search.toLowerCase().split(/\s+/).filter(Boolean);
  const scored = urls.map((url, i) => {
    const s = decodeURIComponent(url).toLowerCase();
    return { url, i, score: terms.reduce((n, t) => n + (s.includes(t) ? 1 : 0), 0) };
  });
  return scored.sort((a, b) => b.score - a.score || a.i - b.i).map((x) => x.url);
}
