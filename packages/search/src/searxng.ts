import { WdsError } from '@wds/errors';
import { categoryOf, hostOf, onDomain, type ImageResult, type NewsResult, type SearchCategory, type SearchProvider, type SearchQuery, type SearchResults, type SearchSource, type WebResult } from './types';

/**
 * SearXNG through its JSON API (`GET /search?q=…&format=json`), the way Firecrawl's self-host
 * uses it (SEARXNG_ENDPOINT, SEARXNG_ENGINES, SEARXNG_CATEGORIES). Each source is one SearXNG
 * category: web → SEARXNG_CATEGORIES (default `general`), news → `news`, images → `images`;
 * the engines list applies to web. Requests are retried on network errors, 429 and 5xx with
 * backoff, each attempt bounded, all of them within the search's deadline. Engines SearXNG reports
 * as unresponsive become warnings; a 403 (the JSON format disabled) is an error naming the fix.
 */
export interface SearxngConfig {
  /** Base URL of the instance, e.g. http://searxng:8080. */
  endpoint: string;
  /** Comma-separated engines for web results (SEARXNG_ENGINES); empty = the instance's defaults. */
  engines?: string;
  /** Comma-separated categories for web results (SEARXNG_CATEGORIES); default `general`. */
  categories?: string;
  /** Longest one HTTP attempt may take. */
  attemptTimeoutMs?: number;
  /** Attempts after the first on a retryable failure. */
  retries?: number;
  /** Backoff before the first retry (doubled each time). */
  backoffMs?: number;
}

/** The JSON SearXNG answers with (the fields used here). */
interface SearxngAnswer {
  results?: Array<{
    url?: string;
    title?: string;
    content?: string;
    publishedDate?: string | null;
    img_src?: string;
    thumbnail_src?: string;
    resolution?: string;
    category?: string;
  }>;
  unresponsive_engines?: Array<[string, string] | string[]>;
}

/** The message a 403 gets: SearXNG serves JSON only when its settings enable it. */
export const SEARXNG_JSON_DISABLED =
  "SearXNG refused the request with 403 Forbidden: its JSON API is disabled. Enable it by adding 'json' to search.formats in SearXNG's settings.yml (search: formats: [html, json]).";

const TIME_RANGE: Record<string, string> = { h: 'day', d: 'day', w: 'week', m: 'month', y: 'year' };

/** SearXNG's `language` for a country (its locale list); countries not listed search in every language. */
const LOCALE_OF_COUNTRY: Record<string, string> = {
  US: 'en-US', GB: 'en-GB', AU: 'en-AU', CA: 'en-CA', IE: 'en-IE', IN: 'en-IN', NZ: 'en-NZ', DE: 'de-DE', AT: 'de-AT', CH: 'de-CH',
  FR: 'fr-FR', BE: 'fr-BE', ES: 'es-ES', MX: 'es-MX', AR: 'es-AR', IT: 'it-IT', PT: 'pt-PT', BR: 'pt-BR', NL: 'nl-NL', SE: 'sv-SE',
  NO: 'nb-NO', DK: 'da-DK', FI: 'fi-FI', PL: 'pl-PL', CZ: 'cs-CZ', RU: 'ru-RU', UA: 'uk-UA', TR: 'tr-TR', JP: 'ja-JP', KR: 'ko-KR',
  CN: 'zh-CN', TW: 'zh-TW', HK: 'zh-HK',
};

const list = (s?: string) => (s ?? '').split(',').map((x) => x.trim()).filter(Boolean);

export class SearxngProvider implements SearchProvider {
  readonly name = 'searxng';
  private readonly endpoint: string;

  constructor(private readonly cfg: SearxngConfig) {
    this.endpoint = cfg.endpoint.replace(/\/+$/, '');
  }

  async search(q: SearchQuery, signal: AbortSignal): Promise<SearchResults> {
    const warnings = new Set<string>();
    const runs = q.sources.map((s) => this.source(q, s, signal, warnings));
    const settled = await Promise.allSettled(runs);
    const failed = settled.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    // Every source failed: the request fails with the first reason (a 403's fix, a timeout…).
    if (failed.length === settled.length) throw failed[0]!.reason;
    const out: SearchResults = { warnings: [] };
    settled.forEach((r, i) => {
      const source = q.sources[i]!;
      if (r.status === 'fulfilled') Object.assign(out, { [source]: r.value });
      else {
        Object.assign(out, { [source]: [] });
        warnings.add(`SearXNG could not answer the ${source} source: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`);
      }
    });
    out.warnings = [...warnings];
    return out;
  }

  private async source(q: SearchQuery, source: SearchSource, signal: AbortSignal, warnings: Set<string>) {
    if (source === 'web') {
      // One query per category (each with its operator), merged in rank order; none = one plain query.
      const cats: (SearchCategory | null)[] = q.categories.length ? q.categories : [null];
      const lists = await Promise.all(cats.map((c) => this.collect(q, 'web', c, signal, warnings)));
      return interleave(lists, q.limit).map((r, i): WebResult => ({
        url: r.url,
        title: r.title,
        description: r.content,
        position: i + 1,
        ...(r.category ? { category: r.category } : {}),
      }));
    }
    const rows = await this.collect(q, source, null, signal, warnings);
    if (source === 'news') {
      return rows.slice(0, q.limit).map((r, i): NewsResult => ({
        url: r.url,
        title: r.title,
        snippet: r.content,
        ...(r.date ? { date: r.date } : {}),
        ...(r.image ? { imageUrl: r.image } : {}),
        position: i + 1,
      }));
    }
    return rows
      .filter((r) => r.image)
      .slice(0, q.limit)
      .map((r, i): ImageResult => ({
        url: r.url,
        title: r.title,
        imageUrl: r.image!,
        ...(r.width ? { imageWidth: r.width, imageHeight: r.height } : {}),
        position: i + 1,
      }));
  }

  /** Result pages of one SearXNG query until `limit` results pass the filters (at most 5 pages). */
  private async collect(q: SearchQuery, source: SearchSource, category: SearchCategory | null, signal: AbortSignal, warnings: Set<string>) {
    const out: Row[] = [];
    const seen = new Set<string>();
    for (let page = 1; page <= 5 && out.length < q.limit; page++) {
      const answer = await this.request(this.params(q, source, category, page), signal);
      for (const [engine, reason] of answer.unresponsive_engines ?? []) warnings.add(`SearXNG engine '${engine}' failed: ${reason ?? 'no reason given'}`);
      const results = answer.results ?? [];
      let fresh = 0;
      for (const r of results) {
        const row = toRow(r, category);
        if (!row || seen.has(row.url)) continue;
        seen.add(row.url);
        fresh++;
        if (keep(row, q, source, category)) out.push(row);
      }
      if (!fresh) break;
    }
    return out;
  }

  private params(q: SearchQuery, source: SearchSource, category: SearchCategory | null, page: number): URLSearchParams {
    let query = q.query;
    if (source === 'web') {
      if (category === 'github') query += ' site:github.com';
      if (category === 'pdf') query += ' filetype:pdf';
    }
    // One included domain narrows at the engines too; several (engines rarely take OR) are filtered here.
    if (q.includeDomains?.length === 1) query += ` site:${q.includeDomains[0]}`;
    for (const d of q.excludeDomains ?? []) query += ` -site:${d}`;
    const p = new URLSearchParams({ q: query, format: 'json', pageno: String(page) });
    if (source === 'web') {
      p.set('categories', list(this.cfg.categories).join(',') || 'general');
      const engines = list(this.cfg.engines);
      if (engines.length) p.set('engines', engines.join(','));
      const range = q.tbs?.range;
      if (range) p.set('time_range', TIME_RANGE[range]!);
    } else p.set('categories', source);
    if (q.safe !== undefined) p.set('safesearch', q.safe ? '1' : '0');
    const locale = q.country ? LOCALE_OF_COUNTRY[q.country.toUpperCase()] : undefined;
    if (locale) p.set('language', locale);
    return p;
  }

  /** One GET with retries; throws a WdsError the API renders (403 → the fix, deadline → 408, else 502). */
  private async request(params: URLSearchParams, signal: AbortSignal): Promise<SearxngAnswer> {
    const retries = this.cfg.retries ?? 2;
    let backoff = this.cfg.backoffMs ?? 250;
    let last = '';
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (signal.aborted) throw timedOut();
      let retryAfterMs = 0;
      try {
        const res = await fetch(`${this.endpoint}/search?${params}`, {
          headers: { accept: 'application/json' },
          signal: AbortSignal.any([signal, AbortSignal.timeout(this.cfg.attemptTimeoutMs ?? 15_000)]),
        });
        if (res.status === 403) throw new WdsError('BAD_GATEWAY', { message: SEARXNG_JSON_DISABLED, code: 'SEARCH_PROVIDER_MISCONFIGURED', retryable: false });
        if (res.ok) {
          const text = await res.text();
          try {
            return JSON.parse(text) as SearxngAnswer;
          } catch {
            throw new WdsError('BAD_GATEWAY', { message: `SearXNG answered with something other than JSON (${text.slice(0, 60).replace(/\s+/g, ' ')}…)`, code: 'SEARCH_PROVIDER_ERROR', retryable: false });
          }
        }
        await res.body?.cancel();
        last = `HTTP ${res.status}`;
        if (res.status !== 429 && res.status < 500) throw new WdsError('BAD_GATEWAY', { message: `SearXNG answered HTTP ${res.status}`, code: 'SEARCH_PROVIDER_ERROR', retryable: false });
        const ra = Number(res.headers.get('retry-after'));
        if (Number.isFinite(ra) && ra > 0) retryAfterMs = Math.min(ra * 1000, 10_000);
      } catch (e) {
        if (e instanceof WdsError) throw e;
        if (signal.aborted) throw timedOut();
        last = e instanceof Error && e.name === 'TimeoutError' ? 'no answer in time' : e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e);
      }
      if (attempt < retries) {
        await sleep(Math.max(backoff, retryAfterMs), signal);
        backoff *= 2;
      }
    }
    throw new WdsError('BAD_GATEWAY', { message: `SearXNG failed after ${retries + 1} attempts: ${last}`, code: 'SEARCH_PROVIDER_ERROR' });
  }
}

interface Row {
  url: string;
  title: string;
  content: string;
  date?: string;
  image?: string;
  width?: number;
  height?: number;
  category?: SearchCategory;
}

function toRow(r: NonNullable<SearxngAnswer['results']>[number], category: SearchCategory | null): Row | null {
  if (typeof r.url !== 'string' || !hostOf(r.url)) return null;
  const date = r.publishedDate && !Number.isNaN(Date.parse(r.publishedDate)) ? new Date(r.publishedDate).toISOString() : undefined;
  const size = /^\s*(\d+)\s*[x×]\s*(\d+)\s*$/.exec(r.resolution ?? '');
  return {
    url: r.url,
    title: typeof r.title === 'string' ? r.title : '',
    content: typeof r.content === 'string' ? r.content : '',
    date,
    image: typeof r.img_src === 'string' && r.img_src ? r.img_src : typeof r.thumbnail_src === 'string' && r.thumbnail_src ? r.thumbnail_src : undefined,
    width: size ? Number(size[1]) : undefined,
    height: size ? Number(size[2]) : undefined,
    category: category ?? undefined,
  };
}

/** Filters engines may not have applied: domains, the category's hosts, a custom date range. */
function keep(r: Row, q: SearchQuery, source: SearchSource, category: SearchCategory | null): boolean {
  const host = hostOf(r.url)!;
  if (q.includeDomains?.length && !q.includeDomains.some((d) => onDomain(host, d))) return false;
  if (q.excludeDomains?.some((d) => onDomain(host, d))) return false;
  if (category && categoryOf(r.url, [category]) !== category) return false;
  if (source === 'web' && q.tbs && r.date && !q.tbs.range) {
    const t = Date.parse(r.date);
    if ((q.tbs.since && t < q.tbs.since.getTime()) || (q.tbs.until && t > q.tbs.until.getTime())) return false;
  }
  return true;
}

/** Round-robin merge of ranked lists without repeating a URL. */
export function interleave<T extends { url: string }>(lists: T[][], limit: number): T[] {
  const out: T[] = [];
  const seen = new Set<string>();
  for (let i = 0; out.length < limit && lists.some((l) => i < l.length); i++) {
    for (const l of lists) {
      const r = l[i];
      if (r && !seen.has(r.url) && out.length < limit) (seen.add(r.url), out.push(r));
    }
  }
  return out;
}

const timedOut = () => new WdsError('REQUEST_TIMEOUT', { message: 'Request timed out: the search provider did not answer within the timeout', code: 'SEARCH_TIMEOUT' });

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
