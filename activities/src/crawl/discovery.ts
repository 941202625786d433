import { loadRobots, storeRobots, type Db } from '@wds/db';
import { parseRobots, parseSitemapOnThread, DEFAULT_ROBOTS_AGENT, MAX_ROBOTS_CHARS, SITEMAP_LIMITS, type RobotsRules } from '@wds/crawl';
import { fetchPage } from '@wds/fetch';

/**
 * robots.txt and sitemaps, fetched through the same SSRF-guarded fetcher as pages. Shared by
 * crawls (seeding and per-origin robots checks) and map.
 */
export interface DiscoveryDeps {
  db: Db;
  allowPrivateNetwork: boolean;
  maxBodyBytes: number;
}

const ROBOTS_TIMEOUT_MS = 10_000;
/** Sitemap files read per collection (indexes included). */
const MAX_SITEMAP_FILES = 50;
/**
 * Levels of sitemap index followed: an index listed in robots.txt (0) may point at indexes (1),
 * which may point at indexes (2) whose children are read but not followed further. The protocol
 * allows one level; real sites nest a little; a chain of indexes is not followed for ever.
 */
const MAX_SITEMAP_DEPTH = 2;
/**
 * Time for one collection, fetching and parsing all its files (each file also has its own
 * parsing budget, SITEMAP_LIMITS.maxMs): a site of endless slow or hostile sitemaps delays a
 * crawl's start by this much at most. A well-formed 50,000-URL file parses in about 0.5 s.
 */
const SITEMAP_COLLECTION_BUDGET_MS = 60_000;

async function fetchText(deps: DiscoveryDeps, url: string, signal?: AbortSignal, userAgent?: string): Promise<{ status: number; body: Buffer } | null> {
  try {
    const page = await fetchPage({
      url,
      timeoutMs: ROBOTS_TIMEOUT_MS,
      skipTlsVerification: true,
      allowPrivateNetwork: deps.allowPrivateNetwork,
      maxBodyBytes: Math.min(deps.maxBodyBytes, 50 * 1024 * 1024),
      userAgent,
      signal,
    });
    return { status: page.statusCode, body: page.body };
  } catch {
    return null;
  }
}

/**
 * robots.txt body of an origin: 4xx, 5xx or unreachable all read as "no rules" (null). Only
 * what parseRobots reads (500 KiB) is kept: the body is stored per job and origin.
 */
export async function fetchRobotsBody(deps: DiscoveryDeps, origin: string, signal?: AbortSignal, userAgent?: string): Promise<string | null> {
  const r = await fetchText(deps, `${origin}/robots.txt`, signal, userAgent);
  return r && r.status >= 200 && r.status < 300 ? r.body.subarray(0, MAX_ROBOTS_CHARS * 4).toString('utf8').slice(0, MAX_ROBOTS_CHARS) : null;
}

/** Robots rules of an origin for a job: fetched once per job and origin, kept in Postgres and in memory. */
export function createRobotsCache(deps: DiscoveryDeps) {
  const memory = new Map<string, RobotsRules>();
  return async function robotsFor(jobId: string, origin: string, agent: string | null | undefined, signal?: AbortSignal): Promise<RobotsRules> {
    const k = `${jobId} ${origin}`;
    const cached = memory.get(k);
    if (cached) return cached;
    let stored = await loadRobots(deps.db, jobId, origin);
    if (!stored) {
      const body = await fetchRobotsBody(deps, origin, signal, agent ?? undefined);
      await storeRobots(deps.db, jobId, origin, body);
      stored = { body };
    }
    const rules = parseRobots(origin, stored.body, agent ?? DEFAULT_ROBOTS_AGENT);
    if (memory.size > 2_000) memory.delete(memory.keys().next().value!);
    memory.set(k, rules);
    return rules;
  };
}

/**
 * Page URLs from the site's sitemaps (robots.txt Sitemap lines, else /sitemap.xml), following
 * indexes up to MAX_SITEMAP_DEPTH. Files are parsed on a thread (`parseSitemapOnThread`) within
 * the per-file caps (SITEMAP_LIMITS) and the collection's time budget; an unreadable file is skipped.
 */
export async function collectSitemapUrls(deps: DiscoveryDeps, origin: string, fromRobots: string[], maxUrls: number, signal?: AbortSignal): Promise<string[]> {
  const queue = (fromRobots.length ? fromRobots : [`${origin}/sitemap.xml`]).map((url) => ({ url, depth: 0 }));
  const seenFiles = new Set<string>();
  const urls = new Set<string>();
  const budgetEnds = Date.now() + SITEMAP_COLLECTION_BUDGET_MS;
  while (queue.length && seenFiles.size < MAX_SITEMAP_FILES && urls.size < maxUrls && Date.now() < budgetEnds) {
    const file = queue.shift()!;
    if (seenFiles.has(file.url)) continue;
    seenFiles.add(file.url);
    const r = await fetchText(deps, file.url, signal);
    if (!r || r.status >= 400) continue;
    let parsed;
    try {
      parsed = await parseSitemapOnThread(r.body, {
        maxUrls: Math.min(SITEMAP_LIMITS.maxUrls, maxUrls - urls.size),
        maxMs: Math.min(SITEMAP_LIMITS.maxMs, Math.max(1, budgetEnds - Date.now())),
      });
    } catch {
      continue; // a file the parser gave up on (corrupt, too big, too slow) is skipped, not fatal
    }
    if (file.depth < MAX_SITEMAP_DEPTH) queue.push(...parsed.sitemaps.map((url) => ({ url, depth: file.depth + 1 })));
    for (const u of parsed.urls) {
      if (urls.size >= maxUrls) break;
      urls.add(u);
    }
  }
  return [...urls];
}
