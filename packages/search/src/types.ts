/**
 * One interface for every search provider (SearXNG, the own index, both): a query in, results
 * per source out. Providers never throw for a source that is merely unavailable or an engine
 * that failed: they answer what they have and say why in `warnings` (the response's `warning`).
 */

export const SEARCH_SOURCES = ['web', 'news', 'images'] as const;
export type SearchSource = (typeof SEARCH_SOURCES)[number];

export const SEARCH_CATEGORIES = ['github', 'research', 'pdf'] as const;
export type SearchCategory = (typeof SEARCH_CATEGORIES)[number];

/** A `tbs` value, parsed (see tbs.ts). Applies to web results only. */
export interface TimeFilter {
  since: Date | null;
  until: Date | null;
  sortByDate: boolean;
  /** The predefined range asked for (`qdr:w` → 'w'), for providers that take ranges rather than dates. */
  range: 'h' | 'd' | 'w' | 'm' | 'y' | null;
}

export interface SearchQuery {
  query: string;
  /** Results wanted per source. */
  limit: number;
  sources: SearchSource[];
  /** Narrow web results: hosts of the category (github, research) or PDFs. */
  categories: SearchCategory[];
  includeDomains?: string[];
  excludeDomains?: string[];
  tbs?: TimeFilter | null;
  /** Free-form place ("Berlin,Germany"); providers that cannot geo-target ignore it. */
  location?: string;
  /** ISO 3166-1 alpha-2. */
  country?: string;
  /** SafeSearch: filter explicit results (SearXNG `safesearch=1`); undefined = the provider's default. */
  safe?: boolean;
  /** Prefer the best-matching passage as a web result's description (Firecrawl's `highlights`, default true). */
  highlights: boolean;
  /** The team searching: the own index answers from its pages (unless the operator shares the index). */
  teamId: string;
}

export interface WebResult {
  url: string;
  title: string;
  description: string;
  position: number;
  category?: SearchCategory;
}

export interface NewsResult {
  url: string;
  title: string;
  snippet: string;
  date?: string;
  imageUrl?: string;
  position: number;
  category?: SearchCategory;
}

export interface ImageResult {
  url: string;
  title: string;
  imageUrl: string;
  imageWidth?: number;
  imageHeight?: number;
  position: number;
}

export interface SearchResults {
  web?: WebResult[];
  news?: NewsResult[];
  images?: ImageResult[];
  /** Why some results may be missing (a failing engine, a source a provider cannot serve). */
  warnings: string[];
}

export interface SearchProvider {
  /** `searxng`, `index`, … (logs and metrics). */
  readonly name: string;
  /** Answers the sources asked for; `signal` aborts at the request's deadline. */
  search(q: SearchQuery, signal: AbortSignal): Promise<SearchResults>;
}

/** Hosts of the `research` category (Firecrawl documents ~14 academic sites). */
export const RESEARCH_HOSTS = [
  'arxiv.org', 'pubmed.ncbi.nlm.nih.gov', 'ncbi.nlm.nih.gov', 'nature.com', 'science.org', 'ieee.org', 'sciencedirect.com',
  'springer.com', 'biorxiv.org', 'medrxiv.org', 'researchgate.net', 'semanticscholar.org', 'acm.org', 'plos.org',
];

export const CATEGORY_HOSTS: Record<Exclude<SearchCategory, 'pdf'>, string[]> = {
  github: ['github.com'],
  research: RESEARCH_HOSTS,
};

/** Lower-cased host without `www.`. */
export const hostOf = (url: string): string | null => {
  try {
    return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return null;
  }
};

/** `host` is `domain` or one of its subdomains. */
export const onDomain = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

export const isPdfUrl = (url: string) => /\.pdf($|[?#])/i.test(url);

/** The category a result belongs to, if one of `categories` (first match). */
export function categoryOf(url: string, categories: readonly SearchCategory[]): SearchCategory | undefined {
  const host = hostOf(url);
  for (const c of categories) {
    if (c === 'pdf' ? isPdfUrl(url) : host !== null && CATEGORY_HOSTS[c].some((d) => onDomain(host, d))) return c;
  }
  return undefined;
}
