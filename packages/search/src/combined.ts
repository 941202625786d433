import { categoryOf, type SearchProvider, type SearchQuery, type SearchResults, type SearchSource } from './types';

/**
 * Several providers answering together (WDS_SEARCH_PROVIDER=both: the own index first, then
 * SearXNG): per source, results in provider order without repeating a URL, up to the limit,
 * positions renumbered. A provider that fails becomes a warning as long as another answered.
 */
export class CombinedProvider implements SearchProvider {
  readonly name: string;

  constructor(private readonly providers: SearchProvider[]) {
    this.name = providers.map((p) => p.name).join('+');
  }

  async search(q: SearchQuery, signal: AbortSignal): Promise<SearchResults> {
    const settled = await Promise.allSettled(this.providers.map((p) => p.search(q, signal)));
    const ok = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    if (!ok.length) throw (settled[0] as PromiseRejectedResult).reason;
    const warnings = ok.flatMap((r) => r.warnings);
    settled.forEach((r, i) => {
      if (r.status === 'rejected') warnings.push(`Search provider '${this.providers[i]!.name}' failed: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`);
    });
    const out: SearchResults = { warnings };
    for (const source of q.sources) merge(out, ok, source, q);
    return out;
  }
}

function merge(out: SearchResults, answers: SearchResults[], source: SearchSource, q: SearchQuery) {
  const seen = new Set<string>();
  const rows: { url: string; position: number }[] = [];
  for (const a of answers) {
    for (const r of (a[source] ?? []) as { url: string; position: number }[]) {
      const key = r.url.replace(/^https?:\/\/(www\.)?/, '').replace(/\/+$/, '');
      if (seen.has(key) || rows.length >= q.limit) continue;
      seen.add(key);
      rows.push({ ...r, position: rows.length + 1 });
    }
  }
  if (source === 'web') for (const r of rows as { url: string; category?: string }[]) if (!r.category) Object.assign(r, categoryOf(r.url, q.categories) ? { category: categoryOf(r.url, q.categories) } : {});
  Object.assign(out, { [source]: rows });
}
