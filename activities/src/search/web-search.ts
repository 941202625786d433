import { runSearch, type SearchProvider, type TimeFilter } from '@wds/search';

/**
 * Web search for work that runs on workers — the agent's `search` tool, extract's
 * `enableWebSearch` — through this interface; the worker wires the deployment's search
 * (packages/search: the own index of stored pages, SearXNG, or both, as WDS_SEARCH_PROVIDER
 * says), so they search exactly what POST /v2/search would.
 */
export interface SearchHit {
  url: string;
  title?: string;
  description?: string;
}

export interface WebSearchOptions {
  teamId: string;
  limit: number;
  country?: string;
  includeDomains?: string[];
  excludeDomains?: string[];
  /** Only results published (the own index: stored) within this window. */
  tbs?: TimeFilter;
}

export interface WebSearch {
  search(query: string, o: WebSearchOptions): Promise<SearchHit[]>;
}

/** Web results of the deployment's provider, within `timeoutMs` (a slow provider is news for the model or the job, never a stuck step). */
export function deploymentSearch(provider: SearchProvider, timeoutMs = 15_000): WebSearch {
  return {
    async search(query, o) {
      const r = await runSearch(
        provider,
        {
          query, limit: o.limit, sources: ['web'], categories: [], highlights: true, teamId: o.teamId,
          ...(o.country ? { country: o.country } : {}),
          ...(o.includeDomains?.length ? { includeDomains: o.includeDomains } : {}),
          ...(o.excludeDomains?.length ? { excludeDomains: o.excludeDomains } : {}),
          ...(o.tbs ? { tbs: o.tbs } : {}),
        },
        timeoutMs,
      );
      return (r.web ?? []).map((w) => ({ url: w.url, ...(w.title ? { title: w.title } : {}), ...(w.description ? { description: w.description } : {}) }));
    },
  };
}
