import { runSearch, type SearchProvider } from '@wds/search';

/**
 * The agent's `search` tool speaks to a search backend through this interface; the worker wires
 * the deployment's search (packages/search: the own index of stored pages, SearXNG, or both, as
 * WDS_SEARCH_PROVIDER says), so an agent searches exactly what POST /v2/search would.
 */
export interface SearchHit {
  url: string;
  title?: string;
  description?: string;
}

export interface AgentSearchProvider {
  search(query: string, o: { teamId: string; limit: number; country?: string }): Promise<SearchHit[]>;
}

/** Web results of the deployment's provider, within `timeoutMs` (a slow provider is the model's news, not a stuck step). */
export function deploymentSearch(provider: SearchProvider, timeoutMs = 15_000): AgentSearchProvider {
  return {
    async search(query, o) {
      const r = await runSearch(
        provider,
        { query, limit: o.limit, sources: ['web'], categories: [], highlights: true, teamId: o.teamId, ...(o.country ? { country: o.country } : {}) },
        timeoutMs,
      );
      return (r.web ?? []).map((w) => ({ url: w.url, ...(w.title ? { title: w.title } : {}), ...(w.description ? { description: w.description } : {}) }));
    },
  };
}
