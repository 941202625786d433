import { request } from 'undici';

/**
 * The agent's `search` tool speaks to a search backend through this interface. The worker wires
 * the deployment's backend (packages/search when it is on main; until then a SearXNG instance at
 * SEARXNG_ENDPOINT, Firecrawl's self-host variable). No backend: the tool is not offered.
 */
export interface SearchHit {
  url: string;
  title?: string;
  description?: string;
}

export interface AgentSearchProvider {
  search(query: string, o: { limit: number; signal?: AbortSignal; lang?: string; country?: string }): Promise<SearchHit[]>;
}

/** SearXNG's JSON API (`GET /search?q=…&format=json`): `results[]` with url, title, content. */
export function searxngSearch(endpoint: string, timeoutMs = 15_000): AgentSearchProvider {
  const base = endpoint.replace(/\/+$/, '');
  return {
    async search(query, o) {
      const u = new URL(`${base}/search`);
      u.searchParams.set('q', query);
      u.searchParams.set('format', 'json');
      if (o.lang) u.searchParams.set('language', o.lang);
      const signal = o.signal ? AbortSignal.any([o.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
      const res = await request(u, { method: 'GET', headers: { accept: 'application/json' }, signal });
      if (res.statusCode >= 400) {
        await res.body.dump().catch(() => {});
        throw new Error(`the search backend answered ${res.statusCode}`);
      }
      const body = (await res.body.json()) as { results?: { url?: unknown; title?: unknown; content?: unknown }[] };
      const hits: SearchHit[] = [];
      for (const r of body.results ?? []) {
        if (typeof r.url !== 'string') continue;
        hits.push({ url: r.url, ...(typeof r.title === 'string' ? { title: r.title } : {}), ...(typeof r.content === 'string' ? { description: r.content } : {}) });
        if (hits.length >= o.limit) break;
      }
      return hits;
    },
  };
}
