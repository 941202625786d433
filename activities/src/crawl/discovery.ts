import { loadRobots, storeRobots, type Db } from '@wds/db';
import { parseRobots, parseSitemap, DEFAULT_ROBOTS_AGENT, type RobotsRules } from '@wds/crawl';
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
const MAX_SITEMAP_FILES = 50;

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

/** robots.txt body of an origin: 4xx, 5xx or unreachable all read as "no rules" (null). */
export async function fetchRobotsBody(deps: DiscoveryDeps, origin: string, signal?: AbortSignal, userAgent?: string): Promise<string | null> {
  const r = await fetchText(deps, `${origin}/robots.txt`, signal, userAgent);
  return r && r.status >= 200 && r.status < 300 ? r.body.toString('utf8') : null;
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

/** Page URLs from the site's sitemaps (robots.txt Sitemap lines, else /sitemap.xml), following indexes. */
export async function collectSitemapUrls(deps: DiscoveryDeps, origin: string, fromRobots: string[], maxUrls: number, signal?: AbortSignal): Promise<string[]> {
  const queue = fromRobots.length ? [...fromRobots] : [`${origin}/sitemap.xml`];
  const seenFiles = new Set<string>();
  const urls = new Set<string>();
  while (queue.length && seenFiles.size < MAX_SITEMAP_FILES && urls.size < maxUrls) {
    const file = queue.shift()!;
    if (seenFiles.has(file)) continue;
    seenFiles.add(file);
    const r = await fetchText(deps, file, signal);
    if (!r || r.status >= 400) continue;
    let parsed;
    try {
      parsed = parseSitemap(r.body);
    } catch {
      continue; // a corrupt gzip sitemap is skipped, not fatal
    }
    queue.push(...parsed.sitemaps);
    for (const u of parsed.urls) {
      if (urls.size >= maxUrls) break;
      urls.add(u);
    }
  }
  return [...urls];
}
