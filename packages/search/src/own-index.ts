import { searchIndex, type Db, type IndexHit } from '@wds/db';
import { WdsError } from '@wds/errors';
import { CATEGORY_HOSTS, categoryOf, type ImageResult, type NewsResult, type SearchProvider, type SearchQuery, type SearchResults, type SearchSource, type WebResult } from './types';

/**
 * The service's own index: every page this deployment stored (scrapes, crawls, batches), searched
 * in Postgres (packages/db/src/search.ts). web = every page, news = pages with a publication time,
 * images = pages with an og:image. A team searches its own pages unless the operator shares the
 * index (`shared`): then also other teams' pages, except those fetched with a team's own headers,
 * browser profile or actions. Country and location do not apply (pages carry no place).
 */
export class OwnIndexProvider implements SearchProvider {
  readonly name = 'index';

  constructor(private readonly db: Db, private readonly opts: { shared: boolean }) {}

  async search(q: SearchQuery, signal: AbortSignal): Promise<SearchResults> {
    const out: SearchResults = { warnings: [] };
    // Sources one after the other: each is one query on the pool, and the deadline is checked between them.
    for (const source of q.sources) {
      if (signal.aborted) throw new WdsError('REQUEST_TIMEOUT', { message: 'Request timed out: the search index did not answer within the timeout', code: 'SEARCH_TIMEOUT' });
      const hits = await this.query(q, source);
      if (source === 'web') out.web = hits.map((h, i) => web(h, i, q));
      else if (source === 'news') out.news = hits.map((h, i) => news(h, i, q));
      else out.images = hits.map((h, i): ImageResult => ({ url: h.url, title: h.title, imageUrl: h.imageUrl!, position: i + 1 }));
    }
    return out;
  }

  private query(q: SearchQuery, source: SearchSource): Promise<IndexHit[]> {
    const cats = source === 'web' && q.categories.length ? q.categories : null;
    const tbs = source === 'web' ? q.tbs : null;
    return searchIndex(this.db, {
      query: q.query,
      teamId: q.teamId,
      shared: this.opts.shared,
      limit: q.limit,
      kind: source,
      includeHosts: q.includeDomains,
      excludeHosts: q.excludeDomains,
      categories: cats ? { hosts: cats.flatMap((c) => (c === 'pdf' ? [] : CATEGORY_HOSTS[c])), pdf: cats.includes('pdf') } : null,
      since: tbs?.since ?? null,
      until: tbs?.until ?? null,
      sortByDate: tbs?.sortByDate ?? false,
    });
  }
}

/** With highlights (the default) the matching passage describes the result, else the page's own description. */
const describe = (h: IndexHit, q: SearchQuery) => (q.highlights ? h.snippet || h.description : h.description || h.snippet);

function web(h: IndexHit, i: number, q: SearchQuery): WebResult {
  const category = categoryOf(h.url, q.categories);
  return { url: h.url, title: h.title, description: describe(h, q), position: i + 1, ...(category ? { category } : {}) };
}

function news(h: IndexHit, i: number, q: SearchQuery): NewsResult {
  return {
    url: h.url,
    title: h.title,
    snippet: describe(h, q),
    ...(h.publishedAt ? { date: h.publishedAt.toISOString() } : {}),
    ...(h.imageUrl ? { imageUrl: h.imageUrl } : {}),
    position: i + 1,
  };
}
