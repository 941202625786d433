import robotsParser from 'robots-parser';

/** The crawler's robots.txt view of one origin. A missing or unreadable file allows everything. */
export interface RobotsRules {
  isAllowed(url: string): boolean;
  sitemaps: string[];
  /** Crawl-delay in seconds for our user agent, when the site sets one. */
  crawlDelay?: number;
}

export const DEFAULT_ROBOTS_AGENT = 'WDS';

export function parseRobots(origin: string, body: string | null, userAgent = DEFAULT_ROBOTS_AGENT): RobotsRules {
  if (body === null) return { isAllowed: () => true, sitemaps: [] };
  const robots = robotsParser(`${origin}/robots.txt`, body);
  return {
    // robots-parser answers undefined for URLs of another origin; those are not its business.
    isAllowed: (url) => robots.isAllowed(url, userAgent) !== false,
    sitemaps: robots.getSitemaps(),
    crawlDelay: robots.getCrawlDelay(userAgent),
  };
}
