/** Permission scopes an API key may be limited to; a key with no scopes may use everything. */
export const SCOPES = ['scrape', 'crawl', 'map', 'search', 'extract', 'agent', 'monitor', 'parse', 'team'] as const;
export type Scope = (typeof SCOPES)[number];
